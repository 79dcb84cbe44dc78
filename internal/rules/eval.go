package rules

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"reflect"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/expr-lang/expr"
	"github.com/expr-lang/expr/file"

	"github.com/npuprof/npuprof/internal/analysis"
	"github.com/npuprof/npuprof/internal/fix"
	"github.com/npuprof/npuprof/internal/lang"
	"github.com/npuprof/npuprof/internal/results"
	"github.com/npuprof/npuprof/internal/results/metric"
	"github.com/npuprof/npuprof/internal/rules/rulefmt"
	"github.com/npuprof/npuprof/internal/units"
)

// Input is everything rules read.
type Input struct {
	Result   *analysis.Result
	Facts    *FactSet
	Baseline *results.Baseline
	// Lang is the language the rules write their texts in (lang.EN or
	// lang.ZH; "" is English).
	Lang string

	partial *partialIndex // built on first use from Result
}

// Report is the result of evaluating a rule set.
type Report struct {
	// Findings are sorted by saving, largest first.
	Findings []Fired
	// Outcomes are in rule order (built-in rules, user rules, budgets).
	Outcomes []results.Outcome
	// Diff is the deployment script's change as one unified diff (""
	// without a script or edits), made by ApplyFixes after the plan.
	Diff string
	// Plan is the fix plan (package plan), nil when none was built.
	Plan *results.Plan
	// Warnings are about the rules' inputs, for people: e.g. a --deploy
	// script that starts several `vllm serve` commands, and which one the
	// facts and the diff use.
	Warnings []string
	// Lang is the language of the findings' texts (lang.EN or lang.ZH).
	Lang string
	// Times are how long each rule and budget took to evaluate, by id.
	Times map[string]time.Duration
}

// Failed returns the outcomes with status failed.
func (r *Report) Failed() []results.Outcome {
	var out []results.Outcome
	for _, o := range r.Outcomes {
		if o.Status == results.StatusFailed {
			out = append(out, o)
		}
	}
	return out
}

// usedInOrder is the order of a PartialInput's UsedIn.
var usedInOrder = []string{results.UsedInWhen, results.UsedInSaving, results.UsedInSeverity, results.UsedInRanks, results.UsedInEvidence, results.UsedInText}

// Evaluate runs every rule and budget of set over in.
func Evaluate(set *Set, in *Input) *Report {
	if in.Facts == nil {
		in.Facts = NewFactSet()
	}
	rep := &Report{Findings: []Fired{}, Outcomes: []results.Outcome{}, Lang: lang.Or(in.Lang), Times: map[string]time.Duration{}}
	timed := func(eval func() (results.Outcome, *Fired)) {
		t0 := time.Now()
		o, f := eval()
		rep.Times[o.Rule] = time.Since(t0)
		rep.Outcomes = append(rep.Outcomes, o)
		if f != nil {
			rep.Findings = append(rep.Findings, *f)
		}
	}
	for _, r := range set.Rules {
		if why := set.Disabled(r.ID); why != "" {
			rep.Outcomes = append(rep.Outcomes, outcome(r, results.StatusDisabled, why))
			continue
		}
		timed(func() (results.Outcome, *Fired) { return evalRule(r, in) })
	}
	for _, b := range set.Budgets {
		if why := set.Disabled(b.ID); why != "" {
			rep.Outcomes = append(rep.Outcomes, results.Outcome{Rule: b.ID, Status: results.StatusDisabled, Reason: why})
			continue
		}
		timed(func() (results.Outcome, *Fired) { return evalBudget(b, in) })
	}
	SortFindings(rep.Findings)
	return rep
}

// SortFindings orders findings by saving (largest first), then severity,
// then rule id.
func SortFindings(f []Fired) {
	sort.SliceStable(f, func(i, j int) bool {
		// no estimate orders as 0: after every saving, then by severity
		si, _ := f[i].Saving()
		sj, _ := f[j].Saving()
		if si != sj {
			return si > sj
		}
		if a, b := results.SeverityRank(f[i].Severity), results.SeverityRank(f[j].Severity); a != b {
			return a > b
		}
		return f[i].Rule < f[j].Rule
	})
}

// state is one evaluation of one rule.
type state struct {
	in      *Input
	missing []string
	env     env
	envM    map[string]any // env as a map (envMap)
	// phase is the part of the rule being evaluated (UsedIn*); metrics read
	// while it is set are checked against the partial index. "" records
	// nothing.
	phase string
	// used holds, per partial rank and metric, the phases that read it.
	used map[partialKey]map[string]bool
	// rule is the rule evaluated; claimSet its claims, once resolved
	rule     *Rule
	claimSet claimSet
	// the rule's var values computed in the current run (varValue)
	varVals []any
	varDone []bool
}

type partialKey struct {
	rank   int
	metric string
	// baseline: a rank of the --baseline document, not of this capture
	baseline bool
}

// partialIndex is, per rank, the metrics computed from a file cut short.
type partialIndex struct {
	metrics  map[int]map[string]bool
	measured map[int]map[string]float64
	reason   map[int]string
	ranks    []int // ranks with partial metrics, sorted
}

