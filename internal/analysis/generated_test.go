package analysis

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/npuprof/npuprof/internal/parser/model"
	"github.com/npuprof/npuprof/internal/pipeline/gather"
	"github.com/npuprof/npuprof/internal/tracegen"
)

func closeEnough(want, got float64) bool {
	return math.Abs(want-got) <= 1e-4*math.Max(math.Abs(want), 1e-9)
}

// Every metric equals the generator's ground truth within 0.01%, for every
// scenario, with 8 ranks, including the per-step breakdown.
func TestGeneratedScenariosMatchTruth(t *testing.T) {
	for _, sc := range tracegen.Scenarios() {
		t.Run(sc.Name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			truth, err := tracegen.Generate(dir, sc)
			require.NoError(t, err)
			require.Len(t, truth.Ranks, 8)
			p, err := gather.Models(context.Background(), dir, gather.Options{})
			require.NoError(t, err)
			res, err := analyzeProfile(p)
			require.NoError(t, err)
			require.Len(t, res.Ranks, 8)
			// the cluster analysis names the hot rank, and nobody else
			var slow []int
			for _, s := range SkewOf(res.Cluster).Slow {
				if s.Step < 0 {
					slow = append(slow, s.Rank)
				}
			}
			if sc.HotRank >= 0 {
				require.Equal(t, []int{sc.HotRank}, slow, "%+v", SkewOf(res.Cluster).Slow)
			} else {
				require.Empty(t, slow, "%+v", SkewOf(res.Cluster).Slow)
			}
			checkExpertsTruth(t, truth, res)
			for i, rt := range truth.Ranks {
				rr := res.Ranks[i]
				require.Equal(t, rt.Rank, rr.Rank)
				require.Empty(t, rr.Errors)
				require.Equal(t, filepath.Base(rr.Path), rt.Dir)
				keys := make([]string, 0, len(rt.Metrics))
				for k := range rt.Metrics {
					keys = append(keys, k)
				}
				sort.Strings(keys)
				for _, k := range keys {
					got, ok := rr.Metrics[k]
					require.Truef(t, ok, "rank %d: metric %s missing (unavailable: %q)", rt.Rank, k, rr.Unavailable[k])
					require.Truef(t, closeEnough(rt.Metrics[k], got), "rank %d %s: truth %v, npuprof %v", rt.Rank, k, rt.Metrics[k], got)
				}
				// and npuprof reports no collective type or group the truth lacks
				for k := range rr.Metrics {
					// (per-layer times are means over matching layers: checked
					// with a tolerance in TestPerLayerCollectiveTime)
					if strings.HasPrefix(k, "hccl.") && !(strings.HasPrefix(k, "hccl.per_layer.") && strings.HasSuffix(k, ".time_us")) {
						_, ok := rt.Metrics[k]
						require.Truef(t, ok, "rank %d: unexpected metric %s", rt.Rank, k)
					}
				}
				require.Len(t, StepsOf(rr), len(rt.Steps))
				for j, st := range rt.Steps {
					s := StepsOf(rr)[j]
					require.Equal(t, st.Step, s.Step)
					for _, c := range []struct {
						name      string
						want, got float64
					}{
						{"computing", st.ComputingUs, us(s.Computing)},
						{"communication", st.CommunicationUs, us(s.Communication)},
						{"not overlapped", st.CommunicationNotOverlappedUs, us(s.CommunicationNotOverlapped)},
						{"free", st.FreeUs, us(s.Free)},
					} {
						require.Truef(t, closeEnough(c.want, c.got), "rank %d step %d %s: truth %v, npuprof %v", rt.Rank, st.Step, c.name, c.want, c.got)
					}
				}
			}
		})
	}
}

