package analysis

import (
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/npuprof/npuprof/internal/testutil"
	"github.com/npuprof/npuprof/internal/tracegen"
)

// requireLedgerStep checks one ledger step: no cause negative, the causes
// sum exactly to the step, and each cause's split sums to the cause.
func requireLedgerStep(t *testing.T, what string, s *LedgerStep) {
	t.Helper()
	var sum int64
	for c := range NumCauses {
		require.GreaterOrEqual(t, s.Causes[c], int64(0), "%s step %d: %s", what, s.Index, c)
		sum += s.Causes[c]
	}
	require.Positive(t, s.Ns(), "%s step %d", what, s.Index)
	require.Equal(t, s.Ns(), sum, "%s step %d: %v", what, s.Index, s.Causes)
	var coll, streams, peers int64
	for _, e := range s.Collectives {
		require.GreaterOrEqual(t, e.Ns, int64(0), "%s step %d: %s", what, s.Index, e.Name)
		coll += e.Ns
	}
	for _, e := range s.Streams {
		require.Positive(t, e.Ns)
		streams += e.Ns
	}
	for _, e := range s.Peers {
		require.Positive(t, e.Ns)
		peers += e.Ns
	}
	require.Equal(t, s.Causes[CauseCollective], coll, "%s step %d", what, s.Index)
	require.Equal(t, s.Causes[CauseStreamWait], streams, "%s step %d", what, s.Index)
	require.Equal(t, s.Causes[CausePeerWait], peers, "%s step %d", what, s.Index)
}

// requireLedgerSums checks every ledger of res: each rank's, each rank's
// with the peer waits split off, the critical steps and the cluster
// metrics (shares in [0, 1], the causes summing to the step).
func requireLedgerSums(t *testing.T, res *Result) {
	t.Helper()
	for _, rr := range res.Ranks {
		l := LedgerOf(rr)
		if l == nil {
			continue
		}
		for i := range l.Steps {
			require.Zero(t, l.Steps[i].Causes[CausePeerWait])
			requireLedgerStep(t, fmt.Sprintf("rank %d", rr.Rank), &l.Steps[i])
		}
	}
	lc := LedgerClusterOf(res.Cluster)
	if lc == nil || len(lc.Steps) == 0 {
		return
	}
	for _, rl := range lc.Ranks {
		for i := range rl.Steps {
			requireLedgerStep(t, fmt.Sprintf("cluster rank %d", rl.Rank), &rl.Steps[i])
		}
	}
	for i := range lc.Steps {
		requireLedgerStep(t, fmt.Sprintf("critical rank %d", lc.Steps[i].Rank), &lc.Steps[i].LedgerStep)
	}
	m := res.Cluster.Metrics
	var us, share float64
	for c := range NumCauses {
		v, ok := m[LedgerCauseMetrics[c][0]]
		require.True(t, ok, LedgerCauseMetrics[c][0])
		require.GreaterOrEqual(t, v, 0.0)
		sh := m[LedgerCauseMetrics[c][1]]
		require.GreaterOrEqual(t, sh, 0.0)
		require.LessOrEqual(t, sh, 1.0)
		us += v
		share += sh
	}
	step := m[MetricLedgerStepUs]
	require.Positive(t, step)
	require.InDelta(t, step, us, 1e-4*step)
	require.InDelta(t, 1, share, 1e-9)
}

// ledgerScenarios are the named scenarios, the field reports and the fix
// pairs' captures.
func ledgerScenarios() []tracegen.Scenario {
	out := append([]tracegen.Scenario(nil), tracegen.Scenarios()...)
	out = append(out, tracegen.FieldReport()...)
	out = append(out, tracegen.FieldReport2()...)
	for _, p := range tracegen.FixPairs() {
		out = append(out, p.Before, p.After)
	}
	return out
}

