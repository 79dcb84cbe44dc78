package parser

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/npuprof/npuprof/internal/parser/model"
	"github.com/stretchr/testify/require"
)

// A profiler_metadata.json whose groups no longer match the collectives
// (a communicator's hash damaged, or the file of another run) says so:
// the group metrics are not dropped without a reason (issue 31).
func TestGroupsThatMatchNoCollectiveAreNamed(t *testing.T) {
	root, _ := tinyRank(t)
	whole := loadOne(t, root)
	require.NotContains(t, warningsText(whole), "parallel_group_info does not list")
	p := filepath.Join(root, "profiler_metadata.json")
	data, err := os.ReadFile(p)
	require.NoError(t, err)
	// every communicator key gets another hash: "..._1736410544431632" -> "..._9"
	s := regexp.MustCompile(`(_[0-9]+)": \{`).ReplaceAllString(string(data), `${1}9": {`)
	require.NotEqual(t, string(data), s)
	require.NoError(t, os.WriteFile(p, []byte(s), 0o644))
	r := loadOne(t, root)
	require.Contains(t, warningsText(r), "that parallel_group_info does not list (")
	require.Contains(t, warningsText(r), "they are left out of the hccl.group.* metrics")
}

// A key within two bytes of parallel_group_info, holding it with bytes
// written around it, or holding what it holds, is named as damaged.
func TestDamagedGroupInfoKeyNamed(t *testing.T) {
	for _, key := range []string{`parallel_groupnfo`, `.8c082[7,3-]Eparallel_group_info`, `Parallel_Group_Info`, `parallinfo`} {
		root, _ := tinyRank(t)
		p := filepath.Join(root, "profiler_metadata.json")
		data, err := os.ReadFile(p)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(p, []byte(strings.Replace(string(data), `"parallel_group_info"`, `"`+key+`"`, 1)), 0o644))
		r := loadOne(t, root)
		require.Contains(t, warningsText(r), `key "`+key+`" looks like a damaged parallel_group_info`)
	}
	require.False(t, nearGroupInfo("distributed_args"))
	require.False(t, nearGroupInfo("vllm_ascend_version"))
}

// A device task a day or more from the rest of its timeline (a damaged ts
// that still parses) is named and makes the rank partial, at either end;
// a timeline with no such gap is left alone.
func TestFarTasksNamed(t *testing.T) {
	const day = int64(24 * 3600 * 1_000_000_000)
	base := int64(1736410582432515632)
	mk := func(starts ...int64) *model.Rank {
		r := model.NewRank("/p")
		for _, s := range starts {
			r.Tasks = append(r.Tasks, r.NewTask(s, 1000, model.TaskExtra{Name: r.Intern(fmt.Sprintf("k%d", s))}))
		}
		return r
	}
	for name, c := range map[string]struct {
		starts []int64
		n      int
		first  int64
	}{
		"before": {[]int64{15632, base, base + 2000, base + 4000}, 1, 15632},
		"after":  {[]int64{base, base + 2000, base + 4000, base + 2*day}, 1, base + 2*day},
		"both":   {[]int64{1, 2, base, base + 2000, base + 3*day}, 3, 1},
		"none":   {[]int64{base, base + day - 1, base + day + 2000}, 0, 0},
		"one":    {[]int64{base}, 0, 0},
	} {
		r := mk(c.starts...)
		checkFarTasks(r)
		if c.n == 0 {
			require.Empty(t, r.Warnings, name)
			require.False(t, r.Partial, name)
			continue
		}
		require.Len(t, r.Warnings, 1, name)
		require.Equal(t, c.n, r.Warnings[0].Count, name)
		require.Contains(t, r.Warnings[0].Message, fmt.Sprintf("%d device task(s) lie more than a day", c.n), name)
		require.Contains(t, r.Warnings[0].Message, fmt.Sprintf("at ts %d ns", c.first), name)
		require.True(t, r.Partial, name)
	}
}
