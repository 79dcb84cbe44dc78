package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/npuprof/npuprof/internal/results"
	"github.com/npuprof/npuprof/internal/results/diff"
)

// analyzedField analyzes field report scenarios at 25 requests and returns
// each saved document's path, by scenario name.
func analyzedField(t *testing.T, names ...string) map[string]string {
	t.Helper()
	docs := map[string]string{}
	for _, name := range names {
		doc := filepath.Join(t.TempDir(), name+".json")
		code, _, stderr := run("analyze", genScenario(t, name), "-q", "--fact", "concurrency=25", "--format", "json", "-o", doc)
		require.Equal(t, ExitOK, code, stderr)
		docs[name] = doc
	}
	return docs
}

// stepTimeSection is the text diff's predicted vs measured step-time
// lines.
func stepTimeSection(t *testing.T, out string) []string {
	t.Helper()
	const head = "Decode step time per step: predicted vs measured change\n"
	i := strings.Index(out, head)
	require.Positive(t, i, out)
	sec, _, _ := strings.Cut(out[i+len(head):], "\n\n")
	return strings.Split(sec, "\n")
}

// requireMeasured checks a step-time change against the documents: the
// before side's prediction and the step time per step's change
// (step_time), exactly.
func requireMeasured(t *testing.T, r *diff.Result, sc *diff.StepChange, predicted float64) {
	t.Helper()
	require.Equal(t, predicted, *sc.PredictedPct)
	require.NotNil(t, r.StepTime)
	require.Equal(t, *r.StepTime.Pct, *sc.MeasuredPct)
}

func readDoc(t *testing.T, path string) *results.Document {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	d, err := results.Read(f, path)
	require.NoError(t, err)
	return d
}

