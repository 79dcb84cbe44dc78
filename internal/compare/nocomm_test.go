package compare_test

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/npuprof/npuprof/internal/compare"
	"github.com/npuprof/npuprof/internal/pipeline"
	"github.com/npuprof/npuprof/internal/render"
	"github.com/npuprof/npuprof/internal/results"
	"github.com/npuprof/npuprof/internal/results/assemble"
	"github.com/npuprof/npuprof/internal/testutil"
)

// docOf analyzes path and returns its document after a JSON round trip.
func docOf(t *testing.T, path string) *results.Document {
	t.Helper()
	res, err := pipeline.Analyze(context.Background(), path, pipeline.Options{Workers: 2})
	require.NoError(t, err)
	var buf bytes.Buffer
	require.NoError(t, render.WriteJSON(&buf, assemble.Doc(res, nil)))
	doc, err := results.Read(&buf, path)
	require.NoError(t, err)
	return doc
}

// TestCompareStepsWithoutCollectives: before, 3 ranks of which rank 2 has
// no collective data; after, rank 2 alone. The step window and computing
// are compared; communication, not overlapped and free are means over
// the ranks that measured them before, and unavailable (with the reason)
// after: never compared with 0.
func TestCompareStepsWithoutCollectives(t *testing.T) {
	dir, truth, _ := testutil.NoCommCapture(t, 3)
	before := docOf(t, dir)
	after := docOf(t, filepath.Join(dir, truth.Ranks[2].Dir))
	why := after.Ranks[0].Unavailable["steps.communication_us"]
	require.Contains(t, why, "no collective data: ")

	r := compare.Compare(before, after, compare.Options{})
	var qs []string
	for _, s := range r.Steps {
		qs = append(qs, s.Quantity)
	}
	require.Equal(t, []string{"window", "computing"}, qs)
	require.Equal(t, "after: not measured on any rank (rank 2: "+why+")", r.Unavailable["steps.communication"])
	require.Equal(t, "after: not measured on any rank (rank 2: needs both compute kernels and collectives; "+why+")", r.Unavailable["steps.free"])
	require.Contains(t, r.Unavailable, "steps.communication_not_overlapped")

	// the before side's computing mean is over all 3 ranks' steps: 3, 3
	// and 2 (rank 2's last step is left out: its trace is cut before that
	// step's device work is known to be complete)
	var sum float64
	n := 0
	for _, rk := range before.Ranks {
		for _, s := range rk.Steps {
			sum += s.ComputingUs
			n++
		}
	}
	require.Equal(t, 8, n)
	c, ok := r.Step("computing")
	require.True(t, ok)
	require.InDelta(t, sum/float64(n), c.BeforeUs, 1e-9)

	var text bytes.Buffer
	require.NoError(t, render.WriteDiffText(&text, r))
	out := text.String()
	require.Contains(t, out, "  communication: unavailable: after: not measured on any rank (rank 2: no collective data: ")
	require.Contains(t, out, "  free: unavailable: after: not measured on any rank")
	_, steps, _ := strings.Cut(out, "Step time (mean per step over every rank's steps)\n")
	steps, _, _ = strings.Cut(steps, "\n\n")
	for _, l := range strings.Split(steps, "\n") {
		require.NotContains(t, l, " 0.0µs", l)
	}

	var page bytes.Buffer
	require.NoError(t, render.WriteDiffHTML(&page, r))
	require.Contains(t, page.String(), "after: not measured on any rank (rank 2: no collective data: ")

	// both sides with 3 ranks: the mean over the two that measured, and a note
	r = compare.Compare(before, before, compare.Options{})
	comm, ok := r.Step("communication")
	require.True(t, ok)
	var commSum float64
	for _, rk := range before.Ranks[:2] {
		for _, s := range rk.Steps {
			commSum += *s.CommunicationUs
		}
	}
	require.InDelta(t, commSum/6, comm.BeforeUs, 1e-9)
	require.Contains(t, r.Notes, "per-step communication, before side: mean over the ranks that measured it; not measured on rank(s) 2 ("+why+")")
}
