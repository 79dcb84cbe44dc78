package compare_test

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/npuprof/npuprof/internal/compare"
	"github.com/npuprof/npuprof/internal/pipeline"
	"github.com/npuprof/npuprof/internal/render"
	"github.com/npuprof/npuprof/internal/results"
	"github.com/npuprof/npuprof/internal/results/assemble"
	"github.com/npuprof/npuprof/internal/results/diff"
	"github.com/npuprof/npuprof/internal/rules"
	"github.com/npuprof/npuprof/internal/testutil"
	"github.com/npuprof/npuprof/internal/tracegen"
)

// cutDoc generates ep-fc1-cumsum-steps (2 layers) and returns its
// document with the built-in rules' findings, after a JSON round trip;
// with cut >= 0, rank cut's trace_view.json is cut at 40% of its events
// first. It returns the path of the cut trace too.
func cutDoc(t *testing.T, cut int) (*results.Document, string) {
	t.Helper()
	sc := testutil.Scenario(t, "ep-fc1-cumsum-steps")
	sc.Layers = 2
	dir, truth := testutil.Generate(t, sc)
	trace := ""
	if cut >= 0 {
		trace = filepath.Join(dir, truth.Ranks[cut].Dir, tracegen.OutputDir, "trace_view.json")
		_, err := tracegen.CutTrace(trace, 0.4)
		require.NoError(t, err)
	}
	res, err := pipeline.Analyze(context.Background(), dir, pipeline.Options{Workers: 2})
	require.NoError(t, err)
	set, err := rules.Load() // the built-in rules
	require.NoError(t, err)
	facts, err := rules.BuildFacts(res, nil, nil)
	require.NoError(t, err)
	rep := rules.Evaluate(set, &rules.Input{Result: res, Facts: facts})
	var buf bytes.Buffer
	require.NoError(t, render.WriteJSON(&buf, assemble.Doc(res, rep.Contract())))
	doc, err := results.Read(&buf, dir)
	require.NoError(t, err)
	return doc, trace
}

func rankDoc(t *testing.T, d *results.Document, rank int) *results.RankDoc {
	t.Helper()
	for i := range d.Ranks {
		if d.Ranks[i].Rank == rank {
			return &d.Ranks[i]
		}
	}
	t.Fatalf("no rank %d", rank)
	return nil
}

func refs(side string, ranks ...int) []diff.PartialRef {
	out := []diff.PartialRef{}
	for _, r := range ranks {
		out = append(out, diff.PartialRef{Side: side, Rank: r})
	}
	return out
}

// norm makes a nil list and an empty one compare equal.
func norm(p []diff.PartialRef) []diff.PartialRef {
	if p == nil {
		return []diff.PartialRef{}
	}
	return p
}