// randomMixes are n valid scenarios with random settings (seeded).
func randomMixes(n int) []tracegen.Scenario {
	rng := rand.New(rand.NewSource(28))
	names := []string{"clean", "ep-fc1-cumsum", "hot-rank", "host-bound", "captured-batch", "uncaptured-batch"}
	var out []tracegen.Scenario
	for len(out) < n {
		s, _ := tracegen.Lookup(names[rng.Intn(len(names))])
		s.Name = fmt.Sprintf("mix-%d", len(out))
		s.Seed = rng.Int63n(1000)
		s.Ranks = []int{2, 4, 8}[rng.Intn(3)]
		s.Layers = 2 + rng.Intn(4)
		s.Steps = 2 + rng.Intn(3)
		s.Batch = 1 + rng.Intn(32)
		s.ExpertParallel = rng.Intn(2) == 0
		s.FlashComm1 = s.ExpertParallel && rng.Intn(2) == 0
		s.Cumsum = rng.Intn(2) == 0
		s.ProfilerSteps = rng.Intn(2) == 0
		s.EventWaits = rng.Intn(4) != 0
		s.AivComm = rng.Intn(2) == 0
		s.HotRank, s.SkewFactor = -1, 1
		if s.ExpertParallel && rng.Intn(3) == 0 {
			s.HotRank, s.SkewFactor = rng.Intn(s.Ranks), 1.5+rng.Float64()*2
		}
		s.SlowRank = -1
		if rng.Intn(4) == 0 {
			s.SlowRank, s.SlowFactor = rng.Intn(s.Ranks), 1.3
		}
		s.HostSlowdown = 0
		if rng.Intn(4) == 0 {
			s.HostSlowdown = 3
		}
		s.CaptureSizes = nil
		if rng.Intn(2) == 0 {
			s.CaptureSizes = []int{1, 2, 4, 8, 16, 24, 32}
		}
		s.Dispatcher = ""
		if s.ExpertParallel && !s.FlashComm1 {
			s.Dispatcher = []string{"", "mc2", "fused_mc2", "alltoall"}[rng.Intn(4)]
		}
		s.TP = 0
		s.DummyEngines = false
		if s.Ranks >= 4 && rng.Intn(3) == 0 {
			s.TP = s.Ranks / 2
			s.DummyEngines = rng.Intn(2) == 0
		}
		s.SideStream = rng.Intn(3) == 0
		s.SideStreamNs = 0
		if s.SideStream && rng.Intn(2) == 0 {
			s.SideStreamNs = 50_000
		}
		s.CommJSON = false
		if s.Validate() != nil {
			continue
		}
		out = append(out, s)
	}
	return out
}

// On every generated capture (the named scenarios, the field reports, the
// fix pairs and 30 random mixes) the ledger of every step of every rank,
// and the critical rank's, sums exactly to the step, no cause negative.
func TestLedgerSumsToStepOnGenerated(t *testing.T) {
	scs := append(ledgerScenarios(), randomMixes(30)...)
	for _, sc := range scs {
		t.Run(sc.Name, func(t *testing.T) {
			t.Parallel()
			_, _, res := generateAndAnalyze(t, sc)
			requireLedgerSums(t, res)
			lc := LedgerClusterOf(res.Cluster)
			require.NotNil(t, lc)
			require.NotEmpty(t, lc.Steps, "%s: %v", sc.Name, res.Cluster.Unavailable[MetricLedgerStepUs])
			for _, rr := range res.Ranks {
				require.Len(t, LedgerOf(rr).Steps, sc.Steps, "rank %d", rr.Rank)
			}
		})
	}
}

// The committed traces: the same sums.
func TestLedgerSumsToStepOnCommittedTraces(t *testing.T) {
	dirs, err := filepath.Glob(filepath.Join(testutil.RepoRoot(), "testdata", "traces", "*"))
	require.NoError(t, err)
	require.Positive(t, requireLedgerSumsIn(t, dirs), "no committed trace gave a ledger")
}

// The real profiler samples (their ProfilerStep#N): the same sums.
func TestLedgerSumsToStepOnRealSamples(t *testing.T) {
	var dirs []string
	for _, rel := range []string{
		"Ascend-msinsight/test/data/pytorch/text/level0/rank0_ascend_pt",
		"Ascend-msinsight/test/data/pytorch/text/level1/rank0_ascend_pt",
		"Ascend-msinsight/test/data/pytorch/text/level1/rank1_ascend_pt",
		"Ascend-msinsight/test/data/pytorch/text/level2/rank0_ascend_pt",
		"Ascend-msinsight/test/data/pytorch/db/level1/rank0_ascend_pt",
		"Ascend-msinsight/test/data/pytorch/db/level1/rank1_ascend_pt",
	} {
		dirs = append(dirs, testutil.Sample(t, rel))
	}
	require.Positive(t, requireLedgerSumsIn(t, dirs), "no real sample gave a ledger")
}

