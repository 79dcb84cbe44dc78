package deploy

import (
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// token is one shell word of the script.
type token struct {
	// text is the word unquoted, with its variable references kept as
	// written ($X, ${X:-d}) for expand
	text string
	raw  string // as written in the file
	line int    // physical line where raw starts
	col  int    // offset of raw in that line
	// from/to are raw's offsets in the file; q and qe are the quotes the
	// word starts and ends in (inside a nested command's quotes)
	from, to int
	q, qe    byte
	quoted   bool
	// unknown says what in the word only running the script gives: a
	// command substitution, arithmetic, an expansion npuprof does not
	// evaluate ("" when there is none)
	unknown string
	word    *syntax.Word
}

// view is text parsed as shell: the file itself, or the quoted word of a
// `bash -c "..."` unquoted; for the latter, from[i]/to[i] are where the
// source of text[i] is in the file, ctx[i] the quote it is in, and
// endAt/endCtx the place just inside the word's closing quote.
type view struct {
	text     string
	from, to []int
	ctx      []byte
	endAt    int
	endCtx   byte
}

func (v *view) start(i int) int {
	i = min(i, len(v.text))
	switch {
	case v.from == nil:
		return i
	case i < len(v.from):
		return v.from[i]
	}
	return v.endAt
}

func (v *view) end(i int) int {
	i = min(i, len(v.text))
	if v.from == nil || i == 0 {
		return v.start(i)
	}
	return v.to[i-1]
}

func (v *view) quote(i int) byte {
	switch {
	case v.from == nil:
		return 0
	case i < len(v.ctx):
		return v.ctx[i]
	}
	return v.endCtx
}

// outside is the quote of a nested command's text outside quotes (its
// special characters are escaped with backslashes).
const outside = '\\'

func isQuote(q byte) bool { return q == '\'' || q == '"' }

// after is where text added after text[:b] goes in the file and the quote
// it is written in: in the quotes of a nested word when it can, so that
// it reads as written (ok is false when there is no place at all).
func (v *view) after(b int) (off int, q byte, ok bool) {
	b = min(b, len(v.text))
	switch {
	case v.from == nil:
		return b, 0, true
	case b > 0 && isQuote(v.ctx[b-1]):
		return v.to[b-1], v.ctx[b-1], true
	case isQuote(v.quote(b)):
		return v.start(b), v.quote(b), true
	case b > 0:
		return v.to[b-1], v.ctx[b-1], true
	}
	return 0, 0, false
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
	s.text = text
	s.lineStart = make([]int, len(s.Lines)+1)
	for i, l := range s.Lines {
		s.lineStart[i+1] = s.lineStart[i] + len(l) + 1
	}
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(text), path)
	if err != nil {
		return nil, s.notShell(err)
	}
	top := &view{text: text}
	s.stmts(top, f.Stmts, true)
	if n := len(s.Serves); n > 0 {
		s.use(s.Serves[n-1])
	}
	return s, nil
}

// notShell is the error of a script bash cannot parse: the file, the line
// and its text, and that a shell script is expected, so that a file given
// by mistake (go.mod, a YAML file) is not named only by the parser's own
// words ("`foo(` must be followed by `)`").
func (s *Script) notShell(err error) error {
	var pe syntax.ParseError
	if !errors.As(err, &pe) || pe.Pos.Line() == 0 {
		return fmt.Errorf("%s: %w (expected a shell script: export lines and a vllm serve command)", s.Path, err)
	}
	line := ""
	if n := int(pe.Pos.Line()); n <= len(s.Lines) {
		line = strings.TrimSpace(s.Lines[n-1])
		if r := []rune(line); len(r) > 60 {
			line = string(r[:60]) + "…"
		}
	}
	return fmt.Errorf("%s:%d:%d: bash cannot parse line %d %q: %s (expected a shell script: export lines and a vllm serve command)",
		s.Path, pe.Pos.Line(), pe.Pos.Col(), pe.Pos.Line(), line, pe.Text)
}

// lineOf is the 1-based line holding file offset off, and off's column.
func (s *Script) lineOf(off int) (line, col int) {
	i := sort.Search(len(s.lineStart), func(i int) bool { return s.lineStart[i] > off }) - 1
	i = max(0, min(i, len(s.Lines)-1))
	return i + 1, off - s.lineStart[i]
}

