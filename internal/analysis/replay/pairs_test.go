package replay_test

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/npuprof/npuprof/internal/analysis"
	"github.com/npuprof/npuprof/internal/analysis/replay"
	"github.com/npuprof/npuprof/internal/tracegen"
	"github.com/stretchr/testify/require"
)

// measuredStep is the mean over ranks of decode.step.time_us, in ns.
func measuredStep(t *testing.T, res *analysis.Result) float64 {
	var s float64
	for _, rr := range res.Ranks {
		v, ok := rr.Metrics["decode.step.time_us"]
		require.True(t, ok, "rank %d: %s", rr.Rank, rr.Unavailable["decode.step.time_us"])
		s += v * 1000
	}
	return s / float64(len(res.Ranks))
}

// pairFix is the fix of each tracegen pair as transforms.
var pairFix = map[string][]replay.Transform{
	"ep-fc1-off":       {replay.ReplaceCollectives{Group: "tp"}},
	"cumsum-off":       {replay.RemoveKernels{Op: "Cumsum", After: "MoeInitRouting"}},
	"eager-to-graph":   {replay.EagerToGraph{}},
	"padding-32-to-25": {replay.Rebatch{To: 25}},
	"eplb":             {replay.RebalanceExperts{}},
	"eplb-hot-rank":    {replay.RebalanceExperts{}},
}

// withinQuarter checks a predicted change against the measured one: within
// ±25% of the measured change.
func withinQuarter(t *testing.T, name string, predicted, measured float64) {
	t.Helper()
	t.Logf("%s: predicted %+.2f%%, measured %+.2f%%", name, predicted, measured)
	require.NotZero(t, measured)
	require.LessOrEqual(t, math.Abs(predicted-measured), 0.25*math.Abs(measured),
		"%s: predicted %+.2f%% is not within ±25%% of the measured %+.2f%%", name, predicted, measured)
}

// On each before/after pair of a single fix, the replayed prediction on
// the before profile is within ±25% of the step-time change npuprof
// measures on the after profile.
func TestPairsPredictMeasuredChange(t *testing.T) {
	for _, p := range tracegen.FixPairs() {
		t.Run(p.Name, func(t *testing.T) {
			t.Parallel()
			before, after := analyzeScenario(t, p.Before), analyzeScenario(t, p.After)
			pred, _, err := replay.Predict(timelineOf(before), pairFix[p.Name])
			require.NoError(t, err)
			t.Logf("basis: %s", pred.Basis)
			mb, ma := measuredStep(t, before), measuredStep(t, after)
			measured, _ := replay.Change(mb, ma)
			t.Logf("measured %.1f -> %.1f µs, replayed %.1f -> %.1f µs", mb/1000, ma/1000, pred.BeforeNs/1000, pred.AfterNs/1000)
			withinQuarter(t, p.Name, pred.ChangePct, measured)
			require.Equal(t, p.Rule == "expert-imbalance", pred.UpperBound)
		})
	}
}

// The first field report's three fixes, replayed one after the other on
// the first capture (each on the timeline the earlier ones left), add up
// to within ±25% of the change measured from the first capture to the
// last, and each step's gain adds to the total.
func TestFieldReportPlanTotal(t *testing.T) {
	f := tracegen.FieldReport()
	first, last := analyzeScenario(t, f[0]), analyzeScenario(t, f[len(f)-1])
	tl := timelineOf(first)
	base, err := tl.Replay()
	require.NoError(t, err)
	var sum float64
	for _, fix := range [][]replay.Transform{pairFix["cumsum-off"], pairFix["ep-fc1-off"], {replay.Rebatch{To: 25}}} {
		p, next, err := replay.Predict(tl, fix)
		require.NoError(t, err)
		require.InDelta(t, 0, p.BeforeNs-func() float64 { r, _ := tl.Replay(); return r.StepNs }(), 1)
		sum += p.AfterNs - p.BeforeNs
		t.Logf("%s: %+.2f%% (%s)", fix[0].Name(), p.ChangePct, p.Basis)
		tl = next
	}
	end, err := tl.Replay()
	require.NoError(t, err)
	require.InDelta(t, end.StepNs-base.StepNs, sum, 1)
	predicted, _ := replay.Change(base.StepNs, end.StepNs)
	measured, _ := replay.Change(measuredStep(t, first), measuredStep(t, last))
	withinQuarter(t, "field report plan", predicted, measured)
}

