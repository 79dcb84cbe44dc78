package rules

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/npuprof/npuprof/internal/errkind"
)

func TestAddBudgets(t *testing.T) {
	set := &Set{}
	require.NoError(t, AddBudgets(set, []string{"hccl.total.time_us <= baseline * 1.05"}))
	require.Len(t, set.Budgets, 1)
	require.Equal(t, "--budget 'hccl.total.time_us <= baseline * 1.05'", set.Budgets[0].File)
	require.Equal(t, 0, set.Budgets[0].Line)

	err := AddBudgets(set, []string{"hccl.totl.time_us <= baseline", "moe.cumsum.time_us <= baseline"})
	require.True(t, errkind.Is(err, errkind.Usage))
	problems := errkind.Problems(err)
	require.Len(t, problems, 1)
	require.Contains(t, problems[0], "--budget 'hccl.totl.time_us <= baseline': budget: unknown metric \"hccl.totl.time_us\"")
	require.Len(t, set.Budgets, 2, "the valid budget of the list is added")
}
