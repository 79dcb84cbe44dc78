package driver

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/npuprof/npuprof/internal/analysis"
	"github.com/npuprof/npuprof/internal/pipeline"
	"github.com/npuprof/npuprof/internal/render"
	"github.com/npuprof/npuprof/internal/results"
	"github.com/npuprof/npuprof/internal/tracegen"
)

// serviceRun generates the named serving run's service folder and runs
// req on it alone.
func serviceRun(t *testing.T, name string, req Request) (*Result, *tracegen.ServiceTruth) {
	t.Helper()
	dir := t.TempDir()
	var sc tracegen.ServiceScenario
	for _, s := range tracegen.ServiceScenarios() {
		if s.Name == name {
			sc = s
		}
	}
	require.Equal(t, name, sc.Name)
	truth, err := tracegen.GenerateService(dir, sc, tracegen.ServiceDatetime)
	require.NoError(t, err)
	req.Path = dir
	run, err := Run(context.Background(), &req)
	require.NoError(t, err)
	return run, truth
}

// A service folder alone: the document's service section holds every
// service metric (the generator's truth), the files read and their
// spellings; cluster.metrics none of them.
func TestRunServiceSection(t *testing.T) {
	run, truth := serviceRun(t, "a3-1", Request{Detail: true})
	doc := run.Doc
	require.Empty(t, doc.Ranks)
	require.NotNil(t, doc.Service)
	require.Equal(t, truth.Metrics, doc.Service.Metrics)
	require.Equal(t, []string{"request.csv", "batch.csv", "kvcache.csv", "forward.csv"}, doc.Service.Files)
	require.Equal(t, "datetime", doc.Service.Spellings["batch.csv"])
	require.False(t, doc.Service.Partial)
	for k := range doc.Cluster.Metrics {
		require.False(t, strings.HasPrefix(k, "service."), k)
	}
	for k := range doc.Cluster.Unavailable {
		require.False(t, strings.HasPrefix(k, "service."), k)
	}
	require.Len(t, doc.Service.DP, 4)
	require.True(t, doc.Service.DP[0].Busy)
	require.False(t, doc.Service.DP[1].Busy)
	require.Nil(t, doc.Service.Join)
	// the detail: every latency distribution counts its requests
	require.NotEmpty(t, doc.Service.Detail.Latency)
	for _, l := range doc.Service.Detail.Latency {
		n := 0
		for _, c := range l.Counts {
			n += c
		}
		require.Equal(t, l.Count, n, l.Name)
	}
	require.NotEmpty(t, doc.Service.Detail.Batches)
	require.NotEmpty(t, doc.Service.Detail.KV)
}

// check --budget 'service.ttft.p99_ms <= 500' needs no baseline: it fires
// on the 90-request run (TTFT p99 about 3 s) and is clear under a looser
// bound.
func TestCheckServiceBudget(t *testing.T) {
	gate := &results.Gate{FailOn: results.SeverityHigh}
	run, truth := serviceRun(t, "a3-90", Request{Budgets: []string{"service.ttft.p99_ms <= 500"}, Gate: gate})
	p99 := truth.Metrics[analysis.MetricServiceTTFTP99Ms]
	require.Greater(t, p99, 500.0)
	var got *results.Finding
	for i := range run.Doc.Findings {
		if run.Doc.Findings[i].Rule == "budget/service.ttft.p99_ms" {
			got = &run.Doc.Findings[i]
		}
	}
	require.NotNil(t, got, "the budget fires")
	require.Equal(t, p99, got.Evidence[0].Value)
	require.NotNil(t, run.Verdict)
	require.NotEmpty(t, run.Verdict.Failing)

	run, _ = serviceRun(t, "a3-90", Request{Budgets: []string{"service.ttft.p99_ms <= 5000"}, Gate: gate})
	for _, o := range run.Doc.Rules {
		if o.Rule == "budget/service.ttft.p99_ms" {
			require.Equal(t, results.StatusClear, o.Status, o.Reason)
		}
	}
}

