package rulefmt

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestSuggest(t *testing.T) {
	ids := []string{"comm-ep-flashcomm", "env-hygiene", "event-wait-skew", "expert-imbalance", "graph-capture-sizes",
		"host-bound-free", "mm-cache", "moe-routing-cumsum", "parallel-strategy", "prefix-cache", "vllm-ascend-upgrade"}
	require.Equal(t, []string{"moe-routing-cumsum"}, Suggest("moe-routing-cumsm", ids, 3), "a typo")
	require.Equal(t, []string{"moe-routing-cumsum"}, Suggest("moe-routing", ids, 3), "a part of the id")
	require.Equal(t, []string{"mm-cache", "prefix-cache"}, Suggest("cache", ids, 3), "parts of several ids, closest first")
	require.Equal(t, []string{"env-hygiene"}, Suggest("env-hygeine", ids, 3))
	require.Empty(t, Suggest("nosuch", ids, 3), "nothing like it: no unrelated names")
}

// Every built-in rule has a summary: the SARIF description of a rule that
// did not fire.
func TestBuiltinSummaries(t *testing.T) {
	set, err := Load(&testBuiltin)
	require.NoError(t, err)
	for _, r := range set.Rules {
		require.NotEmpty(t, r.Summary, "built-in rule %s has no summary:", r.ID)
		require.NotContains(t, r.Summary, "{{", r.ID)
	}
}
