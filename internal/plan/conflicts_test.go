package plan

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/npuprof/npuprof/internal/fix"
	"github.com/npuprof/npuprof/internal/results"
	"github.com/npuprof/npuprof/internal/rules"
)

// Of two fixes that set one JSON key false and true, the one turning it off
// goes whatever it gains; other conflicts leave out the smaller gain.
func TestEditConflictTurningOffLoses(t *testing.T) {
	fired := func(rule string, pct float64, value string) rules.Fired {
		return rules.Fired{Finding: results.Finding{Rule: rule, Predicted: &results.Prediction{StepChange: results.StepChange{StepTimeChangePct: pct}}},
			Actions: []fix.Action{{Kind: fix.MergeJSON, Name: "--additional-config", Value: value, Rule: rule}}}
	}
	for _, c := range []struct {
		off, on  float64
		a, b     string
		loser    string
		contains string
	}{
		{-30, -2, `{"multistream_overlap_shared_expert":false}`, `{"multistream_overlap_shared_expert":true}`, "a", `turns --additional-config key "multistream_overlap_shared_expert" off, which b's fix needs on`},
		{-2, -30, `{"multistream_overlap_shared_expert":false}`, `{"multistream_overlap_shared_expert":true}`, "a", "which b's fix needs on"},
		{-30, -2, `{"x":1}`, `{"x":2}`, "b", "its edits conflict with a's"},
	} {
		rep := &rules.Report{Findings: []rules.Fired{fired("a", c.off, c.a), fired("b", c.on, c.b)}}
		left := map[string]string{}
		(&builder{rep: rep}).editConflicts(left)
		require.Len(t, left, 1)
		require.Contains(t, left[c.loser], c.contains)
	}
}
