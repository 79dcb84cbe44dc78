package rulefmt

import (
	"bytes"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"path"
	"slices"
	"sort"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/npuprof/npuprof/internal/analysis"
	"github.com/npuprof/npuprof/internal/editdist"
	"github.com/npuprof/npuprof/internal/errkind"
	"github.com/npuprof/npuprof/internal/fix"
	"github.com/npuprof/npuprof/internal/infile"
	"github.com/npuprof/npuprof/internal/lang"
	"github.com/npuprof/npuprof/internal/lazyre"
	"github.com/npuprof/npuprof/internal/results"
)

// Builtin is a program's own rule files, embedded in it: every Dir/*.yaml
// of FS, named Prefix+path in positions (internal/rules/builtin/NAME.yaml), each
// file's Chinese texts in Dir/zh/NAME (read on first use).
type Builtin struct {
	FS          fs.FS
	Dir, Prefix string
	// Eager compiles every expression and template at load, as a user's
	// rule file is; else each is compiled on first use (an English run
	// that fires few rules compiles few).
	Eager bool
	// Decoded, when set, is the files' pre-decoded form (generated from
	// them, BuiltinDecoded; a test keeps it in sync): Load then neither
	// runs the YAML decoder nor parses each expression for its names.
	Decoded *Decoded
}

// Decoded is rule files decoded ahead of time: each file's YAML tree by
// its path in the Builtin's FS, and the names each expression of them
// uses (sorted by source), which Load would find by parsing it.
type Decoded struct {
	Docs map[string]*yaml.Node
	// Sums are the CRC-32 (IEEE) of each file's bytes: a file whose bytes
	// changed since is decoded from them, not taken from Docs.
	Sums  map[string]uint32
	Names []ExprNames
}

// ExprNames are the names one expression source uses, as Load finds
// them: its identifiers, metrics and facts, once each, in order.
type ExprNames struct {
	Src                    string
	Idents, Metrics, Facts []string
}

// names returns the names of expression src (false: not in the table).
func (d *Decoded) names(src string) (*ExprNames, bool) {
	i, ok := slices.BinarySearchFunc(d.Names, src, func(n ExprNames, s string) int { return strings.Compare(n.Src, s) })
	if !ok {
		return nil, false
	}
	return &d.Names[i], true
}

// Files returns the names of the built-in rule files, sorted.
func (b *Builtin) Files() ([]string, error) {
	entries, err := fs.Glob(b.FS, path.Join(b.Dir, "*.yaml"))
	sort.Strings(entries)
	return entries, err
}

// Load loads the built-in rules (b may be nil: none) and the given rule
// files. All problems in all files are reported together, as one
// errkind.Input list error (errkind.Problems returns them, each with
// file:line:col).
func Load(b *Builtin, files ...string) (*Set, error) {
	set := &Set{}
	var problems []string
	if b != nil {
		entries, err := b.Files()
		if err != nil {
			return nil, err
		}
		for _, e := range entries {
			data, err := fs.ReadFile(b.FS, e)
			if err != nil {
				return nil, err
			}
			if doc := b.decoded(e, data); doc != nil {
				l := &loader{file: b.Prefix + e, lines: strings.Split(string(data), "\n"), lazy: true, names: b.Decoded}
				problems = append(problems, set.addDoc(l, doc, true)...)
			} else {
				problems = append(problems, set.add(b.Prefix+e, data, true, !b.Eager)...)
			}
			zh := path.Join(b.Dir, lang.ZH, path.Base(e))
			set.lazyTexts(b.Prefix+e, b.Prefix+zh, func() ([]byte, error) { return fs.ReadFile(b.FS, zh) })
		}
	}
	for _, f := range files {
		if f == "" {
			problems = append(problems, "--rules: the file name is empty: expected a rule FILE (YAML, see docs/rules.md)")
			continue
		}
		data, err := infile.ReadFile(f, infile.Rules, infile.Opts{})
		if err != nil {
			if errkind.Of(err) == errkind.Usage {
				// not a regular file, or too large: the message names it
				problems = append(problems, err.Error())
				continue
			}
			// the *PathError repeats the name ("open FILE: ...")
			var pe *fs.PathError
			if errors.As(err, &pe) {
				err = pe.Err
			}
			problems = append(problems, fmt.Sprintf("%s: cannot read rule file: %v", f, err))
			continue
		}
		problems = append(problems, set.add(f, data, false, false)...)
	}
	if len(problems) == 0 {
		problems = set.checkRefs()
		// a file's disable/only names rules of any file, loaded or not yet
		for _, sel := range set.pending {
			problems = append(problems, set.selectProblems(sel)...)
		}
	}
	if len(problems) > 0 {
		return nil, errkind.List(errkind.Input, problems)
	}
	return set, nil
}

