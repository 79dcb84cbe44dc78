package plan_test

import (
	"math"
	"testing"

	"github.com/npuprof/npuprof/internal/tracegen"
	"github.com/stretchr/testify/require"
)

// On each before/after pair of a single fix, the built-in rules fire the
// pair's rule on the before capture and its finding's prediction (the
// replay of its transforms) is within ±25% of the step-time change
// measured on the after capture. Not "eplb": its hot experts are spread
// over the EP ranks, whose GroupedMatmul times then differ by less than
// expert-imbalance's min_skew (1.25), so the rule stays silent there (the
// replay's prediction on it is checked in analysis/replay).
func TestFixPairsPredicted(t *testing.T) {
	for _, p := range tracegen.FixPairs() {
		if p.Name == "eplb" {
			continue
		}
		t.Run(p.Name, func(t *testing.T) {
			t.Parallel()
			before, after := analyze(t, p.Before), analyze(t, p.After)
			rep, _ := planFor(t, before, fieldScript, "concurrency=25")
			var fired []string
			for _, f := range rep.Findings {
				fired = append(fired, f.Rule)
				if f.Rule != p.Rule {
					continue
				}
				require.NotNil(t, f.Predicted, "%s: no prediction", f.Rule)
				want := (measured(after)/measured(before) - 1) * 100
				got := f.Predicted.StepTimeChangePct
				t.Logf("%s: predicted %+.2f%%, measured %+.2f%% (%s)", p.Rule, got, want, f.Predicted.Basis)
				require.LessOrEqual(t, math.Abs(got-want), 0.25*math.Abs(want),
					"%s: predicted %+.2f%% is not within ±25%% of the measured %+.2f%%", p.Name, got, want)
				return
			}
			t.Fatalf("%s does not fire on %s (fired: %v)", p.Rule, p.Before.Name, fired)
		})
	}
}
