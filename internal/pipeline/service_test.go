package pipeline

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/npuprof/npuprof/internal/analysis"
	"github.com/npuprof/npuprof/internal/errkind"
	"github.com/npuprof/npuprof/internal/tracegen"
)

// A service folder alone is a run of no ranks whose cluster passes read
// it: every service metric is the generator's truth.
func TestAnalyzeServiceAlone(t *testing.T) {
	dir := t.TempDir()
	truth, err := tracegen.GenerateService(dir, tracegen.ServiceScenarios()[1], tracegen.ServiceDatetime)
	require.NoError(t, err)
	res, err := Analyze(context.Background(), dir, Options{})
	require.NoError(t, err)
	require.Empty(t, res.Ranks)
	s := analysis.ServiceOf(res.Cluster)
	require.NotNil(t, s)
	require.Equal(t, dir, s.Profile.Source)
	for name, want := range truth.Metrics {
		require.Equal(t, want, res.Cluster.Metrics[name], name)
	}
	require.Nil(t, s.Join)
}

// A service folder beside a rank folder is found and joined to the rank's
// device steps; --service names one elsewhere, and one that holds no
// service profile is a usage error.
func TestAnalyzeServiceBesideRanks(t *testing.T) {
	dir := t.TempDir()
	_, err := tracegen.GenerateRank(filepath.Join(dir, "rank0_ascend_pt"), tracegen.FieldReport2()[0], 0)
	require.NoError(t, err)
	res, err := Analyze(context.Background(), dir, Options{})
	require.NoError(t, err)
	require.Len(t, res.Ranks, 1)
	require.Nil(t, analysis.ServiceOf(res.Cluster), "no service folder: no service result")
	var steps [][2]int64
	for _, s := range analysis.StepSpansOf(res.Ranks[0]) {
		steps = append(steps, [2]int64{s.Start, s.End})
	}
	require.NotEmpty(t, steps)

	svc := filepath.Join(dir, "service")
	truth, err := tracegen.GenerateServiceJoined(svc, steps, 250, 5, 5)
	require.NoError(t, err)
	for _, opts := range []Options{{}, {Service: svc}} {
		res, err = Analyze(context.Background(), dir, opts)
		require.NoError(t, err)
		require.Len(t, res.Ranks, 1)
		s := analysis.ServiceOf(res.Cluster)
		require.NotNil(t, s)
		require.Equal(t, svc, s.Profile.Source)
		require.NotNil(t, s.Join)
		require.Equal(t, truth.Rows, s.Join.Batch)
		require.InDelta(t, float64(truth.OffsetNs), float64(s.Join.Offset), 500)
	}

	_, err = Analyze(context.Background(), dir, Options{Service: t.TempDir()})
	require.Error(t, err)
	require.True(t, errkind.Is(err, errkind.Usage), "%v", err)
	require.Contains(t, err.Error(), "--service")
}
