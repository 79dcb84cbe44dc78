package deploy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/pmezard/go-difflib/difflib"

	"github.com/npuprof/npuprof/internal/fix"
	"github.com/npuprof/npuprof/internal/lazyre"
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
		base, err := s.flagValue(f)
		if err != nil {
			return nil, err
		}
		v, err := mergeJSON(base, e.Value)
		if err != nil {
			return nil, fmt.Errorf("line %d: %s value: %v", f.Line, f.Name, err)
		}
		return s.setFlag(lines, e.Name, v)
	case OpUnsetEnv:
		return s.unsetEnv(lines, e.Name)
	case OpSetEnv:
		return s.setEnv(lines, e.Name, e.Value)
	}
	return nil, fmt.Errorf("unknown edit %q (expected one of %s)", e.Op, strings.Join(Ops, ", "))
}

var (
	bareExportRe     = lazyre.New(`(^|[;&|"']\s*)(?:export|:)\s*(;|&&)\s*`)
	trailingExportRe = lazyre.New(`\s*(;|&&)\s*(?:export|:)\s*$`)
)

// find is the offset of raw in line: at col, where the parse put it.
func find(line, raw string, col, n int) (int, error) {
	if col >= 0 && col+len(raw) <= len(line) && line[col:col+len(raw)] == raw {
		return col, nil
	}
	return 0, fmt.Errorf("line %d: cannot find %q", n, raw)
}

func (s *Script) unsetEnv(lines []string, name string) ([]string, error) {
	a := s.Env[name]
	if a == nil {
		return lines, nil
	}
	if a.docker {
		lines, _, err := s.removeText(lines, a.Line, a.raw, "", a.col, false)
		return lines, err
	}
	if a.Alone {
		return append(lines[:a.Line-1], lines[a.Line:]...), nil
	}
	l := lines[a.Line-1]
	k, err := find(l, a.raw, a.col, a.Line)
	if err != nil {
		return nil, err
	}
	rest := l[k+len(a.raw):]
	if a.whole {
		// the assignment is the whole command (A=1 && ..., A=1 &): the
		// null command takes its place, and goes with its operator
		rest = ":" + rest
	} else if strings.HasPrefix(rest, " ") {
		rest = rest[1:]
	}
	l = l[:k] + requote(a.quote, a.endQuote, "") + rest
	// an `export` left with nothing to export goes too (`export ; B=2`),
	// and so does a null command before an operator
	l = bareExportRe().ReplaceAllString(l, "${1}")
	l = trailingExportRe().ReplaceAllString(l, "")
	lines[a.Line-1] = l
	return lines, nil
}