func buildPartialIndex(res *analysis.Result) *partialIndex {
	pi := &partialIndex{metrics: map[int]map[string]bool{}, measured: map[int]map[string]float64{}, reason: map[int]string{}}
	if res == nil {
		return pi
	}
	pi.metrics, pi.ranks = metric.PartialSets(len(res.Ranks), func(i int) (int, []string) {
		return res.Ranks[i].Rank, res.Ranks[i].PartialMetrics
	})
	for _, rr := range res.Ranks {
		if len(rr.PartialMetrics) > 0 {
			pi.measured[rr.Rank] = rr.Metrics
			pi.reason[rr.Rank] = rr.PartialReason
		}
	}
	return pi
}

// partialRanks returns the ranks whose value in vals (from rankValues) was
// computed from a cut file, sorted. A cluster value (rank -1) is partial on
// every partial rank; a family member taken as 0 is partial when its family
// base was.
func (st *state) partialRanks(name string, vals map[int]float64) []int {
	pi := st.in.partial
	if pi == nil || len(pi.ranks) == 0 {
		return nil
	}
	if _, ok := vals[-1]; ok && len(vals) == 1 {
		if d, _ := LookupMetric(name); d.IsCluster() {
			return append([]int(nil), pi.ranks...)
		}
	}
	var out []int
	for _, r := range pi.ranks {
		if _, ok := vals[r]; !ok {
			continue
		}
		if pi.metrics[r][name] {
			out = append(out, r)
			continue
		}
		if _, measured := pi.measured[r][name]; measured {
			continue
		}
		// a family member taken as 0: partial when its base is
		if d, _ := LookupMetric(name); d.Base != "" && pi.metrics[r][d.Base] {
			out = append(out, r)
		}
	}
	return out
}

// record notes that the current phase read name on ranks.
func (st *state) record(phase, name string, ranks []int) {
	if phase == "" {
		return
	}
	for _, r := range ranks {
		k := partialKey{rank: r, metric: name}
		if st.used[k] == nil {
			st.used[k] = map[string]bool{}
		}
		st.used[k][phase] = true
	}
}

// recordBaseline notes that the current phase read the baseline's value
// of name, computed from a file cut short on the baseline's ranks.
func (st *state) recordBaseline(name string) { st.recordBaselineIn(st.phase, name) }

func (st *state) recordBaselineIn(phase, name string) {
	if phase == "" || st.in.Baseline == nil {
		return
	}
	for _, r := range st.in.Baseline.PartialRanks[name] {
		k := partialKey{rank: r, metric: name, baseline: true}
		if st.used[k] == nil {
			st.used[k] = map[string]bool{}
		}
		st.used[k][phase] = true
	}
}

// partialInputs groups what was recorded by rank: this capture's ranks
// first, then the baseline's.
func (st *state) partialInputs() []results.PartialInput {
	if len(st.used) == 0 {
		return nil
	}
	type rk struct {
		rank     int
		baseline bool
	}
	byRank := map[rk]*results.PartialInput{}
	phases := map[rk]map[string]bool{}
	for k, ph := range st.used {
		key := rk{k.rank, k.baseline}
		p := byRank[key]
		if p == nil {
			p = &results.PartialInput{Rank: k.rank, Baseline: k.baseline}
			if k.baseline {
				p.Reason = "baseline " + st.in.Baseline.Path + ": " + st.in.Baseline.PartialReason[k.rank]
			} else {
				p.Reason = st.in.partial.reason[k.rank]
			}
			byRank[key] = p
			phases[key] = map[string]bool{}
		}
		p.Metrics = append(p.Metrics, k.metric)
		for x := range ph {
			phases[key][x] = true
		}
	}
	out := make([]results.PartialInput, 0, len(byRank))
	for key, p := range byRank {
		sort.Strings(p.Metrics)
		p.UsedIn = []string{}
		for _, x := range usedInOrder {
			if phases[key][x] {
				p.UsedIn = append(p.UsedIn, x)
			}
		}
		out = append(out, *p)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Baseline != out[j].Baseline {
			return !out[i].Baseline
		}
		return out[i].Rank < out[j].Rank
	})
	return out
}

// usedIn reports whether any partial metric was read in phase.
func (st *state) usedIn(phase string) bool {
	for _, ph := range st.used {
		if ph[phase] {
			return true
		}
	}
	return false
}

func (st *state) unavailable(format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	if !contains(st.missing, msg) {
		st.missing = append(st.missing, msg)
	}
	return fmt.Errorf("%s: %w", msg, errUnavailable)
}

