package analysis

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/npuprof/npuprof/internal/parser/model"
	"github.com/npuprof/npuprof/internal/pipeline/gather"
	"github.com/npuprof/npuprof/internal/testutil"
)

// TestPassesParallelSameResult: a rank's passes run at once (PassWorkers)
// give exactly what one after another gives: results, metrics,
// unavailable metrics and errors.
func TestPassesParallelSameResult(t *testing.T) {
	_, root := testutil.GenerateTiny(t)
	p, err := gather.Models(context.Background(), root, gather.Options{})
	require.NoError(t, err)
	require.Len(t, p.Ranks, 1)
	defer func(v int) { PassWorkers = v }(PassWorkers)
	var docs []string
	for _, w := range []int{1, 4, 16} {
		PassWorkers = w
		res, m, errs, timings := runRank(p.Ranks[0], Passes)
		require.Len(t, timings, len(order(Passes)))
		out := map[string]any{"metrics": m.Values, "unavailable": m.Unavailable, "errors": errs}
		for _, e := range res {
			out["result/"+e.pass.Name] = e.res
		}
		b, err := json.Marshal(out)
		require.NoError(t, err)
		docs = append(docs, string(b))
	}
	require.NotEmpty(t, docs[0])
	require.Equal(t, docs[0], docs[1])
	require.Equal(t, docs[0], docs[2])
}

// TestPassSeesOnlyWhatItRequires: a pass gets the results of the passes it
// requires, directly or not, and nothing else, whichever ran before it;
// a failed prerequisite stops the passes that need it.
func TestPassSeesOnlyWhatItRequires(t *testing.T) {
	a := &Pass{Name: "a", Doc: "a", Run: func(*Context) (any, error) { return "A", nil }}
	b := &Pass{Name: "b", Doc: "b", Requires: []*Pass{a}, Run: func(*Context) (any, error) { return "B", nil }}
	other := &Pass{Name: "other", Doc: "o", Run: func(*Context) (any, error) { return "O", nil }}
	bad := &Pass{Name: "bad", Doc: "x", Run: func(*Context) (any, error) { return nil, errors.New("boom") }}
	after := &Pass{Name: "after", Doc: "y", Requires: []*Pass{bad}, Run: func(*Context) (any, error) { return "never", nil }}
	var seen []string
	c := &Pass{Name: "c", Doc: "c", Requires: []*Pass{b}, Run: func(ctx *Context) (any, error) {
		for q := range ctx.ResultOf {
			seen = append(seen, q.Name)
		}
		ctx.SetCount("c.count", len(ctx.ResultOf))
		return "C", nil
	}}
	defer func(v int) { PassWorkers = v }(PassWorkers)
	for _, w := range []int{1, 3} {
		PassWorkers = w
		seen = nil
		res, m, errs, _ := runRank(model.NewRank("r"), []*Pass{other, c, after})
		require.ElementsMatch(t, []string{"a", "b"}, seen)
		require.Equal(t, 2.0, m.Values["c.count"])
		require.Equal(t, "C", res.of(c))
		require.Equal(t, "O", res.of(other))
		require.Len(t, errs, 2)
		require.Equal(t, "bad", errs[0].Pass)
		require.Equal(t, "after", errs[1].Pass)
		require.Contains(t, errs[1].Message, "prerequisite failed: bad")
	}
}

// TestSkipFrameworkSameResult: only the workload pass reads
// Rank.FrameworkOps (their names), so pipeline.Analyze reads a Parquet
// export's framework_ops, and the ledger pass reads Rank.Links and the
// launching ops' ends (a host gap is an idle the host launched late
// into: without them it is idle); every other result is the same without
// them. A pass that starts to read them or Rank.Links must say so here.
func TestSkipFrameworkSameResult(t *testing.T) {
	_, root := testutil.GenerateTiny(t)
	p, err := gather.Models(context.Background(), root, gather.Options{})
	require.NoError(t, err)
	require.Len(t, p.Ranks, 1)
	require.NotEmpty(t, p.Ranks[0].FrameworkOps, "the generated rank has framework ops")
	require.NotEmpty(t, p.Ranks[0].Links, "the generated rank has links")
	full, err := analyzeProfile(p)
	require.NoError(t, err)
	p.Ranks[0].FrameworkOps, p.Ranks[0].Links = nil, nil
	skip, err := analyzeProfile(p)
	require.NoError(t, err)
	// the host gaps are idle without the launches, the rest of the
	// ledger is the same
	ledger := func(res *Result) map[string]float64 {
		m := map[string]float64{}
		for k, v := range res.Cluster.Metrics {
			if strings.HasPrefix(k, "ledger.") {
				m[k] = v
				delete(res.Cluster.Metrics, k)
			}
		}
		return m
	}
	lf, ls := ledger(full), ledger(skip)
	require.Positive(t, lf[MetricLedgerHostGapUs])
	require.Zero(t, ls[MetricLedgerHostGapUs])
	require.InDelta(t, lf[MetricLedgerHostGapUs]+lf[MetricLedgerIdleUs], ls[MetricLedgerIdleUs], 1e-6)
	for k, v := range lf {
		if k != MetricLedgerHostGapUs && k != MetricLedgerIdleUs && k != MetricLedgerHostGapShare && k != MetricLedgerIdleShare {
			require.Equal(t, v, ls[k], k)
		}
	}
	doc := func(res *Result) string {
		var out []any
		for _, rr := range res.Ranks {
			out = append(out, rr.Metrics, rr.Unavailable, StepsOf(rr), rr.Errors, rr.Warnings, rr.Partial, HCCLOf(rr), MoEOf(rr), EventWaitOf(rr), KernelsOf(rr))
		}
		out = append(out, res.Cluster)
		b, err := json.Marshal(out)
		require.NoError(t, err)
		return string(b)
	}
	require.Equal(t, doc(full), doc(skip))
}

