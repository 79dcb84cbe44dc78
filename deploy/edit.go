package deploy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/pmezard/go-difflib/difflib"

	"github.com/npuprof/npuprof/fix"
)

// Edit operations: the script kinds of fix.Action (the `edits` of a rule,
// see docs/rules.md).
const (
	OpRemoveFlag = string(fix.RemoveFlag) // drop --name (and its value)
	OpSetFlag    = string(fix.SetFlag)    // set --name VALUE (added when absent)
	OpMergeJSON  = string(fix.MergeJSON)  // merge the keys of VALUE (a JSON object) into --name's JSON value
	OpUnsetEnv   = string(fix.UnsetEnv)   // drop the NAME=... assignment
	OpSetEnv     = string(fix.SetEnv)     // export NAME=VALUE (added when absent)
)

// Ops lists the edit operations.
var Ops = []string{OpRemoveFlag, OpSetFlag, OpMergeJSON, OpUnsetEnv, OpSetEnv}

// EditsOf returns the script edits of actions, in order; code changes,
// which no script carries, are left out.
func EditsOf(actions []fix.Action) []Edit {
	var out []Edit
	for _, a := range actions {
		if a.EditsScript() {
			out = append(out, Edit{Op: string(a.Kind), Name: a.Name, Value: a.Value, Create: a.Create})
		}
	}
	return out
}

// DiffActions is the unified diff from the script to the script with the
// script actions applied in order ("" when they change nothing or there
// is none).
func (s *Script) DiffActions(actions []fix.Action) (string, error) {
	edits := EditsOf(actions)
	if len(edits) == 0 {
		return "", nil
	}
	return s.Diff(edits)
}

// Edit is one change to a deployment script.
type Edit struct {
	Op    string `json:"op"`
	Name  string `json:"name"`
	Value string `json:"value,omitempty"`
	// Create: merge_json adds the flag when the script lacks it.
	Create bool `json:"create,omitempty"`
}

func (e Edit) String() string {
	switch e.Op {
	case OpRemoveFlag, OpUnsetEnv:
		return e.Op + " " + e.Name
	}
	return e.Op + " " + e.Name + " " + e.Value
}

// Apply returns the script text with the edits applied in order. An edit
// with nothing to act on (removing an absent flag) changes nothing.
func (s *Script) Apply(edits []Edit) (string, error) {
	cur := s
	for _, e := range edits {
		lines, err := cur.apply(e)
		if err != nil {
			return "", fmt.Errorf("%s: %s: %v", s.Path, e, err)
		}
		next := &Script{Path: s.Path, Lines: lines, TrailingNewline: s.TrailingNewline, CRLF: s.CRLF}
		text := next.Text()
		idx := cur.serveIndex()
		cur, err = Parse(s.Path, text)
		if err != nil {
			return "", fmt.Errorf("internal error: edit %s made the script unreadable: %v", e, err)
		}
		// the next edit acts on the same command (edits never add or
		// remove one)
		if idx >= 0 && idx < len(cur.Serves) {
			cur.use(cur.Serves[idx])
		}
	}
	return cur.Text(), nil
}

// serveIndex is the index of Serve in Serves (-1 without a command).
func (s *Script) serveIndex() int {
	for i, c := range s.Serves {
		if c == s.Serve {
			return i
		}
	}
	return -1
}

// Diff is the unified diff from the script to the script with edits
// applied ("" when they change nothing).
func (s *Script) Diff(edits []Edit) (string, error) {
	after, err := s.Apply(edits)
	if err != nil {
		return "", err
	}
	return UnifiedDiff(s.Path, s.Text(), after)
}

// UnifiedDiff returns a unified diff (3 lines of context) from a to b,
// both named by path's base name (a/NAME, b/NAME: `patch -p1` or
// `git apply` in the script's folder take it). A last line without a
// newline is marked "\ No newline at end of file", as diff(1) does, so the
// diff applies to a script that does not end in a newline.
func UnifiedDiff(path, a, b string) (string, error) {
	return UnifiedDiffNamed(filepath.Base(path), a, b)
}