// checkCutSide checks a comparison where one side (side, doc cut) has rank
// 3 cut short and the other side (whole) is the same scenario whole: every
// quantity that read rank 3's cut file is flagged with that side and rank,
// nothing else is, and every metric that changed is flagged (only rank 3
// differs between the sides).
func checkCutSide(t *testing.T, r *diff.Result, side string, cut, whole *results.Document, trace string) {
	t.Helper()
	cutRank := rankDoc(t, cut, 3)
	require.True(t, cutRank.Partial)
	require.NotEmpty(t, cutRank.PartialMetrics)
	partial := map[string]bool{}
	for _, m := range cutRank.PartialMetrics {
		partial[m] = true
	}
	cutSide, wholeSide := r.After, r.Before
	if side == diff.SideBefore {
		cutSide, wholeSide = r.Before, r.After
	}
	require.Empty(t, wholeSide.Partial)
	require.Len(t, cutSide.Partial, 1)
	require.Equal(t, 3, cutSide.Partial[0].Rank)
	require.Equal(t, cutRank.PartialReason, cutSide.Partial[0].Reason)
	require.Contains(t, cutSide.Partial[0].Reason, trace+" is truncated: it ends inside an event at byte ")
	require.Equal(t, len(cutRank.PartialMetrics), cutSide.Partial[0].Metrics)
	require.True(t, r.HasPartial())

	// Per rank: exactly rank 3's partial_metrics, on that side.
	flagged := 0
	for _, rd := range r.Ranks {
		for _, m := range rd.Metrics {
			want := []diff.PartialRef{}
			if rd.Rank == 3 && partial[m.Metric] {
				want = refs(side, 3)
				flagged++
			}
			require.Equal(t, want, norm(m.Partial), "rank %d %s", rd.Rank, m.Metric)
			if rd.Rank != 3 {
				require.False(t, m.Changed(), "rank %d %s: only rank 3 was cut", rd.Rank, m.Metric)
			}
		}
	}
	require.Equal(t, len(cutRank.PartialMetrics), flagged, "every partial metric of rank 3 is compared and flagged")

	// Overall: a mean is partial when rank 3's value went into it; a
	// cluster metric whenever a rank is partial. Every metric that changed
	// is flagged: the cut is the only difference between the sides.
	changed := 0
	for _, m := range r.Overall {
		_, cluster := cut.Cluster.Metrics[m.Metric]
		if _, ok := cut.Cluster.Unavailable[m.Metric]; ok {
			cluster = true // e.g. the EP ranks' layers no longer align
		}
		want := []diff.PartialRef{}
		if cluster || partial[m.Metric] {
			want = refs(side, 3)
		}
		require.Equal(t, want, norm(m.Partial), m.Metric)
		if m.Changed() {
			changed++
			require.NotEmpty(t, m.Partial, "%s changed only because rank 3 was cut", m.Metric)
		}
	}
	require.Positive(t, changed)
	// The window: the cut rank's window is shorter, so the mean drops on
	// the cut side.
	w, ok := r.Metric("device.window.time_us")
	require.True(t, ok)
	require.Equal(t, refs(side, 3), w.Partial)
	bw, aw := rankDoc(t, whole, 3).Metrics["device.window.time_us"], cutRank.Metrics["device.window.time_us"]
	require.Less(t, aw, bw)
	if side == diff.SideAfter {
		require.Negative(t, *w.Delta, "a cut AFTER looks faster")
	} else {
		require.Positive(t, *w.Delta, "a cut BEFORE makes AFTER look slower")
	}

	// Step means include rank 3's steps (it kept some) on the cut side.
	require.NotEmpty(t, cutRank.Steps, "the cut rank kept complete steps")
	require.NotEmpty(t, r.Steps)
	for _, s := range r.Steps {
		require.Equal(t, refs(side, 3), s.Partial, s.Quantity)
	}
	// Collectives and kernels are means over every rank, rank 3 included.
	require.NotEmpty(t, r.Collectives)
	for _, c := range r.Collectives {
		require.Equal(t, refs(side, 3), c.Partial, "%s@%s", c.Type, c.Group)
	}
	require.NotEmpty(t, r.Kernels)
	for _, k := range r.Kernels {
		require.Equal(t, refs(side, 3), k.Partial, k.Name)
	}

	// The Cumsum finding persists; on the cut side it read rank 3.
	f, ok := r.Finding("moe-routing-cumsum")
	require.True(t, ok)
	require.Equal(t, diff.FindingPersists, f.Status)
	require.Equal(t, refs(side, 3), f.Partial)
	require.Equal(t, refs(side, 3), f.MeasuredPartial, "moe.cumsum.time_us of rank 3 is partial")
	require.Equal(t, side == diff.SideBefore, f.SavingUncertain, "the prediction is the before side's")
	require.Empty(t, f.StatusPartial, "a persisting finding's status is judged on both sides")
	var cutF *results.Finding
	for i := range cut.Findings {
		if cut.Findings[i].Rule == "moe-routing-cumsum" {
			cutF = &cut.Findings[i]
		}
	}
	require.NotNil(t, cutF)
	require.True(t, cutF.SavingUncertain)
}

