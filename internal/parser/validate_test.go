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

// A collective a day or more before the first device task or after the
// last (or, without tasks, from the other collectives) is named and makes
// the rank partial; collectives within the tasks' span are left alone.
func TestFarCollectivesNamed(t *testing.T) {
	const day = int64(24 * 3600 * 1_000_000_000)
	base := int64(1736410582432515632)
	mk := func(tasks []int64, ops ...int64) *model.Rank {
		r := model.NewRank("/p")
		for _, s := range tasks {
			r.Tasks = append(r.Tasks, r.NewTask(s, 1000, model.TaskExtra{Name: r.Intern(fmt.Sprintf("k%d", s))}))
		}
		for _, s := range ops {
			r.HCCL = append(r.HCCL, model.HCCLOp{Start: s, Dur: 1000, Name: r.Intern(fmt.Sprintf("hcom_allReduce__%d_0_1", s))})
		}
		return r
	}
	tasks := []int64{base, base + 2000, base + 4000}
	for name, c := range map[string]struct {
		r     *model.Rank
		n     int
		first int64
	}{
		"before":         {mk(tasks, 17364000, base+1000, base+3000), 1, 17364000},
		"after":          {mk(tasks, base+1000, base+2*day), 1, base + 2*day},
		"within":         {mk(tasks, base-day+1, base+1000, base+4000+day-1), 0, 0},
		"no tasks":       {mk(nil, 17364000, base, base+1000, base+2000), 1, 17364000},
		"no tasks, none": {mk(nil, base, base+1000), 0, 0},
	} {
		checkFarHCCL(c.r)
		if c.n == 0 {
			require.Empty(t, c.r.Warnings, name)
			require.False(t, c.r.Partial, name)
			continue
		}
		require.Len(t, c.r.Warnings, 1, name)
		require.Contains(t, c.r.Warnings[0].Message, fmt.Sprintf("%d collective(s) lie more than a day", c.n), name)
		require.Contains(t, c.r.Warnings[0].Message, fmt.Sprintf("at ts %d ns", c.first), name)
		require.True(t, c.r.Partial, name)
	}
}

// A kernel_details.csv row of a collective whose start lost its digits
// and tab ("1736410582433919.785\t" -> "17364", a number still) is named
// when kernel_details.csv is the timeline.
func TestFarCollectiveRowNamed(t *testing.T) {
	root, out := tinyRank(t)
	require.NoError(t, os.Remove(filepath.Join(out, "trace_view.json")))
	whole := loadOne(t, root)
	require.False(t, whole.Partial)
	p := filepath.Join(out, "kernel_details.csv")
	data, err := os.ReadFile(p)
	require.NoError(t, err)
	re := regexp.MustCompile(`(,hcom_[A-Za-z]+_,N/A,HCCL,)([0-9]{5})[0-9]+\.[0-9]+\t`)
	loc := re.FindSubmatchIndex(data)
	require.NotNil(t, loc, "a collective row")
	damaged := string(data[:loc[3]]) + string(data[loc[4]:loc[5]]) + string(data[loc[1]:])
	require.NoError(t, os.WriteFile(p, []byte(damaged), 0o644))
	r := loadOne(t, root)
	require.Contains(t, warningsText(r), "1 collective(s) lie more than a day before or after the rest of the timeline")
	require.Contains(t, warningsText(r), "at ts 17364000 ns")
	require.True(t, r.Partial)
}

// A group_name with a byte that is not UTF-8 (a flipped bit: "ep" ->
// "e\xf0") would be a group of its own under U+FFFD: the groups are
// refused with the reason, as for a communicator without its name.
func TestGroupInfoNotUTF8Named(t *testing.T) {
	root, _ := tinyRank(t)
	p := filepath.Join(root, "profiler_metadata.json")
	data, err := os.ReadFile(p)
	require.NoError(t, err)
	require.Contains(t, string(data), `"group_name": "ep"`)
	require.NoError(t, os.WriteFile(p, []byte(strings.Replace(string(data), `"group_name": "ep"`, "\"group_name\": \"e\xf0\"", 1)), 0o644))
	r := loadOne(t, root)
	require.Contains(t, warningsText(r), "parallel_group_info: holds bytes that are not UTF-8, as JSON text is (damaged bytes?)")
	require.Empty(t, r.Groups)
	require.Contains(t, r.Have.GroupsNote, "not UTF-8")
}
