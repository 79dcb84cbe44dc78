package replay_test

import (
	"context"
	"testing"

	"github.com/npuprof/npuprof/internal/analysis"
	"github.com/npuprof/npuprof/internal/analysis/replay"
	"github.com/npuprof/npuprof/internal/pipeline"
	"github.com/npuprof/npuprof/internal/tracegen"
	"github.com/stretchr/testify/require"
)

// analyzeScenario generates s and analyzes it.
func analyzeScenario(t *testing.T, s tracegen.Scenario) *analysis.Result {
	t.Helper()
	dir := t.TempDir()
	_, err := tracegen.Generate(dir, s)
	require.NoError(t, err)
	res, err := pipeline.Analyze(context.Background(), dir, pipeline.Options{})
	require.NoError(t, err)
	return res
}

func timelineOf(res *analysis.Result) *replay.Timeline {
	var lines []*replay.RankLine
	for _, rr := range res.Ranks {
		lines = append(lines, analysis.ReplayOf(rr))
	}
	return replay.NewTimeline(lines)
}

// The replay without transforms gives back the measured step time.
func TestReplayReproducesMeasured(t *testing.T) {
	for _, p := range tracegen.FixPairs() {
		for _, s := range []tracegen.Scenario{p.Before, p.After} {
			t.Run(s.Name, func(t *testing.T) {
				res := analyzeScenario(t, s)
				tl := timelineOf(res)
				require.Len(t, tl.Ranks, s.Ranks)
				got, err := tl.Replay()
				require.NoError(t, err)
				var want float64
				for _, l := range tl.Ranks {
					want += l.StepNs / float64(len(tl.Ranks))
				}
				t.Logf("%s: measured %.1f µs, replayed %.1f µs", s.Name, want/1000, got.StepNs/1000)
				require.InEpsilon(t, want, got.StepNs, 0.002)
			})
		}
	}
}