// PredictStep, which edits and replays one step at a time, predicts what
// Predict does on the whole copy, for every transform, on every fix pair's
// capture before and after its fix (where some transforms fail, with the
// same error), and on a timeline a fix has already edited.
func TestPredictStepSameAsPredict(t *testing.T) {
	fixes := [][]replay.Transform{
		{replay.RemoveKernels{Op: "Cumsum", After: "MoeInitRouting"}}, {replay.RemoveKernels{Op: "NoSuchOp"}},
		{replay.ReplaceCollectives{Group: "tp"}}, {replay.ReplaceCollectives{Group: "nosuch"}},
		{replay.EagerToGraph{}}, {replay.Rebatch{To: 25}}, {replay.Rebatch{From: 7, To: 3}}, {replay.RebalanceExperts{}},
	}
	for _, p := range tracegen.FixPairs() {
		for _, s := range []tracegen.Scenario{p.Before, p.After} {
			t.Run(s.Name, func(t *testing.T) {
				t.Parallel()
				measured := timelineOf(analyzeScenario(t, s))
				_, edited, err := replay.Predict(measured, []replay.Transform{replay.EagerToGraph{}})
				require.NoError(t, err)
				for _, tl := range []*replay.Timeline{measured, edited} {
					for _, fix := range fixes {
						want, _, werr := replay.Predict(tl, fix)
						got, gerr := replay.PredictStep(tl, fix)
						if werr != nil {
							require.EqualError(t, gerr, werr.Error(), fix[0].Name())
							continue
						}
						require.NoError(t, gerr, fix[0].Name())
						require.Equal(t, want, got, fix[0].Name())
					}
				}
			})
		}
	}
}

// An early member's wait for the last one shows inside the op (its Notify
// Wait) or before it (the comm stream's EVENT_WAIT, the op starting on
// every member at the last arrival): both mean the same, so the replay
// reproduces either capture and predicts the hot EP rank's rebalancing
// alike, within half a point, and close to what it measures.
func TestWaitFormsPredictAlike(t *testing.T) {
	var s, after tracegen.Scenario
	for _, p := range tracegen.FixPairs() {
		if p.Name == "eplb-hot-rank" {
			s, after = p.Before, p.After
		}
	}
	// the AllGather dispatcher: the peers wait for the hot rank at the
	// next HCCL collective, not inside an MC2 kernel
	s.Dispatcher, after.Dispatcher = "", ""
	measured, _ := replay.Change(measuredStep(t, analyzeScenario(t, s)), measuredStep(t, analyzeScenario(t, after)))
	var preds []float64
	for _, before := range []bool{false, true} {
		s.WaitBeforeOp = before
		res := analyzeScenario(t, s)
		tl := timelineOf(res)
		base, err := tl.Replay()
		require.NoError(t, err)
		require.InEpsilon(t, measuredStep(t, res), base.StepNs, 0.01, "wait before the op: %v", before)
		p, _, err := replay.Predict(tl, []replay.Transform{replay.RebalanceExperts{}})
		require.NoError(t, err)
		withinQuarter(t, fmt.Sprintf("hot-rank, wait before the op %v", before), p.ChangePct, measured)
		preds = append(preds, p.ChangePct)
	}
	require.InDelta(t, preds[0], preds[1], 0.5)
}