func (s *Script) setEnv(lines []string, name, value string) ([]string, error) {
	if a := s.Env[name]; a != nil {
		i := a.Line - 1
		k, err := find(lines[i], a.raw, a.col, a.Line)
		if err != nil {
			return nil, err
		}
		// -e NAME=VALUE keeps its -e
		at := strings.Index(a.raw, name+"=")
		if at < 0 {
			return nil, fmt.Errorf("line %d: cannot find %s= in %q", a.Line, name, a.raw)
		}
		lines[i] = lines[i][:k+at] + requote(a.quote, a.endQuote, name+"="+Quote(value)) + lines[i][k+len(a.raw):]
		return lines, nil
	}
	if s.run != nil && s.Serve != nil && s.run.line >= s.Serve.FirstLine && s.run.line <= s.Serve.LastLine {
		// vLLM runs in a container: give it the variable with -e
		i := s.run.line - 1
		k, err := find(lines[i], s.run.raw, s.run.col, s.run.line)
		if err != nil {
			return nil, err
		}
		k += len(s.run.raw)
		lines[i] = lines[i][:k] + " -e " + name + "=" + Quote(value) + lines[i][k:]
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
	ins := "export " + name + "=" + Quote(value)
	return append(lines[:at], append([]string{ins}, lines[at:]...)...), nil
}

// flagValue is f's value with the script's variables expanded; an error
// when it is unknown (nothing is merged into a value npuprof cannot see).
func (s *Script) flagValue(f *Flag) (string, error) {
	if f.unknown != "" {
		return "", fmt.Errorf("line %d: %s: %s is not run, so its value is unknown and nothing can be merged into it", f.Line, f.Name, f.unknown)
	}
	v, ok := s.expand(f.Value)
	if !ok {
		return "", fmt.Errorf("line %d: %s %s: a variable the script does not assign: nothing can be merged into it", f.Line, f.Name, f.Value)
	}
	return v, nil
}

func (s *Script) removeFlag(lines []string, f *Flag) ([]string, error) {
	if f.rawLine == f.Line {
		lines, _, err := s.removeText(lines, f.Line, f.raw, requote(f.quote, f.endQuote, ""), f.col, f.Line == s.Serve.LastLine)
		return lines, err
	}
	// `--name \` then the value on a later line: remove the value first
	// (the later line), then the name
	lines, dropped, err := s.removeText(lines, f.rawLine, f.valRaw, requote(f.valQuote, f.valEnd, ""), f.valCol, f.rawLine == s.Serve.LastLine)
	if err != nil {
		return nil, err
	}
	last := f.Line == s.Serve.LastLine || dropped && f.rawLine == s.Serve.LastLine && f.rawLine == f.Line+1
	lines, _, err = s.removeText(lines, f.Line, f.nameRaw, requote(f.quote, f.endQuote, ""), f.col, last)
	return lines, err
}

// removeText removes raw (at col) from physical line n (1-based), leaving
// keep (the quotes a nested word's text needs to stay balanced), dropping the line
// when nothing but a continuation is left; last says no line of the
// command follows it (then the previous line's continuation is removed).
func (s *Script) removeText(lines []string, n int, raw, keep string, col int, last bool) ([]string, bool, error) {
	i := n - 1
	line := lines[i]
	k, err := find(line, raw, col, n)
	if err != nil {
		return nil, false, err
	}
	before, after := line[:k], keep+line[k+len(raw):]
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
	text := name
	if !bare {
		text = name + " " + Quote(value)
	}
	if f := s.Serve.Lookup(name); f != nil {
		return s.replaceFlag(lines, f, name, value, bare)
	}
	if s.Serve.quote != 0 || s.Serve.inline || s.Serve.insCol < 0 {
		// inside `bash -c "..."` (before the quote), or followed by more on
		// its line (before `&& ...`, `> log`): after the command's last word
		if s.Serve.insCol < 0 {
			return nil, fmt.Errorf("line %d: the command ends outside its quotes: nowhere to add %s", s.Serve.LastLine, name)
		}
		i, k := s.Serve.insLine-1, s.Serve.insCol
		lines[i] = lines[i][:k] + escapeIn(s.Serve.quote, " "+text) + lines[i][k:]
		return lines, nil
	}
	i := s.Serve.LastLine - 1
	last := strings.TrimRight(lines[i], " \t")
	indent := "  "
	if s.Serve.LastLine > s.Serve.FirstLine {
		l := lines[i]
		indent = l[:len(l)-len(strings.TrimLeft(l, " \t"))]
	}
	if s.Serve.insLine == s.Serve.LastLine && s.Serve.insCol >= 0 && s.Serve.insCol <= len(last) {
		// a comment after the command stays after it, on the added line
		if c := strings.TrimSpace(last[s.Serve.insCol:]); strings.HasPrefix(c, "#") {
			last = last[:s.Serve.insCol]
			text += " " + c
		}
	}
	lines[i] = last + " \\"
	return append(lines[:i+1], append([]string{indent + text}, lines[i+1:]...)...), nil
}

// replaceFlag writes --name VALUE (or the bare --name) in place of f.
func (s *Script) replaceFlag(lines []string, f *Flag, name, value string, bare bool) ([]string, error) {
	if f.rawLine != f.Line && !bare {
		// `--name \` then the value on a later line: replace the value
		i := f.rawLine - 1
		k, err := find(lines[i], f.valRaw, f.valCol, f.rawLine)
		if err != nil {
			return nil, err
		}
		lines[i] = lines[i][:k] + requote(f.valQuote, f.valEnd, Quote(value)) + lines[i][k+len(f.valRaw):]
		return lines, nil
	}
	if f.rawLine != f.Line {
		return nil, fmt.Errorf("line %d: %s and its value are on different lines", f.Line, f.Name)
	}
	i := f.Line - 1
	k, err := find(lines[i], f.raw, f.col, f.Line)
	if err != nil {
		return nil, err
	}
	text := name
	if !bare {
		sep := " "
		if strings.HasPrefix(f.raw, name+"=") {
			sep = "="
		}
		text = name + sep + Quote(value)
	}
	lines[i] = lines[i][:k] + requote(f.quote, f.endQuote, text) + lines[i][k+len(f.raw):]
	return lines, nil
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

// requote writes text as it appears in a nested command's word where
// the text replaced started in quote q and ended in quote qe.
func requote(q, qe byte, text string) string {
	t := escapeIn(q, text)
	if q != qe {
		if isQuote(q) {
			t += string(q) // close q
		}
		if isQuote(qe) {
			t += string(qe) // open qe
		}
	}
	return t
}

// escapeIn writes text as it appears inside quotes q (outside:
// quotes inside a nested command's word, each special byte escaped).
func escapeIn(q byte, text string) string {
	switch q {
	case outside:
		var b strings.Builder
		for i := 0; i < len(text); i++ {
			c := text[i]
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("-_./:=,+@%", c) >= 0) {
				b.WriteByte('\\')
			}
			b.WriteByte(c)
		}
		return b.String()
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
