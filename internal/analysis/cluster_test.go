package analysis

import (
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestRobustStatistics(t *testing.T) {
	m, mad := robust([]float64{1, 2, 3, 4, 100})
	require.Equal(t, 3.0, m)
	require.Equal(t, 1.0, mad)
	require.InDelta(t, (100-3)/1.4826, zscore(100, m, mad), 1e-9)
	// a max-min rule would flag 4 here; the robust rule flags only 100
	st := skewStat("computing", []rankValue{{0, 1}, {1, 2}, {2, 3}, {3, 4}, {4, 100}})
	out := outliers(st, []rankValue{{0, 1}, {1, 2}, {2, 3}, {3, 4}, {4, 100}}, -1, 0)
	require.Len(t, out, 1)
	require.Equal(t, 4, out[0].Rank)
	// identical ranks: nobody is slow
	st = skewStat("computing", []rankValue{{0, 5}, {1, 5}, {2, 5}})
	require.Empty(t, outliers(st, []rankValue{{0, 5}, {1, 5}, {2, 5}}, -1, 0))
	// an outlier smaller than the effect-size floor is not reported
	st = skewStat("free", []rankValue{{0, 100}, {1, 101}, {2, 100}, {3, 150}})
	require.Len(t, outliers(st, []rankValue{{0, 100}, {1, 101}, {2, 100}, {3, 150}}, -1, 0), 1)
	require.Empty(t, outliers(st, []rankValue{{0, 100}, {1, 101}, {2, 100}, {3, 150}}, -1, 60))
}

// Cluster passes run through the rank passes' runner: validated, timed,
// a panic or a result of the wrong type is an error naming the pass, and a
// dependent of a failed pass is not run and names it.
func TestClusterRunnerSharesRankRunner(t *testing.T) {
	cr := RunCluster(nil, nil)
	var names []string
	for _, tm := range cr.Timings {
		require.Equal(t, -1, tm.Rank)
		names = append(names, tm.Pass)
	}
	require.Equal(t, []string{"arrival", "skew", "experts", "moe_wait", "engines", "ledger_cluster", "service"}, names)
	require.NotNil(t, ArrivalOf(cr))
	require.NoError(t, Validate(ClusterPasses))

	ok := &ClusterPass{Name: "ok", Doc: "sets x", Run: func(ctx *ClusterContext) (any, error) {
		ctx.cluster.Metrics["x"] = 1
		return nil, nil
	}}
	bad := &ClusterPass{Name: "bad", Doc: "panics", Run: func(*ClusterContext) (any, error) { panic("boom") }}
	after := &ClusterPass{Name: "after", Doc: "needs bad", Requires: []*ClusterPass{ok, bad},
		Run: func(*ClusterContext) (any, error) { return nil, nil }}
	wrong := &ClusterPass{Name: "wrong", Doc: "returns the wrong type", ResultType: reflect.TypeOf((*SkewResult)(nil)),
		Run: func(*ClusterContext) (any, error) { return &ArrivalResult{}, nil }}
	require.NoError(t, Validate([]*ClusterPass{ok, bad, after, wrong}))
	old := ClusterPasses
	ClusterPasses = []*ClusterPass{ok, bad, after, wrong}
	defer func() { ClusterPasses = old }()
	cr = RunCluster(nil, nil)
	require.Equal(t, 1.0, cr.Metrics["x"])
	require.Len(t, cr.Errors, 3)
	require.Equal(t, "bad", cr.Errors[0].Pass)
	require.True(t, strings.HasPrefix(cr.Errors[0].Message, "internal error: panic: boom\n"), cr.Errors[0].Message)
	require.Equal(t, PassError{Pass: "after", Rank: -1, Message: "not run: prerequisite failed: bad"}, cr.Errors[1])
	require.Equal(t, "internal error: result of type *analysis.ArrivalResult, want *analysis.SkewResult", cr.Errors[2].Message)
	require.Equal(t, "not run: prerequisite failed: bad", cr.Unavailable["pass.after"])
	require.Len(t, cr.Timings, 3, "ok, bad and wrong ran; after did not")

	a := &ClusterPass{Name: "a", Doc: "a", Run: ok.Run}
	b := &ClusterPass{Name: "b", Doc: "b", Run: ok.Run, Requires: []*ClusterPass{a}}
	a.Requires = []*ClusterPass{b}
	require.EqualError(t, Validate([]*ClusterPass{a}), "cycle in Requires: a -> b -> a")
}