// rankValues returns the metric on each rank that measured it.
func (st *state) rankValues(name string) (map[int]float64, error) {
	d, _ := LookupMetric(name)
	res := st.in.Result
	if res == nil {
		return nil, st.unavailable("metric %s unavailable: no profile", name)
	}
	if d.IsCluster() {
		if res.Cluster != nil {
			if v, ok := res.Cluster.Metrics[name]; ok {
				out := map[int]float64{-1: v}
				st.record(st.phase, name, st.partialRanks(name, out))
				return out, nil
			}
			if why, ok := res.Cluster.Unavailable[name]; ok {
				return nil, st.unavailable("metric %s unavailable: %s", name, why)
			}
		}
		return nil, st.unavailable("metric %s unavailable: not computed", name)
	}
	out := map[int]float64{}
	why := ""
	for _, rr := range res.Ranks {
		if v, ok := rr.Metrics[name]; ok {
			out[rr.Rank] = v
			continue
		}
		zero := false
		if d.Name != name && d.Base != "" {
			// a missing member of a family is 0 when the family's base
			// metric was measured on that rank (no such collective happened)
			_, zero = rr.Metrics[d.Base]
		}
		if zero {
			out[rr.Rank] = 0
			continue
		}
		if why == "" {
			if w, ok := rr.Unavailable[name]; ok {
				why = w
			} else {
				for k, w := range rr.Unavailable {
					if strings.HasSuffix(k, ".*") && strings.HasPrefix(name, strings.TrimSuffix(k, "*")) {
						why = w
					}
				}
			}
		}
	}
	if len(out) == 0 {
		if why == "" {
			why = "not measured on any rank"
		}
		return nil, st.unavailable("metric %s unavailable: %s", name, why)
	}
	st.record(st.phase, name, st.partialRanks(name, out))
	return out, nil
}

func (st *state) agg(name string, fn func(vals map[int]float64) float64) (float64, error) {
	v, err := st.rankValues(name)
	if err != nil {
		return 0, err
	}
	return fn(v), nil
}

// sum adds the values in rank order, so results are byte-stable.
func sum(v map[int]float64) float64 {
	s := 0.0
	for _, r := range slices.Sorted(maps.Keys(v)) {
		s += v[r]
	}
	return s
}

func mean(v map[int]float64) float64 { return sum(v) / float64(len(v)) }

func argExt(v map[int]float64, better func(a, b float64) bool) (int, float64) {
	ranks := slices.Sorted(maps.Keys(v))
	at, best := ranks[0], v[ranks[0]]
	for _, r := range ranks[1:] {
		if better(v[r], best) {
			at, best = r, v[r]
		}
	}
	return at, best
}

// envMap is st.env as expressions run in it (rulefmt.EnvMap), built on
// first use: set st.envM to nil after changing st.env.
func (st *state) envMap() map[string]any {
	if st.envM == nil {
		st.envM = envMap(&st.env)
	}
	return st.envM
}

func newState(in *Input) *state {
	if in.partial == nil {
		in.partial = buildPartialIndex(in.Result)
	}
	st := &state{in: in, used: map[partialKey]map[string]bool{}}
	st.addMetricFuncs()
	st.addFactFuncs()
	st.addFormatFuncs()
	st.addContextFuncs()
	st.addClaimFuncs()
	varValue := st.varValue
	st.env.VarFloat = typed[float64](varValue)
	st.env.VarInt = typed[int](varValue)
	st.env.VarBool = typed[bool](varValue)
	st.env.VarString = typed[string](varValue)
	st.env.VarInts = typed[[]int](varValue)
	return st
}

// typed reads what get gives as a T: a var's value (its compiled type,
// rulefmt.VarFuncs) or a fact (the fact table fixes each fact's type).
func typed[T, K any](get func(K) (any, error)) func(K) (T, error) {
	return func(k K) (T, error) {
		v, err := get(k)
		if err != nil {
			var zero T
			return zero, err
		}
		return v.(T), nil
	}
}

// varValue is the value of the rule's var i in the current run: its
// program runs the first time the run asks (an expression binds the vars
// it needs in declaration order, as `let`s of their sources would), and
// its error is the one its source would have raised in place.
func (st *state) varValue(i int) (any, error) {
	if len(st.varDone) != len(st.rule.Vars) {
		st.varVals, st.varDone = make([]any, len(st.rule.Vars)), make([]bool, len(st.rule.Vars))
	}
	if st.varDone[i] {
		return st.varVals[i], nil
	}
	prog, err := st.rule.VarProgram(i)
	if err != nil {
		return nil, err
	}
	v, err := expr.Run(prog, st.envMap())
	if err != nil {
		var fe *file.Error
		if errors.As(err, &fe) {
			if fe.Prev != nil {
				return nil, fe.Prev
			}
			return nil, errors.New(fe.Message)
		}
		return nil, err
	}
	if t := st.rule.VarType(i); t != nil && reflect.TypeOf(v) != t {
		return nil, errVarType
	}
	st.varVals[i], st.varDone[i] = v, true
	return v, nil
}

// errVarType: a var's value is not of the type its expression was
// checked as (`min(x, 1)` is typed as x and may return the 1).
var errVarType = errors.New("a var's value is not of its checked type")

