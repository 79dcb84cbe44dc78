package render

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/npuprof/npuprof/internal/results"
)

// ledgerDoc is a ledger of eight causes over four steps, steps 1 and 3
// joined to batches that run a prefill when service is set.
func ledgerDoc(service bool) *results.Document {
	l := &results.LedgerDetail{Causes: []string{"compute.attention", "compute.moe_experts", "compute.routing", "compute.other",
		"collective", "peer_wait", "host_gap", "idle"}}
	for i := range 4 {
		us := []float64{400, 300, 100, 80, 60, 40, 15, 5}
		if i%2 == 1 {
			us[0] += 1000 // the prefill's attention
		}
		s := results.LedgerStepDetail{Step: i, Rank: 0, Us: us}
		for _, v := range us {
			s.TimeUs += v
		}
		if service {
			s.ServiceCause = "decode"
			if i%2 == 1 {
				s.ServiceCause = "prefill"
			}
			row := 2*i + 1
			s.ServiceBatchRow = &row
		}
		l.Steps = append(l.Steps, s)
	}
	return &results.Document{Cluster: &results.ClusterDoc{Detail: results.ClusterDetail{Ledger: l}}}
}

// The ledger section says which steps' batches ran a prefill and their
// time against the decode-only steps', within its line budget (10 lines
// with tables, 6 without).
func TestLedgerServiceCause(t *testing.T) {
	for _, tables := range []bool{false, true} {
		var with, without bytes.Buffer
		writeLedger(&errWriter{w: &with}, ledgerDoc(true), tables)
		writeLedger(&errWriter{w: &without}, ledgerDoc(false), tables)
		got := with.String()
		require.Contains(t, got, "  service: 2 of 4 steps batch a prefill (1, 3): 2.00ms vs 1.00ms decode-only\n")
		require.NotContains(t, without.String(), "service:")
		lines := strings.Count(strings.TrimPrefix(got, "\n"), "\n")
		require.Equal(t, strings.Count(strings.TrimPrefix(without.String(), "\n"), "\n"), lines, "the service line takes a cause's place")
		if tables {
			require.LessOrEqual(t, lines, 10)
		} else {
			require.LessOrEqual(t, lines, 6)
		}
		// the line comes after the causes
		require.True(t, strings.HasSuffix(got, "decode-only\n"), got)
	}
	c := ledgerChart(ledgerDoc(true))
	require.NotNil(t, c)
	b, err := json.Marshal(c.Option)
	require.NoError(t, err)
	require.Contains(t, string(b), "1 (rank 0, prefill batch)")
}
