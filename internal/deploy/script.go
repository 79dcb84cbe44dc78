// Package deploy reads a shell deployment script — `export` lines, then
// `vllm serve MODEL --flag value ...` with line continuations, quotes and
// JSON-valued flags — into facts, and applies edits to it (remove a flag,
// unset an env var, merge keys into a JSON-valued flag) so a finding's fix
// can be shown as a unified diff against the user's own script.
//
// The script is parsed by a real shell parser (mvdan.cc/sh/v3/syntax) and
// never run: a word whose value only running it gives (a command
// substitution, arithmetic, an expansion other than $NAME and
// ${NAME:-default}) makes the facts it feeds unknown, with a warning.
package deploy

import (
	"fmt"
	"strings"

	"github.com/npuprof/npuprof/internal/infile"
	"github.com/npuprof/npuprof/internal/redact"
)

// Script is a parsed deployment script.
type Script struct {
	Path string
	// Lines are the physical lines, without their newline.
	Lines []string
	// TrailingNewline: the file ends with a newline.
	TrailingNewline bool
	// CRLF: the file's lines end in "\r\n" (kept when the text is written
	// back, so a diff against the script applies to the file on disk).
	CRLF bool
	// Env holds the exported or assigned variables the chosen command
	// (Serve) runs with: those assigned before it (the last assignment
	// wins). Without a command, every assignment of the script.
	Env map[string]*Assign
	// Serve is the chosen `vllm serve` command: the last one of the script
	// unless Select picked another; nil when the script has none.
	Serve *Command
	// Serves are all the `vllm serve` commands, in file order. A script
	// may start several (prefill and decode, one per node); Facts and the
	// edits read and change Serve only.
	Serves []*Command
	// Selected: Serve was picked with Select, not by default.
	Selected bool

	// text is the file with "\n" line endings, lineStart the offset of
	// each line in it.
	text      string
	lineStart []int
	// outer are the first and last lines of the command whose quoted word
	// is being read as a command (bash -c "...")
	outer [2]int
	// run is the `run` word of a `docker run`/`podman run` (nil when
	// none): variables the container needs are added after it as -e.
	run *token
}

// Assign is one `export NAME=VALUE` (or `NAME=VALUE`).
type Assign struct {
	Name, Value string
	Line        int // 1-based physical line
	// Export: written with `export`; Alone: the only assignment on its line.
	Export, Alone bool
	// raw is the assignment as written (NAME=VALUE, or the container
	// option -e NAME=VALUE) and col its offset in its line.
	raw             string
	col             int
	quote, endQuote byte
	// docker: a container option `-e NAME=VALUE` or `--env NAME=VALUE`;
	// whole: the assignment is a whole command (A=1 && ...)
	docker, whole bool
	// unknown says what in the value only running the script gives
	// ("" when the value is known).
	unknown string
}

// Command is the `vllm serve MODEL ...` command.
type Command struct {
	// FirstLine/LastLine are the 1-based physical lines it spans.
	FirstLine, LastLine int
	Model               string
	Flags               []*Flag
	// quote is the quote an added flag is written in: the quote around
	// the command when it is one quoted word of another command (`bash
	// -c "vllm serve ..."`, docker run ... sh -c '...'), 0 when it is a
	// command of the script itself. insLine/insCol are where a flag added
	// after its last word goes (insCol < 0: nowhere, the nested command
	// ends outside quotes).
	quote           byte
	insLine, insCol int
	// inline: other commands or redirections follow it on its line
	inline bool
	// env and run are the script's variables and its `docker run` as they
	// stand when this command runs.
	env map[string]*Assign
	run *token
	// vars are the command's words that are only a variable reference
	// ($ARGS): read as flags by Facts when the script assigns them
	vars []token
	// model is the model word; opaque are the words whose value only
	// running the script gives ($(cat flags.txt)): the flags they hold
	// are unknown
	model  *token
	opaque []token
}

// Flag is one `--name value`, `--name=value` or boolean `--name`.
type Flag struct {
	Name     string // with the leading dashes: --max-num-seqs
	Value    string // unquoted
	HasValue bool
	Line     int // physical line of the flag name
	// raw is the flag's text as written (name, separator and value token),
	// rawLine the physical line holding the value token; nameRaw and
	// valRaw are the name and value tokens as written when they are
	// separate words (valRaw "" for --name=value and boolean flags).
	raw             string
	rawLine         int
	nameRaw, valRaw string
	// col and valCol are the offsets of raw and valRaw in their lines;
	// quote/endQuote and valQuote/valEnd the quotes they start and end
	// in (in a nested command)
	col, valCol                       int
	quote, endQuote, valQuote, valEnd byte
	// unknown says what in the value only running the script gives
	unknown string
}