// diff shows, for a resolved finding and for the plan, the predicted
// step-time change next to the measured one. One fix alone (the routing
// Cumsum removed, EP + FLASHCOMM1 still on) keeps its ratio, and the plan
// row says only its second step was applied, with no ratio; the first
// step alone (EP + FLASHCOMM1 off) is compared with that step's
// cumulative prediction; two fixes
// landing together (EP + FLASHCOMM1 off and the Cumsum removed: the
// plan's two steps) each say what else the measured change holds, with no
// ratio, and the plan row says it is the comparison.
func TestDiffPredictedVsMeasured(t *testing.T) {
	docs := analyzedField(t, "field-ep-fc1-cumsum", "field-ep-fc1", "field-cumsum", "field-padded")
	before := readDoc(t, docs["field-ep-fc1-cumsum"])
	pred := map[string]float64{}
	for _, f := range before.Findings {
		if f.Predicted != nil {
			pred[f.Rule] = f.Predicted.StepTimeChangePct
		}
	}
	require.Equal(t, map[string]float64{"comm-ep-flashcomm": -9.2, "moe-routing-cumsum": -5.9}, pred)
	var steps []string
	for _, st := range before.Plan.Steps {
		steps = append(steps, st.Rule)
	}
	require.Equal(t, []string{"comm-ep-flashcomm", "moe-routing-cumsum"}, steps)
	require.Equal(t, -15.42, before.Plan.StepTimeChangePct)

	t.Run("one fix alone", func(t *testing.T) {
		// the plan's second step alone: the whole plan's prediction is no
		// measure of it, and no plan number predicts it alone
		r := requireOneFix(t, docs["field-ep-fc1-cumsum"], docs["field-ep-fc1"], "moe-routing-cumsum", -5.9, []string{
			"  moe-routing-cumsum: predicted -5.90%, measured -4.94%, measured/predicted 84%",
			"  plan: predicted -15.42%, measured -4.94% (plan partly applied: steps applied: moe-routing-cumsum; not applied: comm-ep-flashcomm)",
		})
		require.Equal(t, &diff.PlanApplied{Steps: []string{"moe-routing-cumsum"}, NotApplied: []string{"comm-ep-flashcomm"}, OutsidePlan: []string{}}, r.Plan.Applied)
	})
	t.Run("the plan's first step alone", func(t *testing.T) {
		first := before.Plan.Steps[0].StepTimeChangePct
		require.Equal(t, -9.2, first)
		r := requireOneFix(t, docs["field-ep-fc1-cumsum"], docs["field-cumsum"], "comm-ep-flashcomm", -9.2, []string{
			"  comm-ep-flashcomm: predicted -9.20%, measured -9.56%, measured/predicted 104%",
			"  plan: predicted -15.42%, measured -9.56% (plan partly applied: steps applied: comm-ep-flashcomm; not applied: moe-routing-cumsum; the applied steps' cumulative prediction is -9.20%: measured/predicted 104%)",
		})
		ratio := *r.Plan.MeasuredPct / first
		require.InDelta(t, 1.039, ratio, 0.0005, "docs/json.md's example")
		require.Equal(t, &diff.PlanApplied{Steps: []string{"comm-ep-flashcomm"}, NotApplied: []string{"moe-routing-cumsum"}, OutsidePlan: []string{},
			PredictedPct: &first, Ratio: &ratio}, r.Plan.Applied)
	})
	t.Run("two fixes together", func(t *testing.T) {
		r, text := diffBoth(t, docs["field-ep-fc1-cumsum"], docs["field-padded"])
		require.Equal(t, []string{
			"  comm-ep-flashcomm: predicted -9.20%, measured -15.27%, measured together with moe-routing-cumsum: see the plan row",
			"  moe-routing-cumsum: predicted -5.90%, measured -15.27%, measured together with comm-ep-flashcomm: see the plan row",
			"  plan: predicted -15.42%, measured -15.27%, measured/predicted 99% (the resolved fixes are the plan's steps: this row is the comparison)",
		}, stepTimeSection(t, text))
		for rule, with := range map[string]string{"comm-ep-flashcomm": "moe-routing-cumsum", "moe-routing-cumsum": "comm-ep-flashcomm"} {
			f, _ := r.Finding(rule)
			requireMeasured(t, r, f.StepTime, pred[rule])
			require.Equal(t, []string{with}, f.StepTime.MeasuredWith, rule)
			require.Nil(t, f.StepTime.Ratio, rule)
		}
		requireMeasured(t, r, r.Plan, -15.42)
		require.Equal(t, *r.Plan.MeasuredPct/-15.42, *r.Plan.Ratio)
		require.Equal(t, &diff.PlanApplied{Steps: steps, NotApplied: []string{}, OutsidePlan: []string{}, WholePlan: true}, r.Plan.Applied)

		html := filepath.Join(t.TempDir(), "diff.html")
		code, _, stderr := run("diff", docs["field-ep-fc1-cumsum"], docs["field-padded"], "-q", "--html", html)
		require.Equal(t, ExitOK, code, stderr)
		b, err := os.ReadFile(html)
		require.NoError(t, err)
		page := string(b)
		for _, want := range []string{`<a href="#step-predictions">Decode step time: predicted vs measured</a>`,
			`<td class=" mono">comm-ep-flashcomm</td><td class="num" data-v="-9.2">-9.20%</td>`,
			`<td class="">measured together with moe-routing-cumsum: see the plan row</td><td class=""></td></tr>`,
			`<td class="num" data-v="` + fmt.Sprint(*r.Plan.Ratio) + `">99%</td><td class="">the resolved fixes are the plan&#39;s steps: this row is the comparison</td></tr>`} {
			require.True(t, strings.Contains(page, want), "the HTML diff has no %s", want)
		}
	})
}

// requireOneFix diffs before and after, where one predicted fix (rule,
// predicted) of the before side's two-step plan was resolved: the text's
// step-time lines are lines, the finding's ratio is its own, and the plan
// row (the whole plan's -15.42%) has no ratio. It returns the result.
func requireOneFix(t *testing.T, before, after, rule string, predicted float64, lines []string) *diff.Result {
	t.Helper()
	r, text := diffBoth(t, before, after)
	require.Equal(t, lines, stepTimeSection(t, text))
	f, _ := r.Finding(rule)
	requireMeasured(t, r, f.StepTime, predicted)
	require.Equal(t, *f.StepTime.MeasuredPct/predicted, *f.StepTime.Ratio)
	require.Nil(t, f.StepTime.MeasuredWith)
	requireMeasured(t, r, r.Plan, -15.42)
	require.Nil(t, r.Plan.Ratio)
	return r
}

// diffBoth runs diff before after as JSON and as text.
func diffBoth(t *testing.T, before, after string) (*diff.Result, string) {
	t.Helper()
	code, out, stderr := run("diff", before, after, "-q", "--format", "json")
	require.Equal(t, ExitOK, code, stderr)
	var r diff.Result
	require.NoError(t, json.Unmarshal([]byte(out), &r))
	code, text, stderr := run("diff", before, after, "-q")
	require.Equal(t, ExitOK, code, stderr)
	return &r, text
}