// UnifiedDiffNamed is UnifiedDiff with the files named a/NAME and b/NAME
// (NAME may be a relative path: vllm_ascend/ops/...).
func UnifiedDiffNamed(name, a, b string) (string, error) {
	if a == b {
		return "", nil
	}
	d, err := difflib.GetUnifiedDiffString(difflib.UnifiedDiff{
		A: splitLines(a), B: splitLines(b),
		FromFile: "a/" + name, ToFile: "b/" + name, Context: 3,
	})
	return strings.ReplaceAll(d, noNewline, "\n\\ No newline at end of file\n"), err
}

// noNewline ends a last line that has no newline (a byte no script holds),
// so "x" and "x\n" differ as lines, as they do in the file.
const noNewline = "\x00no-newline\n"

// splitLines splits text into lines that keep their "\n" (difflib's own
// SplitLines adds a spurious empty last line); a last line without one
// ends in noNewline.
func splitLines(text string) []string {
	l := strings.SplitAfter(text, "\n")
	if l[len(l)-1] == "" {
		return l[:len(l)-1]
	}
	l[len(l)-1] += noNewline
	return l
}

func (s *Script) apply(e Edit) ([]string, error) {
	lines := append([]string(nil), s.Lines...)
	switch e.Op {
	case OpRemoveFlag:
		f := s.Serve.Lookup(e.Name)
		if f == nil {
			return lines, nil
		}
		return s.removeFlag(lines, f)
	case OpSetFlag:
		return s.setFlag(lines, e.Name, e.Value)
	case OpMergeJSON:
		f := s.Serve.Lookup(e.Name)
		if f == nil {
			if !e.Create {
				return lines, nil
			}
			v, err := mergeJSON("", e.Value)
			if err != nil {
				return nil, err
			}
			return s.setFlag(lines, e.Name, v)
		}
		v, err := mergeJSON(f.Value, e.Value)
		if err != nil {
			return nil, fmt.Errorf("line %d: %s value: %v", f.Line, f.Name, err)
		}
		return s.setFlag(lines, e.Name, v)
	case OpUnsetEnv:
		a := s.Env[e.Name]
		if a == nil {
			return lines, nil
		}
		if a.docker != "" {
			lines, _, err := s.removeText(lines, a.Line, a.docker, false)
			return lines, err
		}
		if a.Alone {
			return append(lines[:a.Line-1], lines[a.Line:]...), nil
		}
		l := assignRe(e.Name).ReplaceAllString(lines[a.Line-1], "")
		// an `export` left with nothing to export goes too (`export ; B=2`)
		l = bareExportRe.ReplaceAllString(l, "${1}")
		l = trailingExportRe.ReplaceAllString(l, "")
		lines[a.Line-1] = l
		return lines, nil
	case OpSetEnv:
		if a := s.Env[e.Name]; a != nil {
			lines[a.Line-1] = assignRe(e.Name).ReplaceAllStringFunc(lines[a.Line-1], func(m string) string {
				tail := ""
				if strings.HasSuffix(m, " ") {
					tail = " "
				}
				return e.Name + "=" + Quote(e.Value) + tail
			})
			return lines, nil
		}
		if s.run != nil && s.Serve != nil && s.run.line >= s.Serve.FirstLine && s.run.line <= s.Serve.LastLine {
			// vLLM runs in a container: give it the variable with -e
			i := s.run.line - 1
			k := strings.Index(lines[i], " "+s.run.raw)
			if k < 0 {
				return nil, fmt.Errorf("line %d: cannot find %q", s.run.line, s.run.raw)
			}
			k += 1 + len(s.run.raw)
			lines[i] = lines[i][:k] + " -e " + e.Name + "=" + Quote(e.Value) + lines[i][k:]
			return lines, nil
		}
		// after the last export before the command, else before the command
		at := len(lines)
		if s.Serve != nil {
			at = s.Serve.FirstLine - 1
		}
		last := -1
		for _, a := range s.Env {
			if a.Export && (s.Serve == nil || a.Line < s.Serve.FirstLine) && a.Line > last {
				last = a.Line
			}
		}
		if last >= 0 {
			at = last
		}
		ins := "export " + e.Name + "=" + Quote(e.Value)
		return append(lines[:at], append([]string{ins}, lines[at:]...)...), nil
	}
	return nil, fmt.Errorf("unknown edit %q (expected one of %s)", e.Op, strings.Join(Ops, ", "))
}