// A pass's result is read through its typed accessor: the result where the
// pass ran, nil where it failed, and an accessor of the wrong type is
// refused when it is made.
func TestResultAccessors(t *testing.T) {
	for _, p := range Passes {
		require.NotNil(t, p.ResultType, p.Name)
	}
	for _, p := range ClusterPasses {
		require.NotNil(t, p.ResultType, p.Name)
	}
	require.PanicsWithValue(t, "analysis: accessor of pass hccl reads *analysis.MoEResult, but the pass returns *analysis.HCCLResult",
		func() { RankResultOf[*MoEResult](HCCLPass) })
	want := &HCCLResult{}
	good := &Pass{Name: "good", Doc: "d", ResultType: reflect.TypeOf(want), Run: func(*Context) (any, error) { return want, nil }}
	bad := &Pass{Name: "bad", Doc: "d", ResultType: reflect.TypeOf(want), Run: func(*Context) (any, error) { panic("boom") }}
	goodOf, badOf := RankResultOf[*HCCLResult](good), RankResultOf[*HCCLResult](bad)
	rr := RunRank(model.NewRank("r"), []*Pass{good, bad})
	require.Same(t, want, goodOf(rr))
	require.Nil(t, badOf(rr))
	require.Nil(t, HCCLOf(rr), "a pass that did not run has no result")
	require.Nil(t, SkewOf(nil))
}

// A pass's accessor declares its ResultType and reads the result inside a
// pass that requires it; UnavailableAll marks every metric the running
// pass declares but its families.
func TestAccessorInAPassAndUnavailableAll(t *testing.T) {
	want := &HCCLResult{}
	first := &Pass{Name: "first", Doc: "d", Run: func(*Context) (any, error) { return want, nil }}
	firstOf := RankResultOf[*HCCLResult](first)
	require.Equal(t, reflect.TypeOf(want), first.ResultType)
	var seen *HCCLResult
	second := &Pass{Name: "second", Doc: "d", Requires: []*Pass{first},
		Metrics: []Metric{{Name: "a.count", Unit: "count", Doc: "a"}, {Name: "b.time_us", Unit: "µs", Doc: "b"}, {Name: "c.<x>.count", Unit: "count", Doc: "c", Base: "a.count"}},
		Run: func(ctx *Context) (any, error) {
			seen = firstOf(ctx)
			ctx.UnavailableAll("why")
			return nil, nil
		}}
	rr := RunRank(model.NewRank("r"), []*Pass{second})
	require.Same(t, want, seen)
	require.Same(t, want, firstOf(rr))
	require.Equal(t, "why", rr.Unavailable["a.count"])
	require.Equal(t, "why", rr.Unavailable["b.time_us"])
	require.NotContains(t, rr.Unavailable, "c.<x>.count")
}

// TestReduceFrameworkSameResult: a rank whose framework ops and links
// are reduced to their launches and name counts (model.ReduceFramework,
// as pipeline.Analyze does) gives every result a rank with them gives,
// the ledger's host gaps and the workload's name clues included, whether
// its links are in task order or not (the ledger then sorts the main
// stream's).
func TestReduceFrameworkSameResult(t *testing.T) {
	_, root := testutil.GenerateTiny(t)
	read := func(reverse, reduce bool) *Result {
		p, err := gather.Models(context.Background(), root, gather.Options{})
		require.NoError(t, err)
		r := p.Ranks[0]
		require.NotEmpty(t, r.Links)
		if reverse {
			slices.Reverse(r.Links)
		}
		if reduce {
			r.ReduceFramework()
			require.Nil(t, r.FrameworkOps)
			require.Nil(t, r.Links)
			require.True(t, r.Have.Framework)
		}
		res, err := analyzeProfile(p)
		require.NoError(t, err)
		return res
	}
	doc := func(res *Result) string {
		var out []any
		for _, rr := range res.Ranks {
			out = append(out, rr.Metrics, rr.Unavailable, LedgerOf(rr), WorkloadOf(rr))
		}
		out = append(out, res.Cluster)
		b, err := json.Marshal(out)
		require.NoError(t, err)
		return string(b)
	}
	for _, reverse := range []bool{false, true} {
		full := read(reverse, false)
		require.Positive(t, full.Cluster.Metrics[MetricLedgerHostGapUs])
		require.NotEmpty(t, WorkloadOf(full.Ranks[0]).Clues)
		require.Equal(t, doc(full), doc(read(reverse, true)), "links reversed: %v", reverse)
	}
}