// restOfLine is the text after file offset off on its line, trimmed.
func (s *Script) restOfLine(off int) string {
	off = min(off, len(s.text))
	end := strings.IndexByte(s.text[off:], '\n')
	if end < 0 {
		end = len(s.text) - off
	}
	return strings.TrimSpace(s.text[off : off+end])
}

func (s *Script) stmts(v *view, list []*syntax.Stmt, solo bool) {
	for _, st := range list {
		s.stmt(v, st, solo)
	}
}

// stmt reads one statement; solo says it is not part of a pipeline or an
// && / || list. Compound commands are read through (a `vllm serve` in
// an if or a function is still the script's); command substitutions are
// not (they run in a subshell, and their output is unknown).
func (s *Script) stmt(v *view, st *syntax.Stmt, solo bool) {
	switch c := st.Cmd.(type) {
	case *syntax.CallExpr:
		s.call(v, st, c, solo)
	case *syntax.DeclClause:
		s.decl(v, st, c, solo)
	default:
		for _, l := range inner(st.Cmd) {
			s.stmts(v, l.stmts, solo && l.solo)
		}
	}
}

// list is statements of a compound command; solo: they run as
// statements of their own (a body), not as a condition or an operand.
type list struct {
	stmts []*syntax.Stmt
	solo  bool
}

// inner are the statement lists of a compound command, in order.
func inner(cmd syntax.Command) []list {
	one := func(st *syntax.Stmt) []*syntax.Stmt { return []*syntax.Stmt{st} }
	var out []list
	switch c := cmd.(type) {
	case *syntax.BinaryCmd:
		out = append(out, list{one(c.X), false}, list{one(c.Y), false})
	case *syntax.Block:
		out = append(out, list{c.Stmts, true})
	case *syntax.Subshell:
		out = append(out, list{c.Stmts, true})
	case *syntax.IfClause:
		for ic := c; ic != nil; ic = ic.Else {
			out = append(out, list{ic.Cond, false}, list{ic.Then, true})
		}
	case *syntax.WhileClause:
		out = append(out, list{c.Cond, false}, list{c.Do, true})
	case *syntax.ForClause:
		out = append(out, list{c.Do, true})
	case *syntax.CaseClause:
		for _, it := range c.Items {
			out = append(out, list{it.Stmts, true})
		}
	case *syntax.FuncDecl:
		out = append(out, list{one(c.Body), true})
	case *syntax.TimeClause:
		if c.Stmt != nil {
			out = append(out, list{one(c.Stmt), false})
		}
	case *syntax.CoprocClause:
		out = append(out, list{one(c.Stmt), false})
	}
	return out
}

// alone: the statement is the only thing on its line (a trailing comment
// aside), so removing its only assignment removes the line.
func (s *Script) alone(v *view, st *syntax.Stmt, solo bool) bool {
	if v.from != nil || !solo || len(st.Redirs) > 0 || st.Background || st.Negated {
		return false
	}
	a, b := int(st.Pos().Offset()), int(st.End().Offset())
	la, ca := s.lineOf(a)
	lb, _ := s.lineOf(b)
	if la != lb || strings.TrimSpace(s.Lines[la-1][:min(ca, len(s.Lines[la-1]))]) != "" {
		return false
	}
	rest := s.restOfLine(b)
	return rest == "" || strings.HasPrefix(rest, "#")
}

// assign records NAME=VALUE.
func (s *Script) assign(v *view, a *syntax.Assign, export, alone bool) {
	if a.Name == nil || a.Naked || a.Array != nil || a.Index != nil || a.Append {
		return
	}
	val := token{}
	if a.Value != nil {
		val = s.word(v, a.Value)
	}
	from, to := v.start(int(a.Pos().Offset())), v.end(int(a.End().Offset()))
	line, col := s.lineOf(from)
	if x, ok := s.expand(val.text); ok && val.unknown == "" {
		// the variables the value refers to, as they stand here
		// (PORT=${PORT:-8000})
		val.text = x
	}
	s.Env[a.Name.Value] = &Assign{Name: a.Name.Value, Value: val.text, Line: line, Export: export, Alone: alone,
		raw: s.text[from:to], col: col, quote: v.quote(int(a.Pos().Offset())), endQuote: v.quote(int(a.End().Offset()) - 1),
		unknown: val.unknown}
}