// requireLedgerSumsIn analyzes each folder of dirs (files are skipped),
// checks its ledgers' sums and returns how many ledger steps they had; a
// rank without a ledger says why.
func requireLedgerSumsIn(t *testing.T, dirs []string) int {
	steps := 0
	for _, dir := range dirs {
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			continue
		}
		res := analyzeDir(t, dir)
		requireLedgerSums(t, res)
		for _, rr := range res.Ranks {
			if l := LedgerOf(rr); l != nil {
				steps += len(l.Steps)
			} else {
				require.NotEmpty(t, rr.Unavailable[MetricLedgerRankStepsCount], dir)
			}
		}
	}
	return steps
}

// sumCause sums one cause over a rank's ledger steps.
func sumCause(steps []LedgerStep, c Cause) int64 {
	var ns int64
	for i := range steps {
		ns += steps[i].Causes[c]
	}
	return ns
}

// peerNs sums the peer waits of one op over a rank's ledger steps.
func peerNs(steps []LedgerStep, op string) int64 {
	var ns int64
	for i := range steps {
		for _, p := range steps[i].Peers {
			if p.Op == op {
				ns += p.Ns
			}
		}
	}
	return ns
}

func usOf(ns int64) float64 { return float64(ns) / 1000 }

// The A3 system (TP4 x DP4, EP16, MC2, one request): every rank, the
// dummy engines' too, runs 4 steps of 8 MoE layers, and the ledger's
// entries equal what tracegen wrote: the main stream's waits for the
// side stream, its waits for collectives, the GroupedMatmuls, and the
// MC2 kernels' waits for the last EP rank.
func TestLedgerA3Truth(t *testing.T) {
	s, ok := tracegen.Lookup("a3-tp4dp4-rc1")
	require.True(t, ok)
	truth, _, res := generateAndAnalyze(t, s)
	lc := LedgerClusterOf(res.Cluster)
	require.Len(t, lc.Ranks, 16)
	var dispatchPeer, combinePeer int64
	for i, rr := range res.Ranks {
		rt := truth.Ranks[i]
		m := rr.Metrics
		require.Equal(t, 4.0, m[MetricDecodeStepsCount], "rank %d", rr.Rank)
		require.Equal(t, 8.0, m[MetricMoELayersCount], "rank %d", rr.Rank)
		l := LedgerOf(rr)
		require.Len(t, l.Steps, 4)
		want := StepsFromProfiler
		if rr.Rank >= 4 {
			want = StepsFromPeriod // the dummy engines: no ProfilerStep#N, no sampler
			require.Zero(t, m[MetricSamplerKernelsCount])
		}
		require.Equal(t, want, l.StepsSource, "rank %d", rr.Rank)
		for _, st := range l.Steps {
			require.Equal(t, PhaseDecode, st.Phase)
		}
		// the rank's own ledger: every wait of the main stream (2) is
		// for the side stream's gate or a collective
		side := rt.Metrics[tracegen.MetricEventWaitMainStreamKernelUs]
		require.Positive(t, side)
		require.InDelta(t, side, usOf(sumCause(l.Steps, CauseStreamWait)), 1e-6, "rank %d", rr.Rank)
		waits := rt.Metrics[tracegen.MetricEventWaitStream(2, "time_us")]
		require.InDelta(t, waits-side, usOf(sumCause(l.Steps, CauseCollective)), 1e-6, "rank %d", rr.Rank)
		require.InDelta(t, rt.Metrics[tracegen.MetricMoEGmmUs], usOf(sumCause(l.Steps, CauseExperts)), 1e-6, "rank %d", rr.Rank)
		require.Zero(t, sumCause(l.Steps, CauseHostGap), "graph replays: the host launches nothing")
		// split: the collective's waits are collective + peer wait
		rl := lc.Ranks[i]
		require.Equal(t, rr.Rank, rl.Rank)
		require.Equal(t, sumCause(l.Steps, CauseCollective), sumCause(rl.Steps, CauseCollective)+
			sumCause(rl.Steps, CausePeerWait)-peerNs(rl.Steps, "MoeDistributeDispatchV2")-peerNs(rl.Steps, "MoeDistributeCombineV2"))
		dispatchPeer += peerNs(rl.Steps, "MoeDistributeDispatchV2")
		combinePeer += peerNs(rl.Steps, "MoeDistributeCombineV2")
	}
	// tracegen's MC2 waits: per rank and layer, the last arrival minus
	// the rank's own (moe.dispatch.wait.per_layer.time_us is their mean)
	pairs := float64(16 * 4 * 8)
	require.InDelta(t, truth.Experts.Metrics[MetricMoEDispatchWaitLayerUs], usOf(dispatchPeer)/pairs, 1e-6)
	require.InDelta(t, truth.Experts.Metrics[MetricMoECombineWaitLayerUs], usOf(combinePeer)/pairs, 1e-6)
	// before a dispatch the last EP rank was held up by its side stream
	// (rc1's 100 µs a layer the main stream waits for)
	var side, all int64
	for _, rl := range lc.Ranks {
		for _, st := range rl.Steps {
			for _, p := range st.Peers {
				if p.Op == "MoeDistributeDispatchV2" {
					all += p.Ns
					if p.Late == CauseStreamWait {
						side += p.Ns
					}
				}
			}
		}
	}
	require.Greater(t, float64(side), 0.5*float64(all))
	require.Len(t, lc.Steps, 4)
	require.Equal(t, 4.0, res.Cluster.Metrics[MetricLedgerStepsCount])
	for _, cs := range lc.Steps {
		require.Positive(t, cs.Causes[CauseStreamWait])
	}
}

