package rules

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/npuprof/npuprof/internal/analysis"
)

// A saving of claimed() on a capture without a step-time ledger (a rank
// with summaries only) says why it is not estimated: the claims resolved
// before the saving ran must not leave the reason empty.
func TestClaimedSavingSaysWhyWithoutLedger(t *testing.T) {
	res := analyzed(t, "clean")
	noLedger := *res
	c := &analysis.ClusterResult{Ranks: res.Cluster.Ranks, Metrics: map[string]float64{}, Unavailable: map[string]string{}}
	for k, v := range res.Cluster.Metrics {
		if !strings.HasPrefix(k, "ledger.") {
			c.Metrics[k] = v
		}
	}
	noLedger.Cluster = c
	set, err := Parse("team.yaml", []byte(`rules:
  - id: claims-collective
    title: collectives
    when: "true"
    claims:
      - cause: collective
    saving: claimed()
    fix: none
`))
	require.NoError(t, err)
	f := finding(evaluate(t, set, &noLedger, nil), "claims-collective")
	require.NotNil(t, f)
	require.Nil(t, f.SavingUs)
	var note string
	for _, e := range f.Evidence {
		if e.Metric == "saving_us" {
			note = e.Note
		}
	}
	require.Equal(t, "saving not estimated: ledger.steps.count was not measured (the step-time ledger)", note)
}