func (s *Script) decl(v *view, st *syntax.Stmt, d *syntax.DeclClause, solo bool) {
	export := d.Variant.Value == "export"
	if !export && d.Variant.Value != "declare" && d.Variant.Value != "typeset" && d.Variant.Value != "readonly" && d.Variant.Value != "local" {
		return
	}
	alone := len(d.Args) == 1 && s.alone(v, st, solo)
	for _, a := range d.Args {
		s.assign(v, a, export, alone)
	}
}

func (s *Script) call(v *view, st *syntax.Stmt, c *syntax.CallExpr, solo bool) {
	alone := len(c.Args) == 0 && len(c.Assigns) == 1 && s.alone(v, st, solo)
	for _, a := range c.Assigns {
		s.assign(v, a, false, alone)
	}
	if len(c.Args) == 0 {
		if len(c.Assigns) == 1 && c.Assigns[0].Name != nil {
			if a := s.Env[c.Assigns[0].Name.Value]; a != nil {
				a.whole = true
			}
		}
		return
	}
	cmd := make([]token, len(c.Args))
	for i, w := range c.Args {
		cmd[i] = s.word(v, w)
	}
	if cmd[0].text == "unset" {
		for _, t := range cmd[1:] {
			delete(s.Env, t.text)
		}
		return
	}
	if v.from == nil {
		s.containerEnv(cmd)
	}
	for i := range cmd {
		if v.from == nil && s.nested(cmd[i], st, c) {
			return
		}
		w := cmd[i].text
		serve := strings.HasSuffix(w, "vllm") && i+1 < len(cmd) && cmd[i+1].text == "serve"
		api := strings.HasPrefix(w, "vllm.entrypoints.openai.api_server")
		if !serve && !api {
			continue
		}
		cm := s.command(v, st, c, cmd, i, serve)
		s.Serve = cm
		s.Serves = append(s.Serves, cm)
		return
	}
}

// command makes the Command of words cmd, whose vLLM entry point is at i.
func (s *Script) command(v *view, st *syntax.Stmt, c *syntax.CallExpr, cmd []token, i int, serve bool) *Command {
	cm := &Command{run: s.run, env: make(map[string]*Assign, len(s.Env))}
	for k, a := range s.Env {
		cm.env[k] = a
	}
	cm.FirstLine, _ = s.lineOf(v.start(int(c.Pos().Offset())))
	cm.LastLine, _ = s.lineOf(v.end(int(c.End().Offset())))
	if v.from != nil {
		// the outer command's lines (docker run ... bash -c "...")
		cm.FirstLine, cm.LastLine = s.outer[0], s.outer[1]
	}
	last := c.Args[len(c.Args)-1]
	off, q, ok := v.after(int(last.End().Offset()))
	cm.quote, cm.insCol = q, -1
	if ok {
		cm.insLine, cm.insCol = s.lineOf(off)
	}
	if v.from == nil {
		// something follows the command on its line (&& ..., > log &, a
		// continuation to a redirection): a flag goes after its last word
		rest := s.restOfLine(int(last.End().Offset()))
		cm.inline = rest != "" && !strings.HasPrefix(rest, "#")
	}
	j := i + 1
	if serve {
		j = i + 2
		if j < len(cmd) && !strings.HasPrefix(cmd[j].text, "-") {
			cm.Model, cm.model = cmd[j].text, &cmd[j]
			j++
		}
	}
	s.flags(cm, cmd[j:])
	return cm
}