// A hot EP rank (its GroupedMatmuls 2.5x the others'): the ledger's MoE
// experts equal tracegen's, its collective time is the waits tracegen
// wrote plus the idle while a collective ran, the hot rank is the
// critical rank of every step, and its peers' waits name it and its
// experts.
func TestLedgerHotRankTruth(t *testing.T) {
	s, ok := tracegen.Lookup("hot-rank")
	require.True(t, ok)
	truth, _, res := generateAndAnalyze(t, s)
	lc := LedgerClusterOf(res.Cluster)
	for i, rr := range res.Ranks {
		rt := truth.Ranks[i]
		l := LedgerOf(rr)
		require.Len(t, l.Steps, 4)
		require.InDelta(t, rt.Metrics[tracegen.MetricMoEGmmUs], usOf(sumCause(l.Steps, CauseExperts)), 1e-6, "rank %d", rr.Rank)
		// the waits for the collectives, plus the main stream's idle
		// while a collective ran (between its record and its wait, a
		// device bubble before the overlapped ZerosLike)
		waits, coll := rt.Metrics[tracegen.MetricEventWaitStream(2, "time_us")], usOf(sumCause(l.Steps, CauseCollective))
		require.GreaterOrEqual(t, coll, waits-1e-6, "rank %d", rr.Rank)
		require.Less(t, coll, waits*1.01, "rank %d", rr.Rank)
		require.Zero(t, sumCause(l.Steps, CauseStreamWait))
	}
	require.Len(t, lc.Steps, 4)
	for _, cs := range lc.Steps {
		require.Equal(t, s.HotRank, cs.Rank, "step %d", cs.Step)
	}
	for _, rl := range lc.Ranks {
		if rl.Rank == s.HotRank {
			continue
		}
		var hot, all int64
		for _, st := range rl.Steps {
			for _, p := range st.Peers {
				all += p.Ns
				if p.Rank == s.HotRank && p.Late == CauseExperts {
					hot += p.Ns
				}
			}
		}
		require.Positive(t, all, "rank %d", rl.Rank)
		require.Greater(t, float64(hot), 0.5*float64(all), "rank %d waits mostly for the hot rank's experts", rl.Rank)
	}
}

// Host gaps only where the host launched late: a slow host's eager
// launches leave them, graph replays never.
func TestLedgerHostGap(t *testing.T) {
	_, _, res := generateAndAnalyze(t, testutil.Scenario(t, "host-bound"))
	require.Greater(t, res.Cluster.Metrics[MetricLedgerHostGapShare], 0.1)
	_, _, res = generateAndAnalyze(t, testutil.Scenario(t, "captured-batch"))
	for _, rr := range res.Ranks {
		require.Zero(t, sumCause(LedgerOf(rr).Steps, CauseHostGap), "rank %d", rr.Rank)
	}
	require.Zero(t, res.Cluster.Metrics[MetricLedgerHostGapUs])
}
