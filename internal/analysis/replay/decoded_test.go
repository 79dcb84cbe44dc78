package replay_test

import (
	"testing"

	"github.com/npuprof/npuprof/internal/analysis/replay"
	"github.com/npuprof/npuprof/internal/tracegen"
	"github.com/stretchr/testify/require"
)

// A timeline kept decoded (what fits in decodedMaxBytes) and the same
// capture's timeline kept encoded in the spill file predict alike: every
// fix by Predict and PredictStep, every fix after another by PredictOn,
// and the copies they leave replay alike. The captures are each fix
// pair's before side and one of 94 layers.
func TestDecodedSameAsEncoded(t *testing.T) {
	fixes := [][]replay.Transform{
		{replay.RemoveKernels{Op: "Cumsum", After: "MoeInitRouting"}}, {replay.ReplaceCollectives{Group: "tp"}},
		{replay.EagerToGraph{}}, {replay.Rebatch{To: 25}}, {replay.RebalanceExperts{}}, {replay.ReplaceCollectives{Group: "nosuch"}},
	}
	deep, ok := tracegen.Lookup("ep-fc1-cumsum")
	require.True(t, ok)
	deep.Name, deep.Layers, deep.Steps, deep.Ranks = "deep", 94, 3, 2
	scenarios := []tracegen.Scenario{deep}
	for _, p := range tracegen.FixPairs() {
		scenarios = append(scenarios, p.Before)
	}
	for _, s := range scenarios {
		t.Run(s.Name, func(t *testing.T) {
			// two analyses: NewTimeline edits the ranks' lines it joins
			restore := replay.SetDecodedMaxBytes(0)
			enc := timelineOf(analyzeScenario(t, s))
			restore()
			dec := timelineOf(analyzeScenario(t, s))
			require.False(t, replay.Decoded(enc))
			require.True(t, replay.Decoded(dec), "%s fits in the decoded budget", s.Name)
			we, err := enc.Replay()
			require.NoError(t, err)
			wd, err := dec.Replay()
			require.NoError(t, err)
			require.Equal(t, we, wd)
			for _, first := range fixes {
				pe, ce, eerr := replay.Predict(enc, first)
				pd, cd, derr := replay.Predict(dec, first)
				if eerr != nil {
					require.EqualError(t, derr, eerr.Error())
					continue
				}
				require.NoError(t, derr)
				require.Equal(t, pe, pd, first[0].Name())
				se, err := replay.PredictStep(enc, first)
				require.NoError(t, err)
				sd, err := replay.PredictStep(dec, first)
				require.NoError(t, err)
				require.Equal(t, se, sd, first[0].Name())
				second := fixes[1]
				oe, te, eerr := replay.PredictOn(ce, second)
				od, td, derr := replay.PredictOn(cd, second)
				if eerr != nil {
					require.EqualError(t, derr, eerr.Error())
					continue
				}
				require.NoError(t, derr)
				require.Equal(t, oe, od, "%s then %s", first[0].Name(), second[0].Name())
				re, err := te.Replay()
				require.NoError(t, err)
				rd, err := td.Replay()
				require.NoError(t, err)
				require.Equal(t, re, rd)
			}
		})
	}
}