// decoded is file's pre-decoded tree (nil: decode data; always so when
// compiling eagerly, or when data is not what was decoded).
func (b *Builtin) decoded(file string, data []byte) *yaml.Node {
	if b.Decoded == nil || b.Eager {
		return nil
	}
	if sum, ok := b.Decoded.Sums[file]; !ok || sum != crc32.ChecksumIEEE(data) {
		return nil
	}
	return b.Decoded.Docs[file]
}

// Parse loads one rule file from memory (no built-in rules).
func Parse(name string, data []byte) (*Set, error) {
	set := &Set{}
	if p := set.add(name, data, false, false); len(p) > 0 {
		return nil, errkind.List(errkind.Input, p)
	}
	return set, nil
}

// file-level schema
var (
	fileKeys   = []string{"rules", "budgets", "disable", "only", "no_builtin"}
	ruleKeys   = []string{"id", "summary", "title", "severity", "applies_to", "thresholds", "vars", "when", "saving", "ranks", "evidence", "fix", "edits", "docs", "why", "transforms", "requires", "conflicts", "supersedes", "needs", "patches", "claims", "zh"}
	zhKeys     = []string{"summary", "title", "fix", "why", "evidence"}
	zhEvKeys   = []string{"metric", "note"}
	appliesKey = []string{"vllm_ascend_version", "workload", "phase", "model_family", "moe_dispatcher"}
	evKeys     = []string{"metric", "of", "note"}
	editKeys   = []string{"op", "name", "value", "create", "if"}
	budgetKeys = []string{"id", "budget", "severity", "title"}
	severities = []string{results.SeverityHigh, results.SeverityMedium, results.SeverityLow, results.SeverityInfo, "auto"}
	reID       = lazyre.New(`^[a-z][a-z0-9-]*[a-z0-9]$`)
	reVar      = lazyre.New(`^[a-z][a-z0-9_]*$`)
	reBudget   = lazyre.New(`^\s*([A-Za-z0-9_.]+)\s*(<=|>=|<|>|==)\s*(.+?)\s*$`)
)

// loader holds the state of loading one file.
type loader struct {
	file     string
	lines    []string
	problems []string
	// lazy: compile expressions and templates on first use (built-in
	// rules only: see compiler.lazy)
	lazy bool
	// names: a pre-decoded file's expression names (Builtin.Decoded)
	names *Decoded
	// record, when set, is given the names of each expression (BuiltinDecoded)
	record func(ExprNames)
}

func (l *loader) errf(n *yaml.Node, format string, args ...any) {
	line, col := 0, 0
	if n != nil {
		line, col = n.Line, n.Column
	}
	l.problems = append(l.problems, fmt.Sprintf("%s:%d:%d: %s", l.file, line, col, fmt.Sprintf(format, args...)))
}

// mapping returns the key/value pairs of a mapping node, reporting unknown
// and duplicate keys.
func (l *loader) mapping(n *yaml.Node, what string, known []string) map[string]*yaml.Node {
	out := map[string]*yaml.Node{}
	if n.Kind != yaml.MappingNode {
		l.errf(n, "%s: expected a mapping, found %s", what, kindName(n))
		return out
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if !contains(known, k.Value) {
			l.errf(k, "%s: unknown key %q (expected one of %s%s)", what, k.Value, strings.Join(known, ", "), didYouMean(k.Value, known))
			continue
		}
		if _, dup := out[k.Value]; dup {
			l.errf(k, "%s: key %q given twice", what, k.Value)
			continue
		}
		out[k.Value] = v
	}
	return out
}

func didYouMean(s string, known []string) string {
	c := Closest(s, known, 1)
	if len(c) == 1 && editdist.Distance(s, c[0]) <= 3 {
		return "; did you mean " + c[0] + "?"
	}
	return ""
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		return "a scalar"
	case yaml.AliasNode:
		return "an alias"
	}
	return "nothing"
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

func (l *loader) str(n *yaml.Node, what string) string {
	if n == nil {
		return ""
	}
	if n.Kind != yaml.ScalarNode {
		l.errf(n, "%s: expected text, found %s", what, kindName(n))
		return ""
	}
	return n.Value
}