// addMetricFuncs sets the functions that read metrics of the result and
// of the baseline.
func (st *state) addMetricFuncs() {
	maxOf := func(v map[int]float64) float64 { _, m := argExt(v, func(a, b float64) bool { return a > b }); return m }
	minOf := func(v map[int]float64) float64 { _, m := argExt(v, func(a, b float64) bool { return a < b }); return m }
	st.env.Metric = func(n string) (float64, error) { return st.agg(n, mean) }
	st.env.MeanRanks = func(n string) (float64, error) { return st.agg(n, mean) }
	st.env.SumRanks = func(n string) (float64, error) { return st.agg(n, sum) }
	st.env.MaxRanks = func(n string) (float64, error) { return st.agg(n, maxOf) }
	st.env.MinRanks = func(n string) (float64, error) { return st.agg(n, minOf) }
	st.env.Count = func(n string) (int, error) {
		v, err := st.rankValues(n)
		return len(v), err
	}
	st.env.MaxRank = func(n string) (int, error) {
		v, err := st.rankValues(n)
		if err != nil {
			return 0, err
		}
		at, _ := argExt(v, func(a, b float64) bool { return a > b })
		return at, nil
	}
	st.env.RankMetric = st.rankMetric
	st.env.Has = st.has
	st.env.RanksWith = st.ranksAbove
	st.env.BaseMetric = st.baseMetric
	st.env.WaitedOp = st.waitedOp
	if st.in.Result != nil {
		for _, rr := range st.in.Result.Ranks {
			st.env.Ranks = append(st.env.Ranks, rr.Rank)
		}
	}
}

// rankMetric is rank_metric(m, r): m on rank r only.
func (st *state) rankMetric(n string, r int) (float64, error) {
	phase := st.phase
	st.phase = "" // only rank r is read
	v, err := st.rankValues(n)
	st.phase = phase
	if err != nil {
		return 0, err
	}
	x, ok := v[r]
	if !ok {
		return 0, st.unavailable("metric %s unavailable on rank %d", n, r)
	}
	st.record(phase, n, st.partialRanks(n, map[int]float64{r: x}))
	return x, nil
}

// has is has(m): never not-evaluated (the probe keeps its reasons), but
// the answer is an input like any other: measured on a rank cut short, m
// is recorded on it as metric(m) would be; not measured anywhere, a
// per-rank m is recorded on every rank cut short, whose missing part may
// have held it.
func (st *state) has(n string) (bool, error) {
	probe := &state{in: st.in, used: st.used, phase: st.phase}
	if _, err := probe.rankValues(n); err == nil {
		return true, nil
	}
	if d, _ := LookupMetric(n); !d.IsCluster() {
		st.record(st.phase, n, st.in.partial.ranks)
	}
	return false, nil
}

// ranksAbove is ranks_above(m, x): the ranks whose m exceeds x, in order.
func (st *state) ranksAbove(n string, x float64) ([]int, error) {
	v, err := st.rankValues(n)
	if err != nil {
		return nil, err
	}
	out := []int{}
	for r, val := range v {
		if val > x {
			out = append(out, r)
		}
	}
	sort.Ints(out)
	return out, nil
}

// baseMetric is baseline_metric(m): m's mean in the --baseline document.
func (st *state) baseMetric(n string) (float64, error) {
	b := st.in.Baseline
	if b == nil {
		return 0, st.unavailable("baseline_metric(%q) needs --baseline OLD.json", n)
	}
	v, ok := b.Metrics[n]
	if !ok {
		return 0, st.unavailable("metric %s is not in the baseline %s", n, b.Path)
	}
	st.recordBaseline(n)
	return v, nil
}

// waitedOp is waited_op(): the op that EVENT_WAITs waited for longest,
// summed over ranks (ties by name).
func (st *state) waitedOp() (string, error) {
	by := map[string]int64{}
	for _, rr := range st.ranks() {
		if analysis.EventWaitOf(rr) == nil {
			continue
		}
		for _, w := range analysis.EventWaitOf(rr).WaitedOps {
			by[w.Name] += w.Wait.Total
		}
	}
	if len(by) == 0 {
		return "", st.unavailable("no EVENT_WAIT followed by an op (needs the device timeline)")
	}
	best, bt := "", int64(-1)
	for n, t := range by {
		if t > bt || t == bt && n < best {
			best, bt = n, t
		}
	}
	return best, nil
}

// addFactFuncs sets the functions that read facts and the environment.
func (st *state) addFactFuncs() {
	facts := st.in.Facts
	st.env.Known = func(n string) (bool, error) { _, ok := facts.Get(n); return ok, nil }
	st.env.Env = func(n string) string { v, _ := facts.Env(n); return v }
	st.env.EnvKnown = func(n string) bool {
		_, ok := facts.Env(n)
		return ok
	}
	st.env.HaveEnv = func() (bool, error) {
		if !facts.HasEnv() {
			return false, st.unavailable("no environment variables known: the profile has no profiler_metadata.json ENV_VARIABLES and no --deploy script was given")
		}
		return true, nil
	}
	st.env.VersionLT = func(a, b string) (bool, error) {
		c, err := CompareVersions(a, b)
		return c < 0, err
	}
	fact := st.fact
	st.env.FactInt = typed[int](fact)
	st.env.FactBool = typed[bool](fact)
	st.env.FactString = typed[string](fact)
	st.env.FactInts = typed[[]int](fact)
	st.env.FactFloat = typed[float64](fact)
}

// fact is the value of fact name, or why it is unknown.
func (st *state) fact(name string) (any, error) {
	v, ok := st.in.Facts.Get(name)
	if !ok {
		d, _ := LookupFact(name)
		return nil, st.unavailable("fact %s unknown: give it with --fact %s=... (it comes from: %s)", name, name, d.From)
	}
	return v.Value, nil
}

