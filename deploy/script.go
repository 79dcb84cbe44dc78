// Package deploy reads a shell deployment script — `export` lines, then
// `vllm serve MODEL --flag value ...` with line continuations, quotes and
// JSON-valued flags — into facts, and applies edits to it (remove a flag,
// unset an env var, merge keys into a JSON-valued flag) so a finding's fix
// can be shown as a unified diff against the user's own script.
//
// It is not a shell: it reads the subset deployment scripts use, and says
// which line it could not read rather than guessing.
package deploy

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
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

	quote byte // while reading a nested command: its quotes
	solo  bool // while reading a simple command: it is alone on its line
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
	// docker is the raw text of a container option `-e NAME=VALUE` or
	// `--env NAME=VALUE` ("" for a shell assignment).
	docker string
}

// Command is the `vllm serve MODEL ...` command.
type Command struct {
	// FirstLine/LastLine are the 1-based physical lines it spans.
	FirstLine, LastLine int
	Model               string
	Flags               []*Flag
	// quote is the quote around the command when it is one quoted word
	// of another command (`bash -c "vllm serve ..."`, docker run ...
	// sh -c '...'), 0 when it is a command of the script itself; tail is
	// the raw text of its last word and tailLine that word's line (an
	// added flag goes after it, inside the quotes).
	quote    byte
	tail     string
	tailLine int
	// inline: other commands or redirections follow it on its line
	inline bool
	// env and run are the script's variables and its `docker run` as they
	// stand when this command runs.
	env map[string]*Assign
	run *token
	// vars are the command's words that are only a variable reference
	// ($ARGS): read as flags by Facts when the script assigns them
	vars []token
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
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(path, string(data))
}

// token is one shell word with the physical line it started on.
type token struct {
	text   string // unquoted
	raw    string // as written
	line   int
	quoted bool
	op     bool // a control operator: ; && || | &
}

// Parse parses script text; path names it in errors.
func Parse(path, text string) (*Script, error) {
	s := &Script{Path: path, Env: map[string]*Assign{}}
	s.CRLF = strings.Contains(text, "\r\n")
	text = strings.ReplaceAll(text, "\r\n", "\n")
	s.TrailingNewline = strings.HasSuffix(text, "\n")
	s.Lines = strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	if text == "" {
		s.Lines = nil
	}
	for i := 0; i < len(s.Lines); {
		first := i
		// a logical line: continuation lines end with an unescaped backslash
		var b strings.Builder
		starts := []int{}
		for {
			line := s.Lines[i]
			starts = append(starts, b.Len())
			if strings.HasSuffix(line, "\\") && !strings.HasSuffix(line, "\\\\") && i+1 < len(s.Lines) {
				b.WriteString(strings.TrimSuffix(line, "\\"))
				b.WriteByte(' ')
				i++
				continue
			}
			b.WriteString(line)
			i++
			break
		}
		toks, err := tokenize(b.String(), first+1, starts)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %v", path, first+1, err)
		}
		if err := s.statement(toks, first+1, i); err != nil {
			return nil, fmt.Errorf("%s:%d: %v", path, first+1, err)
		}
	}
	if n := len(s.Serves); n > 0 {
		s.use(s.Serves[n-1])
	}
	return s, nil
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

// tokenize splits a logical line into words; starts are the offsets of
// each physical line inside it (for line numbers).
func tokenize(line string, firstLine int, starts []int) ([]token, error) {
	lineAt := func(off int) int {
		n := 0
		for k, st := range starts {
			if off >= st {
				n = k
			}
		}
		return firstLine + n
	}
	var out []token
	i := 0
	for i < len(line) {
		c := line[i]
		switch {
		case c == ' ' || c == '\t':
			i++
			continue
		case c == '#':
			return out, nil
		case isRedirect(line[i:]) > 0:
			// a redirection (> log, 2>&1, >>out): not a word of the command
			j := i + isRedirect(line[i:])
			out = append(out, token{text: line[i:j], raw: line[i:j], line: lineAt(i), op: true})
			i = j
			continue
		case c == ';' || c == '|' || c == '&':
			j := i + 1
			if j < len(line) && (line[j] == '&' || line[j] == '|') {
				j++
			}
			out = append(out, token{text: line[i:j], raw: line[i:j], line: lineAt(i), op: true})
			i = j
			continue
		}
		start := i
		var b strings.Builder
		quoted := false
	word:
		for i < len(line) {
			c := line[i]
			switch c {
			case ' ', '\t', ';', '|', '&':
				break word
			case '\'':
				quoted = true
				j := strings.IndexByte(line[i+1:], '\'')
				if j < 0 {
					return nil, fmt.Errorf("unterminated single quote")
				}
				b.WriteString(line[i+1 : i+1+j])
				i += j + 2
			case '"':
				quoted = true
				i++
				closed := false
				for i < len(line) {
					if line[i] == '\\' && i+1 < len(line) && strings.IndexByte("\"\\$`", line[i+1]) >= 0 {
						b.WriteByte(line[i+1])
						i += 2
						continue
					}
					if line[i] == '"' {
						closed = true
						i++
						break
					}
					b.WriteByte(line[i])
					i++
				}
				if !closed {
					return nil, fmt.Errorf("unterminated double quote")
				}
			case '\\':
				if i+1 < len(line) {
					b.WriteByte(line[i+1])
				}
				i += 2
			default:
				b.WriteByte(c)
				i++
			}
		}
		out = append(out, token{text: b.String(), raw: line[start:min(i, len(line))], line: lineAt(start), quoted: quoted})
	}
	return out, nil
}