// checkExpertsTruth compares the profile-level expert metrics with the
// generator's truth within 0.1% (they are exact), and checks the hot rank
// and the hot experts npuprof names.
func checkExpertsTruth(t *testing.T, truth *tracegen.Truth, res *Result) {
	t.Helper()
	et := truth.Experts
	require.NotNil(t, et)
	require.Empty(t, res.Cluster.Errors)
	for _, k := range []string{MetricSkewGMMMaxOverMean, MetricSkewGMMMaxRank, MetricSkewGMMTokensMaxOverMean, MetricSkewGMMLostUs, MetricSkewGMMRanksCount,
		MetricExpertsImbalanceMax, MetricExpertsImbalanceMean, MetricExpertsImbalanceMaxLayer, MetricExpertsHotShareMax,
		MetricExpertsLayersCount, MetricExpertsCount, MetricExpertsTokensCount, MetricExpertsRankImbalanceMax, MetricExpertsRankImbalanceMean} {
		want, ok := et.Metrics[k]
		got, have := res.Cluster.Metrics[k]
		if !ok {
			require.Falsef(t, have, "%s: npuprof reports %v, the truth has none", k, got)
			require.NotEmptyf(t, res.Cluster.Unavailable[k], "%s: neither measured nor unavailable", k)
			continue
		}
		require.Truef(t, have, "%s missing (unavailable: %q)", k, res.Cluster.Unavailable[k])
		require.Truef(t, math.Abs(want-got) <= 1e-3*math.Abs(want), "%s: truth %v, npuprof %v", k, want, got)
	}
	if truth.Scenario.HotRank >= 0 && truth.Scenario.ExpertParallel {
		require.Equal(t, float64(truth.Scenario.HotRank), res.Cluster.Metrics[MetricSkewGMMMaxRank], "hot rank")
		var hot []int
		for _, r := range ExpertsOf(res.Cluster).EP.Ranks {
			if r.Hot {
				hot = append(hot, r.Rank)
			}
		}
		require.Equal(t, []int{truth.Scenario.HotRank}, hot)
	}
	if et.HotExperts == nil {
		return
	}
	require.NotNil(t, ExpertsOf(res.Cluster).Loads)
	require.Len(t, ExpertsOf(res.Cluster).Layers, len(et.HotExperts))
	for l, want := range et.HotExperts {
		var got []int
		for _, h := range ExpertsOf(res.Cluster).Layers[l].Top {
			got = append(got, h.Expert)
		}
		sort.Ints(got)
		require.Equalf(t, want, got, "layer %d: the generator's hot experts", l)
		require.Equal(t, et.Tokens[l], ExpertsOf(res.Cluster).Loads.Layers[l].Tokens, "layer %d loads", l)
	}
	for _, h := range ExpertsOf(res.Cluster).Hot {
		require.Containsf(t, et.HotExperts[h.Layer], h.Expert, "hot expert %+v is one of the generator's", h)
	}
	// The dumps' rank sums are the ranks' GroupedMatmul tokens in the
	// trace (two GroupedMatmul per layer, each on every routed token).
	for i, r := range ExpertsOf(res.Cluster).DumpRanks {
		require.Equal(t, 2*r.Tokens, int64(res.Ranks[i].Metrics["moe.gmm.tokens"]), "rank %d", r.Rank)
	}
	p := ExpertsOf(res.Cluster).EPLB
	require.NotNil(t, p)
	require.Equal(t, "expert map", p.BeforeFrom)
	require.InDelta(t, et.Metrics[MetricExpertsRankImbalanceMax], p.Before.Max, 1e-9, "before = the dumped placement")
	require.Less(t, p.After.Max, p.Before.Max)
}

// The committed demo trace still matches its recorded truth.
func TestCommittedDemoTrace(t *testing.T) {
	dir := filepath.Join("..", "..", "testdata", "traces", "ep-fc1-cumsum")
	truth, err := tracegen.ReadTruth(dir)
	require.NoError(t, err)
	p, err := gather.Models(context.Background(), dir, gather.Options{})
	require.NoError(t, err)
	res, err := analyzeProfile(p)
	require.NoError(t, err)
	for i, rt := range truth.Ranks {
		for k, v := range rt.Metrics {
			require.Truef(t, closeEnough(v, res.Ranks[i].Metrics[k]), "rank %d %s", rt.Rank, k)
		}
	}
	require.Equal(t, fmt.Sprint(8), fmt.Sprint(len(res.Ranks)))
	require.Empty(t, SkewOf(res.Cluster).Slow, "no slow rank in the demo capture")
}
func us(ns int64) float64 { return float64(ns) / 1000 }

// Per-layer collective time, checked independently of the signature
// logic: with ProfilerStep#N bounds, the collectives of the layers of a
// step are those that start between its first and last MoE routing kernel;
// their mean per layer must equal hccl.per_layer.time_us.
func TestPerLayerCollectiveTime(t *testing.T) {
	for _, name := range []string{"ep-fc1-cumsum-steps", "clean-steps"} {
		sc, _ := tracegen.Lookup(name)
		_, p, res := generateAndAnalyze(t, sc)
		for i, rr := range res.Ranks {
			r := p.Ranks[i]
			require.Len(t, r.Steps, sc.Steps)
			var sum int64
			byType := map[string]int64{}
			for _, st := range r.Steps {
				var first, last int64 = -1, -1
				for _, l := range MoEOf(rr).Layers {
					s := r.Tasks[l.Routing].Start
					if s >= st.Start && s < st.End {
						if first < 0 || s < first {
							first = s
						}
						last = max(last, s)
					}
				}
				for _, h := range r.HCCL {
					if h.Start > first && h.Start < last {
						sum += h.Dur
						byType[r.Str(h.Type)] += h.Dur
					}
				}
			}
			n := float64(sc.Steps * (sc.Layers - 1))
			require.Truef(t, closeEnough(us(sum)/n, rr.Metrics["hccl.per_layer.time_us"]), "%s rank %d: %v vs %v", name, rr.Rank, us(sum)/n, rr.Metrics["hccl.per_layer.time_us"])
			for typ, v := range byType {
				require.Truef(t, math.Abs(us(v)/n-rr.Metrics["hccl.per_layer."+typ+".time_us"]) < 0.002, "%s rank %d %s", name, rr.Rank, typ)
			}
		}
	}
}

// generateAndAnalyze writes the scenario, loads it and runs every pass.
func generateAndAnalyze(t *testing.T, sc tracegen.Scenario) (*tracegen.Truth, *gather.Set[*model.Rank], *Result) {
	t.Helper()
	dir := t.TempDir()
	truth, err := tracegen.Generate(dir, sc)
	require.NoError(t, err)
	p, err := gather.Models(context.Background(), dir, gather.Options{})
	require.NoError(t, err)
	res, err := analyzeProfile(p)
	require.NoError(t, err)
	return truth, p, res
}