// oneOf reads a list of text whose items must be among allowed.
func (l *loader) oneOf(n *yaml.Node, what string, allowed []string) []string {
	out := l.strList(n, what)
	for i, v := range out {
		if !contains(allowed, v) {
			at := n
			if n.Kind == yaml.SequenceNode {
				at = n.Content[i]
			}
			l.errf(at, "%s: %q is not one of %s%s", what, v, strings.Join(allowed, ", "), didYouMean(v, allowed))
		}
	}
	return out
}

var (
	workloads   = []string{"vllm", "training", "unknown"}
	phases      = []string{"decode", "prefill", "mixed"}
	dispatchers = []string{analysis.DispatcherAllGather, analysis.DispatcherMC2, analysis.DispatcherFusedMC2, analysis.DispatcherAllToAll}
)

func (l *loader) strList(n *yaml.Node, what string) []string {
	if n == nil {
		return nil
	}
	if n.Kind == yaml.ScalarNode {
		return []string{n.Value}
	}
	if n.Kind != yaml.SequenceNode {
		l.errf(n, "%s: expected a list of text, found %s", what, kindName(n))
		return nil
	}
	var out []string
	for _, c := range n.Content {
		out = append(out, l.str(c, what))
	}
	return out
}

// add loads one rule file. lazy defers compiling (built-in rules: the test
// suite compiles them all eagerly); user rule files are compiled at once,
// so every problem is reported at load time.
func (s *Set) add(file string, data []byte, builtin, lazy bool) []string {
	l := &loader{file: file, lines: strings.Split(string(data), "\n"), lazy: lazy}
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return []string{file + ": empty rule file (expected `rules:` and/or `budgets:`)"}
		}
		return []string{syntaxProblem(file, data, err)}
	}
	return s.addDoc(l, &doc, builtin)
}

// addDoc loads one rule file's decoded YAML document.
func (s *Set) addDoc(l *loader, doc *yaml.Node, builtin bool) []string {
	if len(doc.Content) == 0 {
		return []string{l.file + ": empty rule file (expected `rules:` and/or `budgets:`)"}
	}
	top := l.mapping(doc.Content[0], "rule file", fileKeys)
	for i, n := range l.seq(top["rules"], "rules") {
		if r := l.rule(n, i); r != nil {
			r.Builtin = builtin
			if prev := s.Lookup(r.ID); prev != nil {
				l.errf(n, "rule %s: id already defined at %s:%d", r.ID, prev.File, prev.Line)
				continue
			}
			s.Rules = append(s.Rules, r)
		}
	}
	if sel, ok := l.selection(top); ok {
		s.pending = append(s.pending, sel)
	}
	for _, n := range l.seq(top["budgets"], "budgets") {
		if b := l.budget(n); b != nil {
			s.Budgets = append(s.Budgets, b)
		}
	}
	return l.problems
}

// rule reads one rule: its id and severity, thresholds, applies_to, vars,
// expressions and templates, evidence and edits. Nil when it had problems.
func (l *loader) rule(n *yaml.Node, idx int) *Rule {
	before := len(l.problems)
	m := l.mapping(n, fmt.Sprintf("rule #%d", idx+1), ruleKeys)
	r := &Rule{File: l.file, Line: n.Line, Thresholds: map[string]float64{}}
	what := l.ruleID(n, m, r, idx)
	for _, k := range []string{"title", "when", "fix"} {
		if m[k] == nil {
			l.errf(n, "%s: missing %s", what, k)
		}
	}
	r.Severity = l.str(m["severity"], "severity")
	if r.Severity == "" {
		r.Severity = "auto"
	}
	if !contains(severities, r.Severity) {
		l.errf(m["severity"], "%s: severity %q (expected one of %s)", what, r.Severity, strings.Join(severities, ", "))
	}
	l.thresholds(m["thresholds"], r, what)
	if an := m["applies_to"]; an != nil {
		l.appliesTo(an, r, what)
	}
	c := &compiler{l: l, rule: r, what: what, lazy: l.lazy, scope: -1}
	c.vars(m["vars"])
	if v := m["title"]; v != nil {
		r.Title = c.template(v, "title")
	}
	if v := m["when"]; v != nil {
		r.When = c.expr(v, "when", kindBool)
	}
	if v := m["saving"]; v != nil {
		r.Saving = c.expr(v, "saving", kindFloat)
	}
	if v := m["ranks"]; v != nil {
		r.Ranks = c.expr(v, "ranks", kindAny)
	}
	if v := m["fix"]; v != nil {
		r.Fix = c.template(v, "fix")
	}
	r.Docs = l.str(m["docs"], "docs")
	r.Why = l.str(m["why"], "why")
	c.planFields(m, r)
	c.claims(m["claims"], r)
	r.Summary = l.str(m["summary"], "summary")
	for _, e := range l.seq(m["evidence"], what+": evidence") {
		r.Evidence = append(r.Evidence, c.evidence(e))
	}
	for _, e := range l.seq(m["edits"], what+": edits") {
		r.Edits = append(r.Edits, c.edit(e))
	}
	if zn := m["zh"]; zn != nil {
		r.zh = c.texts(zn, "zh")
	}
	if len(l.problems) > before {
		return nil
	}
	return r
}