// A device capture with the service folder of the same run beside it: the
// document's join names the rank, the clock offset and each matched
// step's batch.
func TestRunServiceJoin(t *testing.T) {
	dir, spans, steps := joinCapture(t)
	truth, err := tracegen.GenerateServiceJoined(filepath.Join(dir, "service"), steps, -420, 6, 4)
	require.NoError(t, err)
	run, err := Run(context.Background(), &Request{Path: dir, Detail: true})
	require.NoError(t, err)
	j := run.Doc.Service.Join
	require.NotNil(t, j)
	require.Equal(t, 0, j.Rank)
	require.Equal(t, "execution", j.Batches)
	require.Equal(t, len(spans), j.Steps)
	require.Equal(t, len(spans), j.Matched)
	require.InDelta(t, float64(truth.OffsetNs)/1000, j.ClockOffsetUs, 0.5)
	require.Len(t, j.StepBatches, len(spans))
	mixed := 0
	for i, sb := range j.StepBatches {
		require.Equal(t, int(truth.Rows[i]), sb.Row)
		require.Equal(t, spans[i].Step, sb.Step)
		want := "decode"
		if truth.Mixed[i] {
			want = "prefill"
			mixed++
		}
		require.Equal(t, want, sb.Cause, "step %d", sb.Step)
	}
	require.Equal(t, mixed, j.MixedSteps)
	require.Equal(t, float64(mixed)/float64(len(spans)), run.Doc.Service.Metrics[analysis.MetricServiceJoinMixedShare])
	require.Equal(t, *j.MixedStepRatio, run.Doc.Service.Metrics[analysis.MetricServiceJoinMixedStepRatio])

	// the ledger's per-step entry carries its batch's cause, an
	// annotation: the causes still sum to the step
	l := run.Doc.Cluster.Detail.Ledger
	require.NotNil(t, l)
	require.Len(t, l.Steps, len(j.StepBatches))
	for i, s := range l.Steps {
		require.Equal(t, j.StepBatches[i].Cause, s.ServiceCause, "ledger step %d", s.Step)
		require.NotNil(t, s.ServiceBatchRow)
		require.Equal(t, j.StepBatches[i].Row, *s.ServiceBatchRow)
		sum := 0.0
		for _, v := range s.Us {
			sum += v
		}
		require.InDelta(t, s.TimeUs, sum, 1e-6)
	}
	var text strings.Builder
	require.NoError(t, render.WriteText(&text, run.Doc))
	require.Contains(t, text.String(), fmt.Sprintf("  service: %d of %d steps batch a prefill (", mixed, len(spans)))
}

// diff of two service captures: the service.* metrics compared, each
// side's from its own folder (found, or given with --service-after).
func TestDiffServiceCaptures(t *testing.T) {
	gen := func(name string) string {
		dir := t.TempDir()
		for _, sc := range tracegen.ServiceScenarios() {
			if sc.Name == name {
				_, err := tracegen.GenerateService(dir, sc, tracegen.ServiceMillis)
				require.NoError(t, err)
			}
		}
		return dir
	}
	before, after := gen("a3-90"), gen("a3-90-cache")
	// a device capture without a service folder of its own, the service
	// profile given apart
	capture := filepath.Join(t.TempDir(), "rank0_ascend_pt")
	_, err := tracegen.GenerateRank(capture, tracegen.FieldReport2()[0], 0)
	require.NoError(t, err)
	for _, side := range []DiffSide{{Path: after}, {Path: capture, Service: after}} {
		r, failed, err := Diff(context.Background(), &DiffRequest{Before: DiffSide{Path: before}, After: side})
		require.NoError(t, err)
		require.NoError(t, failed)
		var hit *float64
		var hitBefore *float64
		for _, d := range r.Service {
			if d.Metric == analysis.MetricServiceCacheHitMean {
				hit, hitBefore = d.After, d.Before
			}
		}
		require.NotNil(t, hit, "service.cache_hit.mean compared")
		require.NotNil(t, hitBefore)
		require.Less(t, *hitBefore, 0.1)
		require.Greater(t, *hit, 0.8)
	}
}

