package facts

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/npuprof/npuprof/internal/analysis"
	"github.com/npuprof/npuprof/internal/results"
)

// --fact values are typed by the catalog: a list of integers, a version,
// a graph mode in any case; a negative number, an unknown fact or a value
// of the wrong type is refused, naming the fact.
func TestSetString(t *testing.T) {
	f := NewSet()
	require.NoError(t, f.SetString("capture_sizes=[1, 2,4]", "--fact"))
	require.NoError(t, f.SetString("cudagraph_mode=full_decode_only", "--fact"))
	require.NoError(t, f.SetString("env.HCCL_BUFFSIZE=200", "--fact"))
	v, _ := f.Get("capture_sizes")
	require.Equal(t, []int{1, 2, 4}, v.Value)
	v, _ = f.Get("cudagraph_mode")
	require.Equal(t, "FULL_DECODE_ONLY", v.Value)
	env, ok := f.Env("HCCL_BUFFSIZE")
	require.True(t, ok)
	require.Equal(t, "200", env)
	require.True(t, f.HasEnv())
	require.EqualError(t, f.SetString("dp=-1", "--fact"), "--fact dp=-1: expected a finite int >= 0")
	require.EqualError(t, f.SetString("vllm_ascend_version=latest", "--fact"), `--fact vllm_ascend_version=latest: version "latest": expected vMAJOR.MINOR.PATCH[rcN]`)
	require.ErrorContains(t, f.SetString("concurency=2", "--fact"), "unknown fact (closest: concurrency")
	require.EqualError(t, f.Set("tp", "4", "x"), "fact tp: expected int, got 4 (string)")
}

// A fact the profile measured stays when the script or --fact says
// otherwise: the disagreement is a conflict and a warning.
func TestGivenFactConflictsWithTheProfile(t *testing.T) {
	res := &analysis.Result{Ranks: []*analysis.RankResult{{Rank: 0, Metrics: map[string]float64{}, CANN: "8.1.RC1"}}}
	dep := &Deployment{Path: "serve.sh", Facts: []results.FactValue{{Name: "cann_version", Value: "8.3.RC2", Source: "serve.sh:5"}}}
	f, err := Build(res, dep, []string{"concurrency=8"})
	require.NoError(t, err)
	v, _ := f.Get("cann_version")
	require.Equal(t, "8.1.RC1", v.Value)
	require.Equal(t, []results.Conflict{{Fact: "cann_version", Profile: "8.1.RC1", ProfileSource: "profile: rank 0 profiler_info",
		Given: "8.3.RC2", GivenSource: "serve.sh:5", Used: "8.1.RC1"}}, f.Conflicts())
	require.Equal(t, []string{"conflict: cann_version is 8.1.RC1 in the profile (profile: rank 0 profiler_info) but 8.3.RC2 in serve.sh:5; the rules use 8.1.RC1, what ran"}, f.Warnings())
	v, _ = f.Get("concurrency")
	require.Equal(t, results.FactValue{Name: "concurrency", Value: 8, Source: "--fact concurrency=8"}, v)
}
