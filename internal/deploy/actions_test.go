package deploy

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/npuprof/npuprof/internal/fix"
)

// Script actions diff like the same edits; code changes are not edits.
func TestDiffActions(t *testing.T) {
	s, err := Parse("serve.sh", "export HCCL_BUFFSIZE=200\nvllm serve m \\\n  --enforce-eager\n")
	require.NoError(t, err)
	actions := []fix.Action{
		{Kind: fix.SetEnv, Name: "HCCL_BUFFSIZE", Value: "512", Rule: "env-hygiene"},
		{Kind: fix.CodeChange, Name: "Cumsum", Value: "fuse it"},
		{Kind: fix.RemoveFlag, Name: "--enforce-eager"},
	}
	require.Equal(t, []Edit{{Op: OpSetEnv, Name: "HCCL_BUFFSIZE", Value: "512"}, {Op: OpRemoveFlag, Name: "--enforce-eager"}}, EditsOf(actions))
	got, err := s.DiffActions(actions)
	require.NoError(t, err)
	want, err := s.Diff(EditsOf(actions))
	require.NoError(t, err)
	require.Equal(t, want, got)
	require.Contains(t, got, "+export HCCL_BUFFSIZE=512\n")
	d, err := s.DiffActions(actions[1:2])
	require.NoError(t, err)
	require.Empty(t, d)
}