var (
	bareExportRe     = regexp.MustCompile(`(^|[;&|]\s*)export\s*(;|&&)\s*`)
	trailingExportRe = regexp.MustCompile(`\s*(;|&&)\s*export\s*$`)
)

func assignRe(name string) *regexp.Regexp {
	return regexp.MustCompile(`\b` + regexp.QuoteMeta(name) + `=('[^']*'|"(?:[^"\\]|\\.)*"|[^\s;&|]*)\s?`)
}

func (s *Script) removeFlag(lines []string, f *Flag) ([]string, error) {
	if f.rawLine == f.Line {
		lines, _, err := s.removeText(lines, f.Line, f.raw, f.Line == s.Serve.LastLine)
		return lines, err
	}
	// `--name \` then the value on a later line: remove the value first
	// (the later line), then the name
	lines, dropped, err := s.removeText(lines, f.rawLine, f.valRaw, f.rawLine == s.Serve.LastLine)
	if err != nil {
		return nil, err
	}
	last := f.Line == s.Serve.LastLine || dropped && f.rawLine == s.Serve.LastLine && f.rawLine == f.Line+1
	lines, _, err = s.removeText(lines, f.Line, f.nameRaw, last)
	return lines, err
}

// removeText removes raw from physical line n (1-based), dropping the line
// when nothing but a continuation is left; last says no line of the
// command follows it (then the previous line's continuation is removed).
func (s *Script) removeText(lines []string, n int, raw string, last bool) ([]string, bool, error) {
	i := n - 1
	line := lines[i]
	k := strings.Index(line, raw)
	if k < 0 {
		return nil, false, fmt.Errorf("line %d: cannot find %q", n, raw)
	}
	before, after := line[:k], line[k+len(raw):]
	rest := strings.TrimRight(before, " \t") + after
	if strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "\\")) == "" {
		// the text had its own line: drop it
		lines = append(lines[:i], lines[i+1:]...)
		if last && i > 0 {
			lines[i-1] = strings.TrimRight(strings.TrimSuffix(strings.TrimRight(lines[i-1], " \t"), "\\"), " \t")
		}
		return lines, true, nil
	}
	if strings.TrimSpace(after) == "" || strings.HasPrefix(strings.TrimLeft(after, " \t"), "\\") || after[0] != ' ' && after[0] != '\t' {
		lines[i] = strings.TrimRight(before, " \t") + after
	} else {
		lines[i] = before + strings.TrimLeft(after, " \t")
	}
	return lines, false, nil
}