// addFormatFuncs sets the formatting and checked-arithmetic functions.
func (st *state) addFormatFuncs() {
	st.env.Us = units.Dur
	st.env.Pct = func(x float64) string { return fmt.Sprintf("%.1f%%", 100*x) }
	st.env.Fixed = func(x float64, n int) string { return fmt.Sprintf("%.*f", n, x) }
	st.env.JoinInts = joinInts
	st.env.Div = checkedDiv
	st.env.Mod = checkedMod
	st.env.Finite = checkedFloat
	st.env.FiniteAny = checkedAny
}

// errNotEvaluated carries the reasons an input was unavailable.
type errNotEvaluated struct{ reasons []string }

func isNotEvaluated(err error) bool {
	var ne *errNotEvaluated
	return errors.As(err, &ne) || errors.Is(err, errUnavailable)
}

func (e *errNotEvaluated) Error() string { return strings.Join(e.reasons, "; ") }

func (st *state) run(e *Expr) (any, error) {
	st.missing = nil
	clear(st.varDone)
	prog, err := e.Program()
	if err != nil {
		return nil, err
	}
	for _, i := range e.Vars() {
		if _, err := st.varValue(i); errors.Is(err, errVarType) {
			// run it as the vars' sources in place would
			st.missing = nil
			if prog, err = e.SourceProgram(); err != nil {
				return nil, err
			}
			break
		} else if err != nil {
			// what the program would have raised binding the var
			err = &file.Error{Message: err.Error(), Prev: err}
			return nil, st.runErr(e, err)
		}
	}
	v, err := expr.Run(prog, st.envMap())
	if err != nil {
		return nil, st.runErr(e, err)
	}
	if f, ok := v.(float64); ok && (math.IsNaN(f) || math.IsInf(f, 0)) {
		return nil, fmt.Errorf("%q is %v", e.Source, f)
	}
	return v, nil
}

// runErr is the error of running e: not evaluated when an input was
// unavailable.
func (st *state) runErr(e *Expr, err error) error {
	if errors.Is(err, errUnavailable) {
		return &errNotEvaluated{reasons: append([]string(nil), st.missing...)}
	}
	var fe *file.Error
	if errors.As(err, &fe) {
		return fmt.Errorf("%s (in %q)", fe.Message, e.Source)
	}
	return err
}

func (st *state) render(t *rulefmt.Template) (string, error) {
	if t == nil {
		return "", nil
	}
	parts, err := t.Parts()
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for _, p := range parts {
		if p.Expr == nil {
			b.WriteString(p.Text)
			continue
		}
		v, err := st.run(p.Expr)
		if err != nil {
			return "", err
		}
		b.WriteString(format(v))
	}
	return tidy(b.String()), nil
}

// tidy drops trailing spaces and the blank lines a conditional part that
// rendered empty leaves behind, and trims the text.
func tidy(s string) string {
	lines := strings.Split(s, "\n")
	out := lines[:0]
	blank := false
	for _, l := range lines {
		l = strings.TrimRight(l, " \t")
		if l == "" {
			if blank {
				continue
			}
			blank = true
		} else {
			blank = false
		}
		out = append(out, l)
	}
	return strings.TrimSpace(strings.Join(out, "\n"))
}

func outcome(r *Rule, status, reason string) results.Outcome {
	return results.Outcome{Rule: r.ID, Status: status, Reason: reason}
}

// classify turns an evaluation error into not_evaluated or failed.
func classify(r *Rule, what string, err error) results.Outcome {
	var ne *errNotEvaluated
	if errors.As(err, &ne) {
		return outcome(r, results.StatusNotEvaluated, ne.Error())
	}
	return outcome(r, results.StatusFailed, fmt.Sprintf("%s:%d: %s: %v", r.File, r.Line, what, err))
}

// evalRule evaluates one rule: when, then (if it fired) the texts, saving,
// ranks, evidence, edits and plan fields of its finding.
func evalRule(r *Rule, in *Input) (o results.Outcome, f *Fired) {
	defer func() {
		if v := recover(); v != nil {
			o, f = outcome(r, results.StatusFailed, fmt.Sprintf("internal error: panic: %v", v)), nil
		}
	}()
	if why := notApplicable(r, in.Facts); why != "" {
		return outcome(r, results.StatusNotApplicable, why), nil
	}
	st := newState(in)
	st.rule = r
	st.phase = results.UsedInWhen
	v, err := st.run(r.When)
	if err != nil {
		return classify(r, "when", err), nil
	}
	if !v.(bool) {
		return outcome(r, results.StatusClear, "condition not met"), nil
	}
	fd := &Fired{Finding: results.Finding{Rule: r.ID, Docs: r.Docs, Ranks: []int{}, Evidence: []results.Evidence{}}}
	// the claims first: the texts and the saving may read them (claimed())
	st.phase = results.UsedInSaving
	st.claims()
	st.phase = results.UsedInText
	if fd.Title, err = st.render(r.TitleIn(in.Lang)); err != nil {
		return classify(r, "title", err), nil
	}
	if fd.Fix, err = st.render(r.FixIn(in.Lang)); err != nil {
		return classify(r, "fix", err), nil
	}
	savingNote, failed := st.saving(r, fd)
	if failed == nil {
		failed = st.findingRanks(r, fd)
	}
	if failed == nil {
		failed = st.findingEvidence(r, fd, savingNote)
	}
	if failed == nil {
		failed = st.findingActions(r, fd)
	}
	if failed != nil {
		return *failed, nil
	}
	if err := st.planOf(r, fd); err != nil {
		return classify(r, "plan fields", err), nil
	}
	if err := st.findingClaims(fd); err != nil {
		return classify(r, "claims", err), nil
	}
	fd.Severity = r.Severity
	if fd.Severity == "auto" {
		sv, _ := fd.Saving()
		fd.Severity = autoSeverity(st, sv, fd.SavingUs == nil)
	}
	fd.Partial = st.partialInputs()
	o = outcome(r, results.StatusFired, "")
	o.Severity = fd.Severity
	return o, fd
}