// flags reads the words after the model as flags.
func (s *Script) flags(c *Command, cmd []token) {
	for j := 0; j < len(cmd); j++ {
		t := cmd[j]
		short := shortFlags[strings.SplitN(t.text, "=", 2)[0]]
		if !strings.HasPrefix(t.text, "--") && short == "" {
			switch {
			case t.unknown != "":
				c.opaque = append(c.opaque, t)
			case strings.HasPrefix(t.text, "$"):
				c.vars = append(c.vars, t)
			}
			continue
		}
		f := &Flag{Name: t.text, Line: t.line, raw: t.raw, rawLine: t.line, nameRaw: t.raw, col: t.col, quote: t.q, endQuote: t.qe, unknown: t.unknown}
		if name, val, ok := strings.Cut(t.text, "="); ok {
			f.Name, f.Value, f.HasValue = name, val, true
		} else if !booleanFlags[t.text] && j+1 < len(cmd) && !strings.HasPrefix(cmd[j+1].text, "--") && shortFlags[cmd[j+1].text] == "" {
			n := cmd[j+1]
			f.Value, f.HasValue, f.unknown = n.text, true, n.unknown
			f.rawLine, f.valRaw, f.valCol, f.valQuote, f.valEnd = n.line, n.raw, n.col, n.q, n.qe
			if n.line == t.line {
				f.raw, f.endQuote = s.text[t.from:n.to], n.qe
			}
			j++
		}
		if short != "" {
			f.Name = short
		}
		if f.Name == "--model" && f.HasValue {
			c.Model = f.Value
			c.model = &cmd[j]
		}
		c.Flags = append(c.Flags, f)
	}
}

// containerEnv records the -e/--env NAME=VALUE options of a `docker run`
// (or podman): in a script that starts vLLM in a container, that is where
// its environment is set (an `export` on the host does not reach it).
func (s *Script) containerEnv(cmd []token) {
	if len(cmd) < 2 || cmd[1].text != "run" {
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
		name, val, ok := strings.Cut(cmd[i+1].text, "=")
		if ok && isName(name) && cmd[i].line == cmd[i+1].line {
			s.Env[name] = &Assign{Name: name, Value: val, Line: cmd[i].line, Export: true, docker: true,
				raw: s.text[cmd[i].from:cmd[i+1].to], col: cmd[i].col, unknown: cmd[i+1].unknown}
			i++
		}
	}
}

