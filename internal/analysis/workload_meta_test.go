package analysis

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/npuprof/npuprof/internal/parser/model"
	"github.com/npuprof/npuprof/internal/parser/summary"
	"github.com/npuprof/npuprof/internal/testutil"
)

// MindSpeed's profiler_metadata.json (the real file of the MindStudio
// Insight tests): its distributed_args and Megatron's group names say
// training; a vLLM worker's groups (tp, dp, ep, mc2) say nothing.
func TestWorkloadFromMindSpeedMetadata(t *testing.T) {
	dir := testutil.Sample(t, "Ascend-msinsight/server/src/test/test_data/metadata")
	f, err := os.Open(filepath.Join(dir, "profiler_metadata.json"))
	require.NoError(t, err)
	defer f.Close()
	md, err := summary.ReadProfilerMetadata(f, "profiler_metadata.json")
	require.NoError(t, err)
	r := &model.Rank{Env: md.Env, Groups: md.Groups, Metadata: md.Other}
	clues := metadataClues(r)
	require.Len(t, clues, 2)
	require.Equal(t, Clue{Kind: WorkloadTraining, What: "MindSpeed distributed_args in profiler_metadata.json", Example: "distributed_args", Count: 1}, clues[0])
	require.Equal(t, WorkloadTraining, clues[1].Kind)
	require.Equal(t, "Megatron group names in parallel_group_info", clues[1].What)
	require.Equal(t, "dp_cp", clues[1].Example)
	require.GreaterOrEqual(t, clues[1].Count, 3) // dp_cp, mp, mp_exp, ...

	vllm := &model.Rank{Groups: []model.Group{{Name: "tp"}, {Name: "dp"}, {Name: "ep"}, {Name: "mc2"}, {Name: "world"}}}
	require.Empty(t, metadataClues(vllm))
}
