package analysis

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"sort"
	"testing"

	"github.com/npuprof/npuprof/internal/tracegen"
	"github.com/npuprof/npuprof/parser"
	"github.com/stretchr/testify/require"
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
			p, err := parser.Load(context.Background(), dir, parser.Options{})
			require.NoError(t, err)
			res, err := Analyze(p)
			require.NoError(t, err)
			require.Len(t, res.Ranks, 8)
			// the cluster analysis names the hot rank, and nobody else
			var slow []int
			for _, s := range res.Cluster.Skew.Slow {
				if s.Step < 0 {
					slow = append(slow, s.Rank)
				}
			}
			if sc.HotRank >= 0 {
				require.Equal(t, []int{sc.HotRank}, slow, "%+v", res.Cluster.Skew.Slow)
			} else {
				require.Empty(t, slow, "%+v", res.Cluster.Skew.Slow)
			}
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
					if len(k) > 5 && k[:5] == "hccl." {
						_, ok := rt.Metrics[k]
						require.Truef(t, ok, "rank %d: unexpected metric %s", rt.Rank, k)
					}
				}
				require.Len(t, rr.Steps, len(rt.Steps))
				for j, st := range rt.Steps {
					s := rr.Steps[j]
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

// The committed demo trace still matches its recorded truth.
func TestCommittedDemoTrace(t *testing.T) {
	dir := filepath.Join("..", "testdata", "traces", "ep-fc1-cumsum")
	truth, err := tracegen.ReadTruth(dir)
	require.NoError(t, err)
	p, err := parser.Load(context.Background(), dir, parser.Options{})
	require.NoError(t, err)
	res, err := Analyze(p)
	require.NoError(t, err)
	for i, rt := range truth.Ranks {
		for k, v := range rt.Metrics {
			require.Truef(t, closeEnough(v, res.Ranks[i].Metrics[k]), "rank %d %s", rt.Rank, k)
		}
	}
	require.Equal(t, fmt.Sprint(8), fmt.Sprint(len(res.Ranks)))
	require.Empty(t, res.Cluster.Skew.Slow, "no slow rank in the demo capture")
}
func us(ns int64) float64 { return float64(ns) / 1000 }