// Lookup returns the flag with the given name (the last one wins), or nil.
func (c *Command) Lookup(name string) *Flag {
	if c == nil {
		return nil
	}
	var f *Flag
	for _, x := range c.Flags {
		if x.Name == name || strings.ReplaceAll(x.Name, "_", "-") == name {
			f = x
		}
	}
	return f
}

// booleanFlags are vLLM flags that take no value.
var booleanFlags = map[string]bool{
	"--enable-expert-parallel": true, "--async-scheduling": true, "--enable-prefix-caching": true,
	"--no-enable-prefix-caching": true, "--enforce-eager": true, "--trust-remote-code": true,
	"--disable-log-requests": true, "--disable-log-stats": true, "--enable-chunked-prefill": true,
	"--no-enable-chunked-prefill": true, "--enable-eplb": true, "--enable-auto-tool-choice": true,
	"--disable-frontend-multiprocessing": true, "--headless": true, "--no-async-scheduling": true,
}

// shortFlags are vLLM's short spellings of flags that facts read
// (vllm/engine/arg_utils.py: -tp, -pp, -dp); they are recorded under the
// long name.
var shortFlags = map[string]string{
	"-tp": "--tensor-parallel-size", "-pp": "--pipeline-parallel-size", "-dp": "--data-parallel-size",
}

// ReadFile parses the script at path.
func ReadFile(path string) (*Script, error) {
	// a FIFO or a device is refused unopened; a script over 4 MiB by size
	data, err := infile.ReadFile(path, infile.Deploy, infile.Opts{})
	if err != nil {
		return nil, err
	}
	// credentials are masked as the script enters: its facts, warnings
	// and every diff show *** (docs/robustness.md says how such a diff
	// still applies)
	return Parse(path, redact.Script(string(data)))
}

// use makes c the command facts and edits read and change.
func (s *Script) use(c *Command) {
	s.Serve, s.Env, s.run = c, c.env, c.run
}

// Lines returns "4-9" for a command spanning lines 4 to 9, "4" for one line.
func (c *Command) Lines() string {
	if c.LastLine > c.FirstLine {
		return fmt.Sprintf("%d-%d", c.FirstLine, c.LastLine)
	}
	return fmt.Sprint(c.FirstLine)
}

// Select picks the `vllm serve` command that spans line (1-based) as the
// one facts and edits use.
func (s *Script) Select(line int) error {
	for _, c := range s.Serves {
		if line >= c.FirstLine && line <= c.LastLine {
			s.use(c)
			s.Selected = true
			return nil
		}
	}
	if len(s.Serves) == 0 {
		return fmt.Errorf("%s has no `vllm serve` command", s.Path)
	}
	return fmt.Errorf("%s: no `vllm serve` command spans line %d (its commands are at lines %s)", s.Path, line, s.serveLines())
}

func (s *Script) serveLines() string {
	parts := make([]string, len(s.Serves))
	for i, c := range s.Serves {
		parts[i] = c.Lines()
	}
	return strings.Join(parts, ", ")
}

// Warning says that the script starts several `vllm serve` commands and
// which one the facts and edits use ("" for one command or none).
func (s *Script) Warning() string {
	if len(s.Serves) < 2 {
		return ""
	}
	how := "the last one"
	if s.Selected {
		how = "the one chosen"
	}
	w := fmt.Sprintf("%s starts %d `vllm serve` commands (lines %s): the facts and the diff use %s, at lines %s",
		s.Path, len(s.Serves), s.serveLines(), how, s.Serve.Lines())
	if s.Serve.Model != "" {
		w += " (" + s.Serve.Model + ")"
	}
	return w + "; their flags are not used, and a fix to an environment variable changes its assignment, which every command after it sees"
}

// Text returns the script text.
func (s *Script) Text() string {
	if len(s.Lines) == 0 {
		return ""
	}
	nl := "\n"
	if s.CRLF {
		nl = "\r\n"
	}
	t := strings.Join(s.Lines, nl)
	if s.TrailingNewline {
		t += nl
	}
	return t
}