// isRedirect returns the length of the redirection operator at the start
// of s ([N]>, [N]>>, [N]<, [N]>&M, &>), 0 when there is none.
func isRedirect(s string) int {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	if i == 0 && strings.HasPrefix(s, "&>") {
		i = 1
	}
	if i >= len(s) || (s[i] != '>' && s[i] != '<') {
		return 0
	}
	i++
	if i < len(s) && (s[i] == '>' || s[i] == '<') {
		i++
	}
	if i < len(s) && s[i] == '&' {
		i++
		for i < len(s) && (s[i] >= '0' && s[i] <= '9' || s[i] == '-') {
			i++
		}
	}
	return i
}

// statement records what one logical line says.
func (s *Script) statement(toks []token, first, next int) error {
	// split on control operators and redirections; each simple command is
	// read alone
	solo := true
	for _, t := range toks {
		if t.op {
			solo = false
		}
	}
	var cmd []token
	flush := func(more bool) {
		if len(cmd) > 0 {
			before := s.Serve
			s.solo = solo
			s.simple(cmd, first, next)
			if s.Serve != before && more {
				// something follows the command on its line (&& ..., > log &):
				// a flag is added after its last word, not on a new line
				s.Serve.inline = true
			}
		}
		cmd = nil
	}
	for _, t := range toks {
		if t.op {
			flush(true)
			continue
		}
		cmd = append(cmd, t)
	}
	flush(false)
	return nil
}

func isAssign(t token) (string, string, bool) {
	name, val, ok := strings.Cut(t.text, "=")
	if !ok || name == "" || t.quoted && !strings.Contains(t.raw[:len(name)+1], "=") {
		return "", "", false
	}
	for i, c := range name {
		if !(c == '_' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || i > 0 && c >= '0' && c <= '9') {
			return "", "", false
		}
	}
	return name, val, true
}

