package rules

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/npuprof/npuprof/internal/analysis"
	"github.com/npuprof/npuprof/internal/results"
)

// twoRanks is an analysis whose Cumsum count is 0 on both ranks (their
// time is given), so a rule that divides by it divides by zero.
func twoRanks(timeUs float64) *analysis.Result {
	mk := func(r int) *analysis.RankResult {
		return &analysis.RankResult{Rank: r, Metrics: map[string]float64{
			"moe.cumsum.time_us": timeUs, "moe.cumsum.count": 0, "moe.routing.count": 4, "device.window.time_us": 1000,
		}, Unavailable: map[string]string{}}
	}
	return &analysis.Result{Path: "p", Ranks: []*analysis.RankResult{mk(0), mk(1)}}
}

func evalText(t *testing.T, res *analysis.Result, yaml string, facts ...string) *Report {
	t.Helper()
	set, err := Parse("u.yaml", []byte(yaml))
	require.NoError(t, err)
	fs, err := BuildFacts(res, nil, facts)
	require.NoError(t, err)
	return Evaluate(set, &Input{Result: res, Facts: fs})
}

// A division by zero, 0/0 or an overflow anywhere a rule computes is an
// evaluation error naming the rule's file and line, the expression and the
// operand at fault, never a finding built on +Inf or NaN (+Inf > 0.5 is
// true, NaN > 0.5 false: both would be silent).
func TestNonFiniteArithmeticFailsTheRule(t *testing.T) {
	rep := evalText(t, twoRanks(80), `rules:
  - id: per-kernel
    title: t
    severity: low
    when: metric("moe.cumsum.time_us") / metric("moe.cumsum.count") > 0.5
    fix: f
  - id: guarded
    title: t
    severity: low
    when: metric("moe.cumsum.count") > 0 && metric("moe.cumsum.time_us") / metric("moe.cumsum.count") > 0.5
    fix: f
  - id: overflow
    title: t
    severity: low
    when: metric("moe.cumsum.time_us") * 1e306 * 1000 > 1
    fix: f
  - id: in-title
    title: '{{ us(metric("moe.cumsum.time_us") / metric("moe.cumsum.count")) }} each'
    severity: low
    when: metric("moe.cumsum.time_us") > 0
    fix: f
  - id: in-saving
    title: t
    severity: low
    when: metric("moe.cumsum.time_us") > 0
    saving: metric("moe.cumsum.time_us") / (metric("moe.routing.count") - 4)
    fix: f
  - id: in-var
    title: t
    severity: low
    vars:
      each: metric("moe.cumsum.time_us") / metric("moe.cumsum.count")
    when: each > 1
    fix: f
  - id: remainder
    title: t
    severity: low
    when: int(metric("moe.routing.count")) % int(metric("moe.cumsum.count")) == 0
    fix: f
`)
	require.Empty(t, rep.Findings, "no finding from a non-finite value")
	o := status(rep, "per-kernel")
	require.Equal(t, results.StatusFailed, o.Status)
	require.Contains(t, o.Reason, "u.yaml:2: when: ")
	require.Contains(t, o.Reason, `division by zero in metric("moe.cumsum.time_us") / metric("moe.cumsum.count"): metric("moe.cumsum.count") is 0 (metric("moe.cumsum.time_us") is 80)`)

	require.Equal(t, results.StatusClear, status(rep, "guarded").Status, "a guard short-circuits the division")

	o = status(rep, "overflow")
	require.Equal(t, results.StatusFailed, o.Status)
	require.Contains(t, o.Reason, `metric("moe.cumsum.time_us") * 1e+306 * 1000 overflows to +Inf`)

	o = status(rep, "in-title")
	require.Equal(t, results.StatusFailed, o.Status)
	require.Contains(t, o.Reason, "title: division by zero in")

	o = status(rep, "in-saving")
	require.Equal(t, results.StatusFailed, o.Status)
	require.Contains(t, o.Reason, `saving: division by zero in metric("moe.cumsum.time_us") / (metric("moe.routing.count") - 4): metric("moe.routing.count") - 4 is 0`)

	o = status(rep, "in-var")
	require.Equal(t, results.StatusFailed, o.Status)
	require.Contains(t, o.Reason, `division by zero in metric("moe.cumsum.time_us") / metric("moe.cumsum.count")`)

	o = status(rep, "remainder")
	require.Equal(t, results.StatusFailed, o.Status)
	require.Contains(t, o.Reason, `remainder by zero in int(metric("moe.routing.count")) % int(metric("moe.cumsum.count")): int(metric("moe.cumsum.count")) is 0`)

	// 0/0 says so
	rep = evalText(t, twoRanks(0), `rules:
  - id: nan
    title: t
    severity: low
    when: not (metric("moe.cumsum.time_us") / metric("moe.cumsum.count") > 0.5)
    fix: f
`)
	o = status(rep, "nan")
	require.Equal(t, results.StatusFailed, o.Status, "NaN > 0.5 is false: negated, it would fire")
	require.Contains(t, o.Reason, `0/0 in metric("moe.cumsum.time_us") / metric("moe.cumsum.count"): metric("moe.cumsum.time_us") and metric("moe.cumsum.count") are both 0`)
	require.Empty(t, rep.Findings)
}

// Checked arithmetic keeps what worked: integer and float results, string
// concatenation, facts and thresholds in the text, and type errors caught
// when the rule is loaded.
func TestCheckedArithmeticKeepsTypes(t *testing.T) {
	rep := evalText(t, twoRanks(80), `rules:
  - id: ok
    title: '{{ "TP" + string(fact.tp * 2) + "xDP" + string(fact.dp / 2) }} {{ fact.dp % 4 }} {{ metric("moe.cumsum.time_us") / threshold.k }}'
    severity: low
    thresholds:
      k: 8
    when: metric("moe.cumsum.time_us") / 2 - 40 == 0 && count("moe.cumsum.time_us") + 1 == 3
    fix: '{{ max(fact.dp, 1) / 3 }}'
`, "tp=4", "dp=6")
	require.Empty(t, rep.Failed())
	f := finding(rep, "ok")
	require.NotNil(t, f)
	require.Equal(t, "TP8xDP3 2 10", f.Title)
	require.Equal(t, "2", f.Fix)

	_, err := Parse("bad.yaml", []byte(`rules:
  - id: bad
    title: t
    when: '"a" / metric("moe.cumsum.count") > 1'
    fix: f
`))
	require.ErrorContains(t, err, "bad.yaml:4")
	require.ErrorContains(t, err, "invalid operation: / (mismatched types string and float64)")
}

// A budget bound that divides by a zero baseline fails, named by its text.
func TestBudgetDivisionByZero(t *testing.T) {
	set, err := Parse("b.yaml", []byte("budgets:\n  - moe.cumsum.time_us <= 100 / baseline\n"))
	require.NoError(t, err)
	res := twoRanks(80)
	fs, _ := BuildFacts(res, nil, nil)
	rep := Evaluate(set, &Input{Result: res, Facts: fs, Baseline: &results.Baseline{Path: "old.json", Metrics: map[string]float64{"moe.cumsum.time_us": 0}}})
	f := rep.Failed()
	require.Len(t, f, 1)
	require.Equal(t, "budget/moe.cumsum.time_us", f[0].Rule)
	require.Contains(t, f[0].Reason, "b.yaml:2: division by zero in 100 / baseline: baseline is 0")
	require.Empty(t, rep.Findings)
}