// saving sets fd's saving, or returns why it is not estimated (a note) or
// the failed outcome.
func (st *state) saving(r *Rule, fd *Fired) (string, *results.Outcome) {
	if r.Saving == nil {
		return "", nil
	}
	st.phase = results.UsedInSaving
	sv, err := st.run(r.Saving)
	var ne *errNotEvaluated
	switch {
	case errors.As(err, &ne):
		return fmt.Sprintf(msg(st.in.Lang, msgSavingNotEstimated), ne.Error()), nil
	case err != nil:
		o := classify(r, "saving", err)
		return "", &o
	}
	fd.SavingUs = results.Estimated(math.Max(0, math.Round(sv.(float64)*1000)/1000))
	fd.SavingUncertain = st.usedIn(results.UsedInSaving)
	return "", nil
}

// findingRanks sets fd's ranks: the rule's ranks expression, else every
// analyzed rank.
func (st *state) findingRanks(r *Rule, fd *Fired) *results.Outcome {
	if r.Ranks == nil {
		fd.Ranks = append(fd.Ranks, st.env.Ranks...)
		return nil
	}
	st.phase = results.UsedInRanks
	rv, err := st.run(r.Ranks)
	if err != nil {
		o := classify(r, "ranks", err)
		return &o
	}
	list, ok := toInts(rv)
	if !ok {
		o := outcome(r, results.StatusFailed, fmt.Sprintf("%s:%d: ranks: expected a list of ranks, got %v", r.File, r.Line, rv))
		return &o
	}
	fd.Ranks = list
	return nil
}

// findingEvidence appends the evidence that could be measured (never a 0
// for something unmeasured) and the saving note.
func (st *state) findingEvidence(r *Rule, fd *Fired, savingNote string) *results.Outcome {
	st.phase = results.UsedInText // evidence notes; evidence values record themselves
	for _, es := range r.Evidence {
		ev, err := st.evidence(es, r.NoteIn(es, st.in.Lang))
		if err != nil {
			var ne *errNotEvaluated
			if errors.As(err, &ne) {
				continue // not shown: never a 0 for something unmeasured
			}
			o := classify(r, "evidence", err)
			return &o
		}
		fd.Evidence = append(fd.Evidence, ev...)
	}
	if savingNote != "" {
		fd.Evidence = append(fd.Evidence, results.Evidence{Metric: "saving_us", Note: savingNote})
	}
	return nil
}

// findingActions turns the rule's edits whose condition holds into fix
// actions.
func (st *state) findingActions(r *Rule, fd *Fired) *results.Outcome {
	st.phase = results.UsedInText
	for _, es := range r.Edits {
		if es.If != nil {
			ok, err := st.run(es.If)
			if err != nil {
				var ne *errNotEvaluated
				if errors.As(err, &ne) {
					continue
				}
				o := classify(r, "edit if", err)
				return &o
			}
			if !ok.(bool) {
				continue
			}
		}
		val, err := st.render(es.Value)
		if err != nil {
			o := classify(r, "edit value", err)
			return &o
		}
		fd.Actions = append(fd.Actions, fix.Action{Kind: fix.Kind(es.Op), Name: es.Name, Value: val, Create: es.Create, Rule: r.ID})
	}
	return nil
}

// Severity from the saving's share of the device window (equivalently of
// step time): at least 5% high, 1% medium, else low.
func autoSeverity(st *state, saving float64, unknown bool) string {
	if unknown {
		return results.SeverityMedium
	}
	probe := &state{in: st.in, used: st.used, phase: results.UsedInSeverity}
	win, err := probe.agg(analysis.MetricDeviceWindowUs, mean)
	if err != nil || win <= 0 {
		return results.SeverityMedium
	}
	switch share := saving / win; {
	case share >= 0.05:
		return results.SeverityHigh
	case share >= 0.01:
		return results.SeverityMedium
	}
	return results.SeverityLow
}

func toInts(v any) ([]int, bool) {
	switch x := v.(type) {
	case []int:
		return x, true
	case []any:
		out := make([]int, 0, len(x))
		for _, e := range x {
			switch n := e.(type) {
			case int:
				out = append(out, n)
			case float64:
				out = append(out, int(n))
			default:
				return nil, false
			}
		}
		return out, true
	}
	return nil, false
}

