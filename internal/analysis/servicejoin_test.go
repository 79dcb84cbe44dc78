package analysis

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/npuprof/npuprof/internal/inputs/service"
	"github.com/npuprof/npuprof/internal/pipeline/gather"
	"github.com/npuprof/npuprof/internal/tracegen"
)

// A device capture (the A3 system's rank 0, ProfilerStep#N) and the
// service folder of the same run: each device step is matched to the
// execution batch that started with it, among the batches before and
// after the capture window, and the clocks' offset is found to the service
// profile's microsecond.
func TestServiceJoinsDeviceSteps(t *testing.T) {
	dir := t.TempDir()
	res, spans, steps := fieldCapture(t, dir)
	require.Len(t, res.Ranks, 1)
	require.Len(t, spans, 4)
	for _, offUs := range []int64{347, -611, 0} {
		sdir := filepath.Join(dir, "service", fmt.Sprint(offUs))
		truth, err := tracegen.GenerateServiceJoined(sdir, steps, offUs, 20, 15)
		require.NoError(t, err)
		sp, err := service.Read(sdir)
		require.NoError(t, err)
		require.Empty(t, sp.Issues)

		j := JoinService(spans, sp)
		require.NotNil(t, j)
		require.Equal(t, truth.Rows, j.Batch, "offset %d µs", offUs)
		require.Equal(t, len(spans), j.Matched)
		require.InDelta(t, float64(truth.OffsetNs), float64(j.Offset), 500, "offset %d µs: estimated %d ns", offUs, j.Offset)
		// the device steps of the batches that mix a prefill in, over the
		// decode-only ones'
		var mixedNs, decodeNs int64
		var mixed, decode int
		for i, s := range spans {
			if truth.Mixed[i] {
				mixedNs += s.End - s.Start
				mixed++
			} else {
				decodeNs += s.End - s.Start
				decode++
			}
		}
		require.Equal(t, [2]int{mixed, decode}, [2]int{j.Mixed, j.Decode})
		require.Equal(t, (float64(mixedNs)/float64(mixed))/(float64(decodeNs)/float64(decode)), j.MixedStepRatio)

		// the service pass joins the first rank with steps
		cr := RunClusterWith(res.Ranks, ClusterInputs{Service: sp})
		require.Empty(t, cr.Errors)
		sr := ServiceOf(cr)
		require.Equal(t, j, sr.Join)
		require.Equal(t, res.Ranks[0].Rank, sr.JoinRank)
	}
}

// fieldCapture analyzes the A3 system's rank 0 (tracegen), written to
// dir/capture, and returns the results, the rank's device steps and their
// bounds (what tracegen.GenerateServiceJoined takes).
func fieldCapture(t *testing.T, dir string) (*Result, []StepSpan, [][2]int64) {
	t.Helper()
	_, err := tracegen.GenerateRank(filepath.Join(dir, "capture"), tracegen.FieldReport2()[0], 0)
	require.NoError(t, err)
	p, err := gather.Models(context.Background(), filepath.Join(dir, "capture"), gather.Options{})
	require.NoError(t, err)
	res := strictAnalyze(t, p)
	spans := StepSpansOf(res.Ranks[0])
	var steps [][2]int64
	for _, s := range spans {
		steps = append(steps, [2]int64{s.Start, s.End})
	}
	return res, spans, steps
}
