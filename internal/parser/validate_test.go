package parser

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

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

// A key within two bytes of parallel_group_info, or holding it with bytes
// written around it, is named as damaged.
func TestDamagedGroupInfoKeyNamed(t *testing.T) {
	for _, key := range []string{`parallel_groupnfo`, `.8c082[7,3-]Eparallel_group_info`, `Parallel_Group_Info`} {
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