// BEFORE whole, AFTER with rank 3's trace cut: the metrics the cut fed
// are flagged as the after side's rank 3, in the result, the JSON, the
// terminal and the HTML.
func TestComparePartialAfter(t *testing.T) {
	whole, _ := cutDoc(t, -1)
	cut, trace := cutDoc(t, 3)
	r := compare.Compare(whole, cut, compare.Options{})
	checkCutSide(t, r, diff.SideAfter, cut, whole, trace)

	var js bytes.Buffer
	require.NoError(t, render.WriteDiffJSON(&js, r))
	for _, k := range []string{`"partial": [`, `"partial_metrics": `, `"side": "after"`, `"measured_partial": [`} {
		require.Contains(t, js.String(), k)
	}
	require.NotContains(t, js.String(), `"side": "before"`)

	var text bytes.Buffer
	require.NoError(t, render.WriteDiffText(&text, r))
	out := text.String()
	require.Contains(t, out, "  ! AFTER rank 3 cut short: "+trace+" is truncated")
	require.NotContains(t, out, "BEFORE rank")
	require.Contains(t, out, "  ! rows marked [partial: ...] read such a value")
	require.Regexp(t, `\n\s*window\s.*\[partial: after rank 3\]\n`, out)
	require.Regexp(t, `\n  device\.window\.time_us\s.*\[partial: after rank 3\]\n`, out)
	require.Regexp(t, `\n  persists\s+moe-routing-cumsum\s.*\[partial: finding read after rank 3; measured on after rank 3\]\n`, out)
	require.Regexp(t, `\n\s*3\s.*\[partial: after rank 3\]\n`, out, "rank 3's breakdown row")
	require.NotRegexp(t, `\n\s*2\s.*\[partial`, out, "rank 2's row is whole")
	// every changed metric row carries the marker
	sec := out[strings.Index(out, "Metrics that changed"):]
	for _, line := range strings.Split(strings.TrimSpace(sec), "\n")[2:] {
		require.Contains(t, line, "[partial: after rank 3]", line)
	}

	var sum bytes.Buffer
	require.NoError(t, render.WriteDiffSummary(&sum, r))
	require.Contains(t, sum.String(), "  ! AFTER (this capture) rank 3 cut short: ")
	require.Regexp(t, `step time: .*\[partial: after rank 3\]`, sum.String())

	var html bytes.Buffer
	require.NoError(t, render.WriteDiffHTML(&html, r))
	page := html.String()
	for _, want := range []string{`<p class="partial-input" role="note"><b>Partial input.</b> AFTER rank 3 cut short: `,
		`<div class="card-k">Step time (partial: after rank 3)</div>`, `<th>Partial input</th>`,
		`<td class=" partial">after rank 3</td>`, `<td class=" partial">finding read after rank 3; measured on after rank 3</td>`} {
		require.True(t, strings.Contains(page, want), "the HTML diff has %s", want)
	}
}

// The reverse: BEFORE with rank 3 cut, AFTER whole. The predicted saving
// of the Cumsum finding was estimated from the cut file: uncertain.
func TestComparePartialBefore(t *testing.T) {
	cut, trace := cutDoc(t, 3)
	whole, _ := cutDoc(t, -1)
	r := compare.Compare(cut, whole, compare.Options{})
	checkCutSide(t, r, diff.SideBefore, cut, whole, trace)
	var text bytes.Buffer
	require.NoError(t, render.WriteDiffText(&text, r))
	out := text.String()
	require.Contains(t, out, "  ! BEFORE rank 3 cut short: "+trace+" is truncated")
	require.Regexp(t, `\n  persists\s+moe-routing-cumsum\s.*\[partial: finding read before rank 3; predicted saving uncertain; measured on before rank 3\]\n`, out)

	// the same document as a --baseline: its means carry the cut rank
	base := compare.Baseline(cut, "old.json")
	require.Equal(t, []int{3}, base.PartialRanks["device.window.time_us"])
	require.Equal(t, rankDoc(t, cut, 3).PartialReason, base.PartialReason[3])
	for m, ranks := range base.PartialRanks {
		require.Equal(t, []int{3}, ranks, m)
	}
	require.Nil(t, compare.Baseline(whole, "new.json").PartialRanks)
}

