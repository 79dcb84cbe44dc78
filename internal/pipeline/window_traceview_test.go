package pipeline_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/npuprof/npuprof/internal/analysis"
	"github.com/npuprof/npuprof/internal/testutil"
	"github.com/npuprof/npuprof/internal/tracegen"
)

// currentWriterTrace writes a one-rank tracegen torch_npu text capture of
// the CANN 8.5 writer (head and tail idle in its Overlap Analysis) and
// returns its folder, its trace_view.json and the generator's truth.
func currentWriterTrace(t *testing.T) (dir, trace string, truth *tracegen.Truth) {
	t.Helper()
	sc := testutil.Scenario(t, "clean")
	sc.Ranks, sc.Layers, sc.Steps = 1, 2, 2
	sc.CANNVersion = "8.5.0"
	dir, truth = testutil.GenerateLayout(t, sc, tracegen.LayoutTorchNPUText)
	trace = filepath.Join(dir, truth.Ranks[0].Dir, "ASCEND_PROFILER_OUTPUT", "trace_view.json")
	require.FileExists(t, trace)
	want := truth.Ranks[0].Metrics
	require.Positive(t, want[tracegen.MetricHeadIdleUs]+want[tracegen.MetricTailIdleUs], "the writer's window reaches past the kernels")
	return dir, trace, truth
}

// addTailFree appends to a trace's Overlap Analysis one Free slice of
// extra µs (a whole number) from the end of its span: the capture's own
// window grows by extra, npuprof's recomputation does not.
func addTailFree(t *testing.T, trace string, extra int64) {
	t.Helper()
	_, span, _ := msprofOverlap(t, trace)
	require.Positive(t, span)
	f, err := os.Open(trace)
	require.NoError(t, err)
	dec := json.NewDecoder(bufio.NewReader(f))
	dec.UseNumber()
	var evs []map[string]any
	require.NoError(t, dec.Decode(&evs))
	require.NoError(t, f.Close())
	overlapPid := ""
	for _, e := range evs {
		if e["ph"] == "M" && e["name"] == "process_name" {
			if a, _ := e["args"].(map[string]any); a != nil && a["name"] == "Overlap Analysis" {
				overlapPid = fmt.Sprint(e["pid"])
			}
		}
	}
	require.NotEmpty(t, overlapPid)
	var last map[string]any
	end := int64(-1)
	for _, e := range evs {
		if e["ph"] != "X" || fmt.Sprint(e["pid"]) != overlapPid {
			continue
		}
		s, d := usNs(t, fmt.Sprint(e["ts"])), usNs(t, fmt.Sprint(e["dur"]))
		if s+d > end {
			end, last = s+d, e
		}
	}
	require.NotNil(t, last)
	add := map[string]any{}
	for k, v := range last {
		add[k] = v
	}
	add["name"] = "Free"
	add["ts"] = fmt.Sprintf("%d.%03d", end/1000, end%1000)
	add["dur"] = json.Number(fmt.Sprint(extra))
	evs = append(evs, add)
	b, err := json.Marshal(evs)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(trace, b, 0o644))
}

var reUs = regexp.MustCompile(`^(\d+)(?:\.(\d{1,3}))?\d*$`)

// usNs reads a decimal µs text as ns.
func usNs(t *testing.T, us string) int64 {
	t.Helper()
	m := reUs.FindStringSubmatch(us)
	require.NotNil(t, m, us)
	var a, b int64
	_, err := fmt.Sscan(m[1], &a)
	require.NoError(t, err)
	if m[2] != "" {
		_, err = fmt.Sscan((m[2] + "00")[:3], &b)
		require.NoError(t, err)
	}
	return a*1000 + b
}

// A trace_view.json of CANN 8.5 whose own Overlap Analysis was edited to
// reach 1% past npuprof's recomputation: the trace's own window and free
// time are taken to the ns, and a warning gives the difference.
func TestWindowOfAnEditedCurrentWriterTrace(t *testing.T) {
	dir, trace, _ := currentWriterTrace(t)
	_, span, _ := msprofOverlap(t, trace)
	addTailFree(t, trace, span/100/1000)
	sums, span2, _ := msprofOverlap(t, trace)
	require.Greater(t, span2, span+span/1000)
	rr := oneRank(t, dir)
	require.Equal(t, float64(span2)/1000, rr.Metrics[analysis.MetricDeviceWindowUs])
	require.Equal(t, float64(sums["Free"])/1000, rr.Metrics[analysis.MetricFreeUs])
	ws := warningsWith(rr, ownOverlapWarning)
	require.Len(t, ws, 1)
	require.Contains(t, ws[0], "CANN 8.5 and later")
}

// A trace_view.json that names no CANN version (profiler_info without
// cann_version) whose own Overlap Analysis is the current writer's:
// npuprof's recomputation by the older rule (the kernel span) differs by
// more than 0.1%, so the trace's own window and free time stand, to the
// ns, and a warning says so.
func TestWindowOfATraceOfNoVersion(t *testing.T) {
	dir, trace, truth := currentWriterTrace(t)
	infos, err := filepath.Glob(filepath.Join(dir, truth.Ranks[0].Dir, "profiler_info*.json"))
	require.NoError(t, err)
	require.Len(t, infos, 1)
	b, err := os.ReadFile(infos[0])
	require.NoError(t, err)
	re := regexp.MustCompile(`"cann_version":\s*"8\.5\.0",?`)
	require.True(t, re.Match(b))
	require.NoError(t, os.WriteFile(infos[0], re.ReplaceAll(b, nil), 0o644))
	sums, span, _ := msprofOverlap(t, trace)
	rr := oneRank(t, dir)
	want := truth.Ranks[0].Metrics
	require.Equal(t, float64(span)/1000, rr.Metrics[analysis.MetricDeviceWindowUs])
	require.Equal(t, float64(sums["Free"])/1000, rr.Metrics[analysis.MetricFreeUs])
	within(t, want[tracegen.MetricHeadIdleUs], rr.Metrics[analysis.MetricHeadIdleUs], 1e-12, "head")
	ws := warningsWith(rr, ownOverlapWarning)
	require.Len(t, ws, 1)
	require.Contains(t, ws[0], "before CANN 8.5")
}
