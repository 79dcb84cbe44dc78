package model_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/npuprof/npuprof/internal/parser/model"
	"github.com/npuprof/npuprof/internal/parser/summary"
	"github.com/npuprof/npuprof/internal/testutil"
)

// The world size of a real Megatron capture's profiler_metadata.json (TP2
// PP2 DP2): its default group lists 8 ranks, as distributed_args'
// world_size says; a stated size above both wins, with its source.
func TestWorldOfARealCapture(t *testing.T) {
	p := filepath.Join(testutil.SamplesDir(t), "Ascend-msinsight/server/src/test/test_data/metadata/profiler_metadata.json")
	f, err := os.Open(p)
	require.NoError(t, err)
	defer f.Close()
	md, err := summary.ReadProfilerMetadata(f, p)
	require.NoError(t, err)
	r := model.NewRank("x")
	r.Groups, r.Metadata = md.Groups, md.Other
	n, from := r.World()
	require.Equal(t, 8, n)
	require.Equal(t, "parallel_group_info (group default_group)", from)

	r.Groups = nil
	n, from = r.World()
	require.Equal(t, 8, n)
	require.Equal(t, "profiler_metadata.json distributed_args.world_size", from)

	r.WorldSize, r.WorldSizeFrom = 16, "t.json distributedInfo.world_size"
	n, from = r.World()
	require.Equal(t, 16, n)
	require.Equal(t, "t.json distributedInfo.world_size", from)

	n, from = model.NewRank("y").World()
	require.Zero(t, n)
	require.Empty(t, from)
}
