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
// measured on the after capture. On "eplb" the hot experts sit on another
// EP rank in each layer: no rank is hot over the capture, and
// expert-imbalance fires on the skew per layer. EPLB's replay retimes each
// rank's GroupedMatmul by its token load under the placement the planner
// makes from the expert-load dumps beside the capture.
func TestFixPairsPredicted(t *testing.T) {
	for _, p := range tracegen.FixPairs() {
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
				if p.Rule == "comm-ep-flashcomm" {
					// the all-reduce's cost from the profile's own tp
					// collectives, and the basis says so
					require.Contains(t, f.Predicted.Basis, "the profile's own")
					require.Contains(t, f.Predicted.Basis, "records no collective sizes")
				}
				if p.Rule == "expert-imbalance" {
					// the dumps beside the capture give the planned
					// placement: a prediction, not the ideal's bound
					require.False(t, f.Predicted.UpperBound)
					require.Contains(t, f.Predicted.Basis, "token load under the placement npuprof eplb plan writes")
				}
				require.LessOrEqual(t, math.Abs(got-want), 0.25*math.Abs(want),
					"%s: predicted %+.2f%% is not within ±25%% of the measured %+.2f%%", p.Name, got, want)
				return
			}
			t.Fatalf("%s does not fire on %s (fired: %v)", p.Rule, p.Before.Name, fired)
		})
	}
}
