package tracegen

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The MindIE dump holds, per rank, a stale dump followed by the full one;
// the full one's lines are the truth's per-expert loads, every layer's
// counts add up to the routed pairs of every step, and the hot experts are
// the most loaded ones.
func TestExpertDumpMatchesTruth(t *testing.T) {
	s := small(mustLookup(t, "hot-experts"))
	dir := t.TempDir()
	tr, err := Generate(dir, s)
	require.NoError(t, err)
	et := tr.Experts
	require.NotNil(t, et)
	require.Equal(t, ExpertDumpDir, et.Dump)
	require.Len(t, et.Tokens, s.Layers)
	per := s.localExperts()
	got := make([][]int64, s.Layers)
	for r := 0; r < s.Ranks; r++ {
		data, err := os.ReadFile(filepath.Join(dir, et.Dump, "decode_"+strconv.Itoa(r)+".csv"))
		require.NoError(t, err)
		lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
		require.Len(t, lines, 2*s.Layers, "stale dump + full dump")
		for l, line := range lines[s.Layers:] {
			cells := strings.Split(line, ",")
			require.Len(t, cells, per)
			for _, c := range cells {
				v, err := strconv.ParseInt(c, 10, 64)
				require.NoError(t, err)
				got[l] = append(got[l], v)
			}
		}
	}
	require.Equal(t, et.Tokens, got)
	for l, tok := range et.Tokens {
		var sum int64
		for _, v := range tok {
			sum += v
		}
		assert.Equal(t, int64(s.Steps*s.routedTokens()), sum, "layer %d", l)
		// each hot expert outweighs every other expert of its layer
		hot := map[int]bool{}
		minHot := int64(1 << 62)
		for _, e := range et.HotExperts[l] {
			hot[e] = true
			minHot = min(minHot, tok[e])
		}
		for e, v := range tok {
			if !hot[e] {
				assert.Less(t, v, minHot, "layer %d expert %d", l, e)
			}
		}
	}
	for _, f := range []string{"model_gen_config.json", "decode_global_deployment.json"} {
		_, err := os.Stat(filepath.Join(dir, et.Dump, f))
		require.NoError(t, err)
	}
	assert.Equal(t, float64(s.HotRank), et.Metrics[MetricSkewGMMMaxRank])
	assert.Greater(t, et.Metrics[MetricSkewGMMMaxOverMean], 1.5)
	assert.Greater(t, et.Metrics[MetricExpertsImbalanceMax], 5.0)

	// Scenarios without hot experts write no dump and keep their routing.
	plain := small(mustLookup(t, "hot-rank"))
	tr, err = Generate(t.TempDir(), plain)
	require.NoError(t, err)
	assert.Empty(t, tr.Experts.Dump)
	_, ok := tr.Experts.Metrics[MetricExpertsImbalanceMax]
	assert.False(t, ok)
	assert.Equal(t, float64(plain.HotRank), tr.Experts.Metrics[MetricSkewGMMMaxRank])

	bad := s
	bad.ExpertParallel = false
	assert.ErrorContains(t, bad.Validate(), "HotExperts needs ExpertParallel")
	bad = s
	bad.HotExpertFactor = 0.5
	assert.ErrorContains(t, bad.Validate(), "HotExpertFactor")
}