func (st *state) evidence(es rulefmt.EvidenceSpec, noteT *rulefmt.Template) ([]results.Evidence, error) {
	st.missing = nil
	d, _ := LookupMetric(es.Metric)
	phase := st.phase
	st.phase = "" // recorded below, for the ranks folded into each value
	vals, err := st.rankValues(es.Metric)
	st.phase = phase
	if err != nil {
		return nil, &errNotEvaluated{reasons: st.missing}
	}
	partial := st.partialRanks(es.Metric, vals)
	note, err := st.render(noteT)
	if err != nil {
		return nil, err
	}
	// mk makes one evidence value: of one rank, or folded over all of vals
	mk := func(v float64, rank *int) results.Evidence {
		e := results.Evidence{Metric: es.Metric, Rank: rank, Value: math.Round(v*1000) / 1000, Unit: d.Unit, Note: note}
		for _, r := range partial {
			if rank == nil || *rank == r {
				e.PartialRanks = append(e.PartialRanks, r)
			}
		}
		st.record(results.UsedInEvidence, es.Metric, e.PartialRanks)
		return e
	}
	if d.IsCluster() {
		return []results.Evidence{mk(vals[-1], nil)}, nil
	}
	switch es.Of {
	case "max", "min":
		better := func(a, b float64) bool { return a > b }
		if es.Of == "min" {
			better = func(a, b float64) bool { return a < b }
		}
		at, v := argExt(vals, better)
		return []results.Evidence{mk(v, &at)}, nil
	case "sum":
		e := mk(sum(vals), nil)
		e.Note = strings.TrimSpace(fmt.Sprintf(msg(st.in.Lang, msgSumOver), note))
		return []results.Evidence{e}, nil
	case "each":
		ranks := make([]int, 0, len(vals))
		for r := range vals {
			ranks = append(ranks, r)
		}
		sort.Ints(ranks)
		var out []results.Evidence
		for _, r := range ranks {
			out = append(out, mk(vals[r], &r))
		}
		return out, nil
	}
	if m, ok := analysis.LookupMetric(es.Metric); ok && m.Unit == "stream" && len(vals) > 1 {
		// an identifier: a mean of stream ids names no stream
		v, n := mostCommon(vals)
		e := mk(v, nil)
		e.Note = strings.TrimSpace(fmt.Sprintf(msg(st.in.Lang, msgMostCommon), n, len(vals), note))
		return []results.Evidence{e}, nil
	}
	e := mk(mean(vals), nil)
	if len(vals) > 1 {
		e.Note = strings.TrimSpace(fmt.Sprintf(msg(st.in.Lang, msgMeanOf), len(vals), note))
	}
	return []results.Evidence{e}, nil
}

// mostCommon is the value most ranks have (the smallest on a tie) and
// how many have it.
func mostCommon(vals map[int]float64) (float64, int) {
	count := map[float64]int{}
	for _, v := range vals {
		count[v]++
	}
	best, n := 0.0, 0
	for v, c := range count {
		if c > n || (c == n && v < best) {
			best, n = v, c
		}
	}
	return best, n
}

func notApplicable(r *Rule, facts *FactSet) string {
	a := r.AppliesTo
	if a.VllmAscend != "" {
		if v, ok := facts.Get("vllm_ascend_version"); ok {
			in, err := inRange(v.Value.(string), a.VllmAscend)
			if err == nil && !in {
				return fmt.Sprintf("vllm_ascend_version %s is outside %s", v.Value, a.VllmAscend)
			}
		}
	}
	if len(a.Workload) > 0 {
		if v, ok := facts.Get("workload"); ok && !contains(a.Workload, v.Value.(string)) {
			return fmt.Sprintf("workload %s (rule applies to %s)", v.Value, strings.Join(a.Workload, ", "))
		}
	}
	if len(a.Phase) > 0 {
		if v, ok := facts.Get("phase"); ok && !contains(a.Phase, v.Value.(string)) {
			return fmt.Sprintf("phase %s (rule applies to %s)", v.Value, strings.Join(a.Phase, ", "))
		}
	}
	if len(a.Dispatcher) > 0 {
		if v, ok := facts.Get("moe.dispatcher"); ok && !contains(a.Dispatcher, v.Value.(string)) {
			return fmt.Sprintf("moe.dispatcher %s (rule applies to %s)", v.Value, strings.Join(a.Dispatcher, ", "))
		}
	}
	if len(a.ModelFamily) > 0 {
		if v, ok := facts.Get("model"); ok {
			m := strings.ToLower(v.Value.(string))
			hit := false
			for _, f := range a.ModelFamily {
				if strings.Contains(m, strings.ToLower(f)) {
					hit = true
				}
			}
			if !hit {
				return fmt.Sprintf("model %s is not %s", v.Value, strings.Join(a.ModelFamily, " or "))
			}
		}
	}
	return ""
}

