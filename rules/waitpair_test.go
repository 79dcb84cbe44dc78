package rules

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// event-wait-skew names what the compute stream waits for, from the wait
// pairing: on hot-rank, the tp all-reduces the ranks wait in for rank 5.
func TestEventWaitSkewNamesTheCollective(t *testing.T) {
	f := finding(evaluate(t, builtin(t), analyzed(t, "hot-rank"), nil), "event-wait-skew")
	require.NotNil(t, f)
	require.Regexp(t, `it waits for the all-reduce collectives of group tp \(stream \d+\), [0-9.]+% of its waits$`, f.Title)
	require.Contains(t, f.Fix, "What they wait for is communication: see comm-bound")
	require.NotContains(t, f.Fix, "Qwen3")
	require.Empty(t, f.Actions, "no shared-expert edit when a collective is waited for")
}