func (s *Script) setFlag(lines []string, name, value string) ([]string, error) {
	if s.Serve == nil {
		return nil, fmt.Errorf("no `vllm serve` command to add %s to", name)
	}
	bare := value == "" && booleanFlags[name]
	q := s.Serve.quote
	text := name
	if !bare {
		text = name + " " + escapeIn(q, Quote(value))
	}
	if f := s.Serve.Lookup(name); f != nil {
		if f.rawLine != f.Line && !bare {
			// `--name \` then the value on a later line: replace the value
			i := f.rawLine - 1
			k := strings.Index(lines[i], f.valRaw)
			if k < 0 {
				return nil, fmt.Errorf("line %d: cannot find %q", f.rawLine, f.valRaw)
			}
			lines[i] = lines[i][:k] + escapeIn(q, Quote(value)) + lines[i][k+len(f.valRaw):]
			return lines, nil
		}
		if f.rawLine != f.Line {
			return nil, fmt.Errorf("line %d: %s and its value are on different lines", f.Line, f.Name)
		}
		i := f.Line - 1
		k := strings.Index(lines[i], f.raw)
		if k < 0 {
			return nil, fmt.Errorf("line %d: cannot find %q", f.Line, f.raw)
		}
		if !bare && strings.HasPrefix(f.raw, name+"=") {
			text = name + "=" + escapeIn(q, Quote(value))
		}
		lines[i] = lines[i][:k] + text + lines[i][k+len(f.raw):]
		return lines, nil
	}
	if q != 0 || s.Serve.inline {
		// inside `bash -c "..."` (before the quote), or followed by more on
		// its line (before `&& ...`, `> log`): after the command's last word
		i := s.Serve.tailLine - 1
		k := strings.Index(lines[i], s.Serve.tail)
		if k < 0 {
			return nil, fmt.Errorf("line %d: cannot find %q", s.Serve.tailLine, s.Serve.tail)
		}
		k += len(s.Serve.tail)
		lines[i] = lines[i][:k] + " " + text + lines[i][k:]
		return lines, nil
	}
	i := s.Serve.LastLine - 1
	last := strings.TrimRight(lines[i], " \t")
	indent := "  "
	if s.Serve.LastLine > s.Serve.FirstLine {
		l := lines[i]
		indent = l[:len(l)-len(strings.TrimLeft(l, " \t"))]
	}
	lines[i] = last + " \\"
	return append(lines[:i+1], append([]string{indent + text}, lines[i+1:]...)...), nil
}

// Quote returns v as one shell word: unchanged when safe, else in single quotes.
func Quote(v string) string {
	if v == "" {
		return "''"
	}
	safe := true
	for _, c := range v {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("-_./:=,+@%", c)) {
			safe = false
			break
		}
	}
	if safe {
		return v
	}
	return "'" + strings.ReplaceAll(v, "'", `'\''`) + "'"
}

// mergeJSON merges the keys of patch (a JSON object) into base (a JSON
// object, or "" for none) and returns compact JSON: the patch's keys first,
// in its order, then base's other keys in theirs.
func mergeJSON(base, patch string) (string, error) {
	pk, pv, err := orderedObject(patch)
	if err != nil {
		return "", fmt.Errorf("edit value is not a JSON object: %v", err)
	}
	var bk []string
	var bv map[string]json.RawMessage
	if strings.TrimSpace(base) != "" {
		if bk, bv, err = orderedObject(base); err != nil {
			return "", fmt.Errorf("not a JSON object: %v", err)
		}
	}
	var b bytes.Buffer
	b.WriteByte('{')
	n := 0
	write := func(k string, v json.RawMessage) {
		if n > 0 {
			b.WriteByte(',')
		}
		n++
		kb, _ := json.Marshal(k)
		b.Write(kb)
		b.WriteByte(':')
		json.Compact(&b, v)
	}
	for _, k := range pk {
		write(k, pv[k])
	}
	for _, k := range bk {
		if _, ok := pv[k]; !ok {
			write(k, bv[k])
		}
	}
	b.WriteByte('}')
	return b.String(), nil
}

func orderedObject(s string) ([]string, map[string]json.RawMessage, error) {
	dec := json.NewDecoder(strings.NewReader(s))
	t, err := dec.Token()
	if err != nil {
		return nil, nil, err
	}
	if d, ok := t.(json.Delim); !ok || d != '{' {
		return nil, nil, fmt.Errorf("expected {, found %v", t)
	}
	var keys []string
	vals := map[string]json.RawMessage{}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, nil, err
		}
		k, _ := t.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, nil, err
		}
		if _, dup := vals[k]; !dup {
			keys = append(keys, k)
		}
		vals[k] = v
	}
	if _, err := dec.Token(); err != nil {
		return nil, nil, err
	}
	return keys, vals, nil
}