// On the A3 system the busy engine's steps come from ProfilerStep#N and
// the dummy engines' from the layer period, whose first step starts a step
// later: the timeline keeps the same steps on every rank (the MC2
// exchanges' ends name them), so the exchanges pair across the ranks and
// start when the last member arrives. The replay gives back the measured
// step time, and shortening the busy engine's work shortens the idle
// engines' steps, which wait for it inside dispatch and combine.
func TestReplayA3CrossRank(t *testing.T) {
	for _, s := range tracegen.FieldReport2() {
		t.Run(s.Name, func(t *testing.T) {
			t.Parallel()
			res := analyzeScenario(t, s)
			tl := timelineOf(res)
			require.Len(t, tl.Ranks, s.Ranks)
			require.Positive(t, tl.Steps)
			for _, l := range tl.Ranks {
				g := -1
				for i, gr := range l.Groups {
					if gr.Name == "ep" {
						g = i
					}
				}
				require.GreaterOrEqual(t, g, 0, "rank %d", l.Rank)
				require.Len(t, l.Groups[g].Members, s.Ranks, "rank %d: its exchanges pair with the ep group's", l.Rank)
			}
			r, err := tl.Replay()
			require.NoError(t, err)
			require.InEpsilon(t, measuredStep(t, res), r.StepNs, 0.01)
			// the busy engine (ranks 0..TP-1) computes in half the time
			busy := s.TP
			for _, l := range tl.Ranks[:busy] {
				for k := range l.Steps {
					items := l.StepItems(k)
					for i := range items {
						if it := &items[i]; it.Kind == replay.Kernel && !strings.Contains(l.Ops[it.Op], "MoeDistribute") {
							it.Dur /= 2
						}
					}
					l.SetStepItems(k, items)
				}
			}
			after, err := tl.Replay()
			require.NoError(t, err)
			for i := busy; i < len(tl.Ranks); i++ {
				t.Logf("rank %d: %.1f -> %.1f µs", tl.Ranks[i].Rank, r.RankStepNs[i]/1000, after.RankStepNs[i]/1000)
				// replayed as measured, its step would not change
				require.Less(t, after.RankStepNs[i], r.RankStepNs[i]-5000, "idle rank %d waits less for the busy engine", tl.Ranks[i].Rank)
			}
		})
	}
}

// PredictOn, which edits an earlier prediction's copy in place, predicts
// what Predict does on a copy of it and leaves a timeline that replays
// alike, for every pair of fixes in turn, without changing the measured
// timeline the copies share steps with; on the measured timeline it
// copies it as Predict does.
func TestPredictOnSameAsPredict(t *testing.T) {
	fixes := [][]replay.Transform{
		{replay.RemoveKernels{Op: "Cumsum", After: "MoeInitRouting"}}, {replay.ReplaceCollectives{Group: "tp"}},
		{replay.EagerToGraph{}}, {replay.Rebatch{To: 25}}, {replay.RebalanceExperts{}},
	}
	for _, p := range tracegen.FixPairs() {
		s := p.Before
		t.Run(s.Name, func(t *testing.T) {
			t.Parallel()
			measured := timelineOf(analyzeScenario(t, s))
			before, err := measured.Replay()
			require.NoError(t, err)
			for _, first := range fixes {
				for _, second := range fixes {
					_, c1, err := replay.Predict(measured, first)
					if err != nil {
						continue
					}
					want, wtl, werr := replay.Predict(c1, second)
					_, c2, err := replay.Predict(measured, first)
					require.NoError(t, err)
					got, gtl, gerr := replay.PredictOn(c2, second)
					if werr != nil {
						require.EqualError(t, gerr, werr.Error())
						continue
					}
					require.NoError(t, gerr)
					require.Same(t, c2, gtl, "edited in place")
					require.Equal(t, want, got, "%s then %s", first[0].Name(), second[0].Name())
					wr, err := wtl.Replay()
					require.NoError(t, err)
					gr, err := gtl.Replay()
					require.NoError(t, err)
					require.Equal(t, wr, gr)
				}
			}
			again, err := measured.Replay()
			require.NoError(t, err)
			require.Equal(t, before, again, "the measured timeline is unchanged")
			_, ctl, err := replay.PredictOn(measured, fixes[2])
			require.NoError(t, err)
			require.NotSame(t, measured, ctl, "the measured timeline is copied")
		})
	}
}