// `npuprof analyze OUTDIR` on the export of a capture with its service
// folder reads the service tables back: the document's service section
// (metrics, files, spellings, what was not read, the join, the per-DP
// forwards and the detail the terminal and HTML show) equals the one of
// analyzing the capture, in every spelling, with a cut file, and joined to
// the device steps.
func TestExportServiceRoundTrip(t *testing.T) {
	var a390 tracegen.ServiceScenario
	for _, s := range tracegen.ServiceScenarios() {
		if s.Name == "a3-90" {
			a390 = s
		}
	}
	type input struct {
		name string
		make func(t *testing.T) string
	}
	var ins []input
	for _, sp := range tracegen.ServiceSpellings {
		ins = append(ins, input{"a3-90/" + sp, func(t *testing.T) string {
			dir, _, _ := joinCapture(t)
			svc := filepath.Join(dir, "service")
			_, err := tracegen.GenerateService(svc, a390, sp)
			require.NoError(t, err)
			if sp == tracegen.ServiceDB {
				// profiler.db alone is found beside chrome_tracing.json only
				require.NoError(t, os.WriteFile(filepath.Join(svc, "chrome_tracing.json"), []byte("[]"), 0o644))
			}
			return dir
		}})
	}
	ins = append(ins, input{"joined", func(t *testing.T) string {
		dir, _, steps := joinCapture(t)
		_, err := tracegen.GenerateServiceJoined(filepath.Join(dir, "service"), steps, 333, 6, 4)
		require.NoError(t, err)
		return dir
	}}, input{"cut", func(t *testing.T) string {
		dir, _, _ := joinCapture(t)
		svc := filepath.Join(dir, "service")
		_, err := tracegen.GenerateService(svc, a390, tracegen.ServiceDatetime)
		require.NoError(t, err)
		cutFile(t, filepath.Join(svc, "request.csv"))
		return dir
	}})
	for _, in := range ins {
		t.Run(in.name, func(t *testing.T) {
			dir := in.make(t)
			a, err := Run(context.Background(), &Request{Path: dir, Detail: true})
			require.NoError(t, err)
			require.NotNil(t, a.Doc.Service)
			out := filepath.Join(t.TempDir(), "out")
			_, err = pipeline.Export(context.Background(), dir, out, pipeline.ExportOptions{})
			require.NoError(t, err)
			b, err := Run(context.Background(), &Request{Path: out, Detail: true})
			require.NoError(t, err)
			require.NotEmpty(t, a.Doc.Service.Detail.Latency)
			require.Equal(t, a.Doc.Service, b.Doc.Service)
			require.Equal(t, a.Doc.Cluster.Detail.Ledger, b.Doc.Cluster.Detail.Ledger)
			if in.name == "cut" {
				require.True(t, b.Doc.Service.Partial)
			}
			if in.name == "joined" {
				require.NotNil(t, b.Doc.Service.Join)
				require.Equal(t, len(b.Doc.Service.Join.StepBatches), b.Doc.Service.Join.Matched)
			}
		})
	}
}

// joinCapture writes a device capture (the A3 system's rank 0) in a new
// folder and returns the folder, the rank's device steps and their bounds
// (what tracegen.GenerateServiceJoined takes).
func joinCapture(t *testing.T) (string, []analysis.StepSpan, [][2]int64) {
	t.Helper()
	dir := t.TempDir()
	_, err := tracegen.GenerateRank(filepath.Join(dir, "rank0_ascend_pt"), tracegen.FieldReport2()[0], 0)
	require.NoError(t, err)
	res, err := pipeline.Analyze(context.Background(), dir, pipeline.Options{})
	require.NoError(t, err)
	spans := analysis.StepSpansOf(res.Ranks[0])
	var steps [][2]int64
	for _, s := range spans {
		steps = append(steps, [2]int64{s.Start, s.End})
	}
	return dir, spans, steps
}

// cutFile drops the end of a file in the middle of its last row.
func cutFile(t *testing.T, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, b[:len(b)-7], 0o644))
}