// evalBudget judges a budget: its metric's mean against its bound, which
// may read the --baseline document (ReadsBaseline: the baseline's value
// is then the finding's second evidence) or not (judged on this capture
// alone).
func evalBudget(b *rulefmt.Budget, in *Input) (o results.Outcome, f *Fired) {
	o = results.Outcome{Rule: b.ID}
	if IsPlanMetric(b.Metric) {
		o.Status, o.Reason = results.StatusNotEvaluated, "no fix plan was built (a plan budget is judged once the plan exists)"
		return o, nil
	}
	withBase := ReadsBaseline(b)
	var base float64
	if withBase {
		if in.Baseline == nil {
			o.Status, o.Reason = results.StatusNotEvaluated, "budget needs --baseline OLD.json"
			return o, nil
		}
		var ok bool
		if base, ok = in.Baseline.Metrics[b.Metric]; !ok {
			o.Status, o.Reason = results.StatusNotEvaluated, fmt.Sprintf("metric %s is not in the baseline %s", b.Metric, in.Baseline.Path)
			return o, nil
		}
	}
	st := newState(in)
	st.phase = results.UsedInWhen
	cur, err := st.agg(b.Metric, mean)
	if err != nil {
		o.Status, o.Reason = results.StatusNotEvaluated, strings.Join(st.missing, "; ")
		return o, nil
	}
	if withBase {
		st.env.Baseline, st.envM = base, nil
		st.recordBaseline(b.Metric) // the bound is computed from it
	}
	bv, err := st.run(b.Bound)
	if err != nil {
		var ne *errNotEvaluated
		if errors.As(err, &ne) {
			o.Status, o.Reason = results.StatusNotEvaluated, ne.Error()
		} else {
			where := b.File // a --budget is named by its text, without a line
			if b.Line > 0 {
				where = fmt.Sprintf("%s:%d", b.File, b.Line)
			}
			o.Status, o.Reason = results.StatusFailed, fmt.Sprintf("%s: %v", where, err)
		}
		return o, nil
	}
	bound := bv.(float64)
	okay := map[string]bool{"<=": cur <= bound, "<": cur < bound, ">=": cur >= bound, ">": cur > bound, "==": cur == bound}[b.Op]
	if okay {
		o.Status, o.Reason = results.StatusClear, fmt.Sprintf("%s = %s within %s %s", b.Metric, format(cur), b.Op, format(bound))
		if withBase {
			o.Reason += fmt.Sprintf(" (baseline %s)", format(base))
		}
		return o, nil
	}
	d, _ := LookupMetric(b.Metric)
	fd := &Fired{Finding: results.Finding{Rule: b.ID, Severity: b.Severity, Ranks: append([]int{}, st.env.Ranks...),
		Evidence: []results.Evidence{
			{Metric: b.Metric, Value: cur, Unit: d.Unit, Note: msg(in.Lang, msgBudgetNow), PartialRanks: partialOf(st.used, b.Metric)},
		},
	}}
	if withBase {
		fd.Title = fmt.Sprintf(msg(in.Lang, msgBudgetTitle), b.Metric, format(cur), b.Op, format(bound), format(base))
		fd.Evidence = append(fd.Evidence, results.Evidence{Metric: b.Metric, Value: base, Unit: d.Unit,
			Note: fmt.Sprintf(msg(in.Lang, msgBudgetBaseline), in.Baseline.Path), PartialRanks: in.Baseline.PartialRanks[b.Metric]})
		fd.Fix = fmt.Sprintf(msg(in.Lang, msgBudgetFix), b.Metric, format(base), format(cur), b.Text)
	} else {
		fd.Title = fmt.Sprintf(msg(in.Lang, msgBudgetAbsTitle), b.Metric, format(cur), b.Op, format(bound))
		fd.Fix = fmt.Sprintf(msg(in.Lang, msgBudgetAbsFix), b.Metric, format(cur), b.Text)
	}
	if d.Unit == "µs" && cur > bound {
		fd.SavingUs = results.Estimated(math.Round((cur-bound)*1000) / 1000)
		fd.SavingUncertain = st.usedIn(results.UsedInWhen)
		if fd.SavingUncertain && withBase {
			st.record(results.UsedInSaving, b.Metric, fd.Evidence[0].PartialRanks)
			st.recordBaselineIn(results.UsedInSaving, b.Metric)
		}
	}
	st.record(results.UsedInEvidence, b.Metric, fd.Evidence[0].PartialRanks)
	if withBase {
		st.recordBaselineIn(results.UsedInEvidence, b.Metric)
	}
	fd.Partial = st.partialInputs()
	o.Status, o.Severity = results.StatusFired, b.Severity
	return o, fd
}

// ReadsBaseline reports whether a budget's bound reads the --baseline
// document (baseline, baseline_metric): one that does not
// ("service.ttft.p99_ms <= 500") is judged on this capture alone.
func ReadsBaseline(b *rulefmt.Budget) bool {
	return b.Bound == nil || b.Bound.Names("baseline") || b.Bound.Names("baseline_metric")
}

// partialOf returns the ranks of this capture (not of the baseline) on
// which metric was recorded as partial.
func partialOf(used map[partialKey]map[string]bool, metric string) []int {
	var out []int
	for k := range used {
		if k.metric == metric && !k.baseline {
			out = append(out, k.rank)
		}
	}
	sort.Ints(out)
	return out
}