// ruleID checks the rule's id and returns how messages name the rule.
func (l *loader) ruleID(n *yaml.Node, m map[string]*yaml.Node, r *Rule, idx int) string {
	r.ID = l.str(m["id"], "id")
	switch {
	case m["id"] == nil:
		l.errf(n, "rule #%d: missing id", idx+1)
	case !reID().MatchString(r.ID):
		l.errf(m["id"], "rule id %q: use lower-case words joined by '-' (e.g. moe-routing-cumsum)", r.ID)
	default:
		r.Line = m["id"].Line
		return "rule " + r.ID
	}
	return fmt.Sprintf("rule #%d", idx+1)
}

// seq is the items of sequence n (none when n is nil or not a list, the
// latter reported as what: expected a list).
func (l *loader) seq(n *yaml.Node, what string) []*yaml.Node {
	if n == nil {
		return nil
	}
	if n.Kind != yaml.SequenceNode {
		l.errf(n, "%s: expected a list, found %s", what, kindName(n))
		return nil
	}
	return n.Content
}

// pairs calls each for the key and value nodes of mapping n (nothing when
// n is nil; n not a mapping is reported as what: expected a mapping of
// shape).
func (l *loader) pairs(n *yaml.Node, what, shape string, each func(k, v *yaml.Node)) {
	if n == nil {
		return
	}
	if n.Kind != yaml.MappingNode {
		l.errf(n, "%s: expected a mapping of %s, found %s", what, shape, kindName(n))
		return
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		each(n.Content[i], n.Content[i+1])
	}
}

// thresholds reads the rule's thresholds: name: number.
func (l *loader) thresholds(tn *yaml.Node, r *Rule, what string) {
	l.pairs(tn, what+": thresholds", "name: number", func(k, v *yaml.Node) {
		f, err := strconv.ParseFloat(v.Value, 64)
		if v.Kind != yaml.ScalarNode || err != nil {
			l.errf(v, "%s: threshold %s: expected a number, found %q", what, k.Value, v.Value)
			return
		}
		r.Thresholds[k.Value] = f
	})
}

// appliesTo reads the rule's applies_to: the versions, workloads, phases,
// model families and dispatchers it is for.
func (l *loader) appliesTo(an *yaml.Node, r *Rule, what string) {
	am := l.mapping(an, what+": applies_to", appliesKey)
	r.AppliesTo.VllmAscend = l.str(am["vllm_ascend_version"], "vllm_ascend_version")
	if r.AppliesTo.VllmAscend != "" {
		if _, err := parseRange(r.AppliesTo.VllmAscend); err != nil {
			l.errf(am["vllm_ascend_version"], "%s: applies_to.vllm_ascend_version: %v", what, err)
		}
	}
	r.AppliesTo.Workload = l.oneOf(am["workload"], what+": applies_to.workload", workloads)
	r.AppliesTo.Phase = l.oneOf(am["phase"], what+": applies_to.phase", phases)
	r.AppliesTo.ModelFamily = l.strList(am["model_family"], "model_family")
	r.AppliesTo.Dispatcher = l.oneOf(am["moe_dispatcher"], what+": applies_to.moe_dispatcher", dispatchers)
}

// vars reads the rule's vars, each checked with the vars before it in
// scope.
func (c *compiler) vars(vn *yaml.Node) {
	l, r, what := c.l, c.rule, c.what
	l.pairs(vn, what+": vars", "name: expression", func(k, v *yaml.Node) {
		if !reVar().MatchString(k.Value) || metricFuncs[k.Value] || k.Value == "fact" || k.Value == "threshold" {
			l.errf(k, "%s: var name %q: use a lower-case identifier that is not a function name", what, k.Value)
			return
		}
		if v.Kind != yaml.ScalarNode {
			l.errf(v, "%s: var %s: expected an expression", what, k.Value)
			return
		}
		cv := *c
		cv.scope = len(r.Vars) // the vars before it
		if e := cv.exprAt(v, v.Value, 0, "var "+k.Value, kindAny); e != nil {
			r.Vars = append(r.Vars, Var{Name: k.Value, Source: v.Value, node: v, idents: e.idents, expr: e})
		}
	})
}