func isName(name string) bool {
	for i, c := range name {
		if !(c == '_' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return name != ""
}

// nested reads a quoted word that holds the vLLM command itself, as in
// `bash -c "vllm serve ..."` (often the last word of a `docker run`):
// the word is unquoted and parsed again, each of its bytes keeping its
// place in the file, so the inner words have their own lines and raw
// text there and edits land inside the quotes.
func (s *Script) nested(t token, st *syntax.Stmt, c *syntax.CallExpr) bool {
	if !t.quoted {
		return false
	}
	if !strings.Contains(t.text, "vllm serve") && !strings.Contains(t.text, "vllm.entrypoints.openai.api_server") {
		return false
	}
	v := unquoted(s.text, t.word)
	if v == nil {
		return false
	}
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(v.text), "")
	if err != nil {
		return false
	}
	first, _ := s.lineOf(int(c.Pos().Offset()))
	last, _ := s.lineOf(int(c.End().Offset()))
	s.outer = [2]int{first, last}
	n := len(s.Serves)
	s.stmts(v, f.Stmts, false)
	return len(s.Serves) > n
}

// unquoted is the view of word w of the file: its text as the shell
// passes it on, each byte with its place and quote in the file (nil when
// the word holds a $'...' string).
func unquoted(file string, w *syntax.Word) *view {
	v := &view{}
	at := func(p syntax.Pos) int { return min(int(p.Offset()), len(file)) }
	var text []byte
	emit := func(c byte, from, to int, q byte) {
		text = append(text, c)
		v.from, v.to, v.ctx = append(v.from, from), append(v.to, to), append(v.ctx, q)
	}
	// lit emits the literal file[a:b], whose backslashes escape what
	// escapes (every byte outside quotes, only "\$` and newline inside)
	lit := func(a, b int, q byte) {
		for o := a; o < b; o++ {
			if file[o] == '\\' && o+1 < b {
				if file[o+1] == '\n' {
					o++
					continue
				}
				if q == outside || strings.IndexByte("\"\\$`", file[o+1]) >= 0 {
					emit(file[o+1], o, o+2, q)
					o++
					continue
				}
			}
			emit(file[o], o, o+1, q)
		}
	}
	raw := func(n syntax.Node, q byte) {
		for o := at(n.Pos()); o < at(n.End()); o++ {
			emit(file[o], o, o+1, q)
		}
	}
	v.endAt = at(w.End())
	for _, p := range w.Parts {
		switch p := p.(type) {
		case *syntax.SglQuoted:
			if p.Dollar {
				return nil
			}
			for o := at(p.Left) + 1; o < at(p.Right); o++ {
				emit(file[o], o, o+1, '\'')
			}
			v.endAt, v.endCtx = at(p.Right), '\''
			continue
		case *syntax.DblQuoted:
			for _, ip := range p.Parts {
				if l, ok := ip.(*syntax.Lit); ok {
					lit(at(l.Pos()), at(l.End()), '"')
				} else {
					raw(ip, '"')
				}
			}
			v.endAt, v.endCtx = at(p.Right), '"'
			continue
		case *syntax.Lit:
			lit(at(p.Pos()), at(p.End()), outside)
		default:
			raw(p, outside)
		}
		v.endAt, v.endCtx = at(w.End()), outside
	}
	v.text = string(text)
	return v
}

// word reads word w of view v.
func (s *Script) word(v *view, w *syntax.Word) token {
	b := min(int(w.End().Offset()), len(v.text)) // (the parser may end a word past the text)
	a := min(int(w.Pos().Offset()), b)
	t := token{from: v.start(a), to: v.end(b), q: v.quote(a), word: w}
	if v.from != nil && b > a {
		// in a nested command, a word that starts or ends outside the
		// quotes ('\''{"a":1}'\'' in '...') takes the quotes around it, so
		// that it starts and ends in the quote its replacement is
		// escaped for
		t.qe = v.ctx[b-1]
		if t.q == outside && a > 0 && isQuote(v.ctx[a-1]) {
			t.from, t.q = v.to[a-1], v.ctx[a-1]
		}
		if t.qe == outside && isQuote(v.quote(b)) {
			t.to, t.qe = v.start(b), v.quote(b)
		}
	}
	t.raw = s.text[t.from:t.to]
	t.line, t.col = s.lineOf(t.from)
	var sb strings.Builder
	for _, p := range w.Parts {
		s.part(v, p, &sb, &t, false)
	}
	t.text = sb.String()
	return t
}

// part writes word part p unquoted, and says in t what in it is unknown.
func (s *Script) part(v *view, p syntax.WordPart, sb *strings.Builder, t *token, dbl bool) {
	b := min(int(p.End().Offset()), len(v.text))
	src := v.text[min(int(p.Pos().Offset()), b):b]
	unknown := func(what string) {
		if t.unknown == "" {
			t.unknown = what + " " + src
		}
		sb.WriteString(src)
	}
	switch p := p.(type) {
	case *syntax.Lit:
		for i := 0; i < len(src); i++ {
			if src[i] == '\\' && i+1 < len(src) && (src[i+1] == '\n' || !dbl || strings.IndexByte("\"\\$`", src[i+1]) >= 0) {
				i++
				if src[i] == '\n' {
					continue
				}
			}
			sb.WriteByte(src[i])
		}
	case *syntax.SglQuoted:
		t.quoted = true
		if p.Dollar {
			unknown("the $'...' string")
			return
		}
		sb.WriteString(p.Value)
	case *syntax.DblQuoted:
		t.quoted = true
		for _, ip := range p.Parts {
			s.part(v, ip, sb, t, true)
		}
	case *syntax.ParamExp:
		if !plainParam(p) {
			unknown("the expansion")
			return
		}
		sb.WriteString(src)
	case *syntax.CmdSubst:
		unknown("the command substitution")
	case *syntax.ArithmExp:
		unknown("the arithmetic expansion")
	case *syntax.ProcSubst:
		unknown("the process substitution")
	default:
		unknown("the pattern")
	}
}

// plainParam: p is $NAME, ${NAME}, ${NAME:-word} or ${NAME-word} with a
// literal word, which expand evaluates from the script's own variables.
func plainParam(p *syntax.ParamExp) bool {
	if p.Param == nil || !isName(p.Param.Value) || p.Excl || p.Length || p.Width || p.Index != nil ||
		p.Slice != nil || p.Repl != nil || p.Names != 0 || p.Flags != nil || p.NestedParam != nil || len(p.Modifiers) > 0 {
		return false
	}
	if p.Exp == nil {
		return true
	}
	if p.Exp.Op != syntax.DefaultUnset && p.Exp.Op != syntax.DefaultUnsetOrNull {
		return false
	}
	if p.Exp.Word != nil {
		for _, wp := range p.Exp.Word.Parts {
			if l, ok := wp.(*syntax.Lit); !ok || strings.ContainsAny(l.Value, "}\\") {
				return false
			}
		}
	}
	return true
}