// Whole against whole: nothing is flagged, in any output.
func TestCompareWholeNotPartial(t *testing.T) {
	a, _ := cutDoc(t, -1)
	b, _ := cutDoc(t, -1)
	r := compare.Compare(a, b, compare.Options{})
	require.False(t, r.HasPartial())
	require.Empty(t, r.PartialCaveats())
	for _, m := range r.Overall {
		require.Nil(t, m.Partial, m.Metric)
		require.False(t, m.Changed(), m.Metric)
	}
	for _, rd := range r.Ranks {
		for _, m := range rd.Metrics {
			require.Nil(t, m.Partial)
		}
	}
	for _, s := range r.Steps {
		require.Nil(t, s.Partial)
	}
	for _, f := range r.Findings {
		require.Empty(t, diff.FindingPartialTag(f), f.Rule)
	}
	var js, text, html bytes.Buffer
	require.NoError(t, render.WriteDiffJSON(&js, r))
	require.NoError(t, render.WriteDiffText(&text, func() *diff.Result { r.Run.AllMetrics = true; return r }()))
	require.NoError(t, render.WriteDiffHTML(&html, r))
	for _, k := range []string{`"partial"`, `"saving_uncertain"`, `"measured_partial"`, `"status_partial"`, `"side"`} {
		require.NotContains(t, js.String(), k)
	}
	require.NotContains(t, text.String(), "partial")
	require.NotContains(t, text.String(), "cut short")
	require.NotContains(t, html.String(), "Partial input")
}

// A finding resolved while the after side has a cut rank: its absence was
// judged on that cut file (status_partial); a new finding while the before
// side has one, likewise.
func TestCompareStatusPartial(t *testing.T) {
	mk := func(partialRank int, fs ...results.Finding) *results.Document {
		d := &results.Document{Schema: results.Schema, Findings: fs}
		for r := 0; r < 3; r++ {
			rd := results.RankDoc{Rank: r, Metrics: map[string]float64{"moe.cumsum.time_us": 10, "event_wait.time_us": 5}, Unavailable: map[string]string{}}
			if r == partialRank {
				rd.Partial, rd.PartialReason = true, "t.json is truncated"
				rd.PartialMetrics = []string{"event_wait.time_us", "moe.cumsum.time_us"}
			}
			d.Ranks = append(d.Ranks, rd)
		}
		return d
	}
	fCumsum := results.Finding{Rule: "moe-routing-cumsum", Title: "Cumsum", Severity: "high", SavingUs: results.Estimated(40)}
	fWait := results.Finding{Rule: "event-wait-skew", Title: "waits", Severity: "low", SavingUs: results.Estimated(5)}
	r := compare.Compare(mk(0, fCumsum), mk(2, fWait), compare.Options{})
	c, _ := r.Finding("moe-routing-cumsum")
	require.Equal(t, diff.FindingResolved, c.Status)
	require.Equal(t, refs(diff.SideAfter, 2), c.StatusPartial)
	require.Equal(t, append(refs(diff.SideBefore, 0), refs(diff.SideAfter, 2)...), c.MeasuredPartial)
	require.Nil(t, c.Partial, "the finding itself read no partial metric")
	require.Equal(t, "measured on before rank 0 and after rank 2; resolved judged on after rank 2", diff.FindingPartialTag(c))
	w, _ := r.Finding("event-wait-skew")
	require.Equal(t, diff.FindingNew, w.Status)
	require.Equal(t, refs(diff.SideBefore, 0), w.StatusPartial)
}