// evidence reads one evidence item: a known metric, how it is taken over
// ranks and an optional note.
func (c *compiler) evidence(e *yaml.Node) EvidenceSpec {
	l, what := c.l, c.what
	em := l.mapping(e, what+": evidence", evKeys)
	es := EvidenceSpec{Metric: l.str(em["metric"], "metric"), Of: l.str(em["of"], "of")}
	if es.Of == "" {
		es.Of = "mean"
	}
	if !contains([]string{"mean", "max", "min", "sum", "each"}, es.Of) {
		l.errf(em["of"], "%s: evidence of %q (expected mean, max, min, sum or each)", what, es.Of)
	}
	if em["metric"] == nil {
		l.errf(e, "%s: evidence: missing metric", what)
	} else if _, ok := LookupMetric(es.Metric); !ok {
		l.errf(em["metric"], "%s: unknown metric %q in evidence (closest: %s)", what, es.Metric, strings.Join(Closest(es.Metric, MetricNames(), 3), ", "))
	}
	if nn := em["note"]; nn != nil {
		es.Note = c.template(nn, "evidence note")
	}
	return es
}

// texts reads a rule's texts in language key (its zh: block): summary,
// title, fix, why and the notes of evidence items, each item named by its
// metric. A note needs an English note to translate.
func (c *compiler) texts(n *yaml.Node, key string) *Texts {
	l, r, what := c.l, c.rule, c.what+": "+key
	m := l.mapping(n, what, zhKeys)
	t := &Texts{Summary: l.str(m["summary"], key+".summary"), Why: l.str(m["why"], key+".why"), Notes: map[string]*Template{}}
	if v := m["title"]; v != nil {
		t.Title = c.template(v, key+".title")
	}
	if v := m["fix"]; v != nil {
		t.Fix = c.template(v, key+".fix")
	}
	for _, e := range l.seq(m["evidence"], what+".evidence") {
		em := l.mapping(e, what+".evidence", zhEvKeys)
		metric := l.str(em["metric"], "metric")
		i := slices.IndexFunc(r.Evidence, func(es EvidenceSpec) bool { return es.Metric == metric && es.Note != nil })
		switch {
		case em["metric"] == nil || em["note"] == nil:
			l.errf(e, "%s.evidence: expected metric and note", what)
		case i < 0:
			l.errf(em["metric"], "%s.evidence: the rule has no evidence item %q with a note", what, metric)
		case t.Notes[metric] != nil:
			l.errf(em["metric"], "%s.evidence: %q given twice", what, metric)
		default:
			t.Notes[metric] = c.template(em["note"], key+".evidence note")
		}
	}
	return t
}

// edit reads one edit: a fix action kind, its name, value, create and if.
func (c *compiler) edit(e *yaml.Node) EditSpec {
	l, what := c.l, c.what
	em := l.mapping(e, what+": edit", editKeys)
	es := EditSpec{Op: l.str(em["op"], "op"), Name: l.str(em["name"], "name")}
	if !slices.Contains(fix.Kinds, fix.Kind(es.Op)) {
		l.errf(em["op"], "%s: edit op %q (expected one of %s)", what, es.Op, kindList(fix.Kinds))
	}
	if es.Name == "" {
		l.errf(e, "%s: edit: missing name", what)
	}
	if v := em["value"]; v != nil {
		es.Value = c.template(v, "edit value")
	} else if k := fix.Kind(es.Op); k == fix.MergeJSON || k == fix.SetEnv || k == fix.CodeChange {
		l.errf(e, "%s: edit %s: missing value", what, es.Op)
	}
	if v := em["create"]; v != nil {
		es.Create = v.Value == "true"
	}
	if v := em["if"]; v != nil {
		es.If = c.expr(v, "edit if", kindBool)
	}
	return es
}