func (s *Script) simple(cmd []token, first, last int) {
	if cmd[0].text == "export" {
		n := 0
		for _, t := range cmd[1:] {
			if _, _, ok := isAssign(t); ok {
				n++
			}
		}
		for _, t := range cmd[1:] {
			if name, val, ok := isAssign(t); ok {
				s.Env[name] = &Assign{Name: name, Value: val, Line: t.line, Export: true, Alone: n == 1 && len(cmd) == 2 && s.quote == 0 && s.solo}
			}
		}
		return
	}
	if cmd[0].text == "unset" {
		for _, t := range cmd[1:] {
			delete(s.Env, t.text)
		}
		return
	}
	// leading NAME=VALUE assignments
	k := 0
	for k < len(cmd) {
		name, val, ok := isAssign(cmd[k])
		if !ok {
			break
		}
		s.Env[name] = &Assign{Name: name, Value: val, Line: cmd[k].line, Alone: len(cmd) == 1 && s.quote == 0 && s.solo}
		k++
	}
	cmd = cmd[k:]
	s.containerEnv(cmd)
	// vllm serve MODEL ... (also python -m vllm.entrypoints.openai.api_server --model M)
	for i := 0; i < len(cmd); i++ {
		w := cmd[i].text
		if s.nested(cmd[i], first, last) {
			return
		}
		serve := (strings.HasSuffix(w, "vllm") && i+1 < len(cmd) && cmd[i+1].text == "serve")
		api := strings.HasPrefix(w, "vllm.entrypoints.openai.api_server")
		if !serve && !api {
			continue
		}
		c := &Command{FirstLine: first, LastLine: last, quote: s.quote, run: s.run}
		c.env = make(map[string]*Assign, len(s.Env))
		for k, v := range s.Env {
			c.env[k] = v
		}
		c.tail, c.tailLine = cmd[len(cmd)-1].raw, cmd[len(cmd)-1].line
		j := i + 1
		if serve {
			j = i + 2
			if j < len(cmd) && !strings.HasPrefix(cmd[j].text, "-") {
				c.Model = cmd[j].text
				j++
			}
		}
		for ; j < len(cmd); j++ {
			t := cmd[j]
			short := shortFlags[strings.SplitN(t.text, "=", 2)[0]]
			if !strings.HasPrefix(t.text, "--") && short == "" {
				if strings.HasPrefix(t.text, "$") {
					c.vars = append(c.vars, t)
				}
				continue
			}
			f := &Flag{Name: t.text, Line: t.line, raw: t.raw, rawLine: t.line, nameRaw: t.raw}
			if name, val, ok := strings.Cut(t.text, "="); ok {
				f.Name, f.Value, f.HasValue = name, val, true
			} else if !booleanFlags[t.text] && j+1 < len(cmd) && !strings.HasPrefix(cmd[j+1].text, "--") && shortFlags[cmd[j+1].text] == "" {
				f.Value, f.HasValue = cmd[j+1].text, true
				f.raw = t.raw + " " + cmd[j+1].raw
				f.rawLine = cmd[j+1].line
				f.valRaw = cmd[j+1].raw
				j++
			}
			if short != "" {
				f.Name = short
			}
			if f.Name == "--model" && f.HasValue {
				c.Model = f.Value
			}
			c.Flags = append(c.Flags, f)
		}
		s.Serve = c
		s.Serves = append(s.Serves, c)
		return
	}
}

// containerEnv records the -e/--env NAME=VALUE options of a `docker run`
// (or podman): in a script that starts vLLM in a container, that is where
// its environment is set (an `export` on the host does not reach it).
func (s *Script) containerEnv(cmd []token) {
	if len(cmd) < 2 || s.quote != 0 || cmd[1].text != "run" {
		return
	}
	if b := filepath.Base(cmd[0].text); b != "docker" && b != "podman" {
		return
	}
	run := cmd[1]
	s.run = &run
	for i := 2; i+1 < len(cmd); i++ {
		if cmd[i].text != "-e" && cmd[i].text != "--env" {
			continue
		}
		if name, val, ok := isAssign(cmd[i+1]); ok && cmd[i].line == cmd[i+1].line {
			s.Env[name] = &Assign{Name: name, Value: val, Line: cmd[i+1].line, Export: true, docker: cmd[i].raw + " " + cmd[i+1].raw}
			i++
		}
	}
}

// nested reads a quoted word that holds the vLLM command itself, as in
// `bash -c "vllm serve ..."` (often the last word of a `docker run`):
// the word's text is tokenized again, and each inner word is given the
// physical line and the raw text (re-escaped for the outer quotes) it
// has in the file, so edits find it there.
func (s *Script) nested(t token, first, last int) bool {
	if !t.quoted || s.quote != 0 || len(t.raw) < 2 || t.raw[0] != t.raw[len(t.raw)-1] || (t.raw[0] != '"' && t.raw[0] != '\'') {
		return false
	}
	if !strings.Contains(t.text, "vllm serve") && !strings.Contains(t.text, "vllm.entrypoints.openai.api_server") {
		return false
	}
	toks, err := tokenize(t.text, t.line, []int{0})
	if err != nil {
		return false
	}
	q := t.raw[0]
	ln := t.line
	for k := range toks {
		toks[k].raw = escapeIn(q, toks[k].raw)
		for l := ln; l <= last; l++ {
			if strings.Contains(s.Lines[l-1], toks[k].raw) {
				ln = l
				break
			}
		}
		toks[k].line = ln
	}
	s.quote = q
	defer func() { s.quote = 0 }()
	n := len(s.Serves)
	s.statement(toks, first, last)
	return len(s.Serves) > n
}

// escapeIn writes text as it appears inside quotes q.
func escapeIn(q byte, text string) string {
	switch q {
	case '\'':
		return strings.ReplaceAll(text, "'", `'\''`)
	case '"':
		var b strings.Builder
		for i := 0; i < len(text); i++ {
			if strings.IndexByte("\"\\$`", text[i]) >= 0 {
				b.WriteByte('\\')
			}
			b.WriteByte(text[i])
		}
		return b.String()
	}
	return text
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