func (l *loader) budget(n *yaml.Node) *Budget {
	before := len(l.problems)
	b := &Budget{File: l.file, Line: n.Line, Severity: results.SeverityHigh}
	var textNode *yaml.Node
	if n.Kind == yaml.ScalarNode {
		textNode = n
	} else {
		m := l.mapping(n, "budget", budgetKeys)
		textNode = m["budget"]
		if textNode == nil {
			l.errf(n, "budget: missing budget (e.g. budget: \"hccl.allgather.time_us <= baseline * 1.05\")")
			return nil
		}
		b.ID = l.str(m["id"], "id")
		if s := l.str(m["severity"], "severity"); s != "" {
			if !contains(severities[:4], s) {
				l.errf(m["severity"], "budget: severity %q (expected high, medium, low or info)", s)
			}
			b.Severity = s
		}
	}
	b.Text = l.str(textNode, "budget")
	mm := reBudget().FindStringSubmatch(b.Text)
	if mm == nil {
		l.errf(textNode, "budget %q: expected METRIC OP EXPRESSION, e.g. hccl.allgather.time_us <= baseline * 1.05", b.Text)
		return nil
	}
	b.Metric, b.Op = mm[1], mm[2]
	if _, ok := LookupMetric(b.Metric); !ok && !IsPlanMetric(b.Metric) {
		l.errf(textNode, "budget: unknown metric %q (closest: %s)", b.Metric, strings.Join(Closest(b.Metric, MetricNames(), 3), ", "))
		return nil
	}
	if b.ID == "" {
		b.ID = "budget/" + b.Metric
	}
	off := strings.Index(b.Text, mm[3])
	c := &compiler{l: l, rule: &Rule{ID: b.ID}, what: "budget " + b.ID, budget: true, scope: -1}
	b.Bound = c.exprAt(textNode, mm[3], off, "budget", kindFloat)
	if len(l.problems) > before {
		return nil
	}
	return b
}

// position maps a rune offset inside a scalar's value to file line:col.
func (l *loader) position(n *yaml.Node, off int) (int, int) {
	switch n.Style {
	case yaml.LiteralStyle, yaml.FoldedStyle:
		// content starts on the line after the indicator
		first := n.Line // 1-based indicator line == index of the next line
		indent := -1
		var content []string
		for i := first; i < len(l.lines); i++ {
			raw := l.lines[i]
			if strings.TrimSpace(raw) == "" {
				content = append(content, "")
				continue
			}
			ind := len(raw) - len(strings.TrimLeft(raw, " "))
			if indent < 0 {
				indent = ind
			}
			if ind < indent {
				break
			}
			content = append(content, raw[indent:])
		}
		for k, c := range content {
			n := len([]rune(c))
			if off <= n {
				return first + 1 + k, indent + 1 + off
			}
			off -= n + 1
		}
		return n.Line, n.Column
	case yaml.DoubleQuotedStyle, yaml.SingleQuotedStyle:
		return n.Line, n.Column + 1 + off
	}
	return n.Line, n.Column + off
}

// kindList is the kinds as a rule file spells them, comma-separated.
func kindList(kinds []fix.Kind) string {
	s := make([]string, len(kinds))
	for i, k := range kinds {
		s[i] = string(k)
	}
	return strings.Join(s, ", ")
}

// BuiltinDecoded decodes b's rule files as Load does and returns them
// pre-decoded, for a generated Builtin.Decoded; a problem in any file is
// an error.
func BuiltinDecoded(b *Builtin) (*Decoded, error) {
	entries, err := b.Files()
	if err != nil {
		return nil, err
	}
	d := &Decoded{Docs: map[string]*yaml.Node{}, Sums: map[string]uint32{}}
	seen := map[string]bool{}
	set := &Set{}
	for _, e := range entries {
		data, err := fs.ReadFile(b.FS, e)
		if err != nil {
			return nil, err
		}
		var doc yaml.Node
		if err := yaml.NewDecoder(bytes.NewReader(data)).Decode(&doc); err != nil {
			return nil, fmt.Errorf("%s: %w", e, err)
		}
		l := &loader{file: b.Prefix + e, lines: strings.Split(string(data), "\n"), lazy: true, record: func(n ExprNames) {
			if !seen[n.Src] {
				seen[n.Src] = true
				d.Names = append(d.Names, n)
			}
		}}
		if p := set.addDoc(l, &doc, true); len(p) > 0 {
			return nil, errors.New(strings.Join(p, "; "))
		}
		d.Docs[e] = &doc
		d.Sums[e] = crc32.ChecksumIEEE(data)
	}
	slices.SortFunc(d.Names, func(a, b ExprNames) int { return strings.Compare(a.Src, b.Src) })
	return d, nil
}
