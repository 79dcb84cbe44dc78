package pipeline_test

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/npuprof/npuprof/internal/analysis"
	"github.com/npuprof/npuprof/internal/pipeline"
	"github.com/npuprof/npuprof/internal/testutil"
	"github.com/npuprof/npuprof/internal/tracegen"
)

// msprofOverlap sums msprof's own Overlap Analysis events of an
// msprof_*.json (ns, from the decimal text): per kind (Computing,
// Communication, Communication(Not Overlapped), Free) and their span. It
// also says whether a PROFILING_ENABLE placeholder lies outside that span.
func msprofOverlap(t *testing.T, path string) (sums map[string]int64, span int64, placeholderOutside bool) {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	dec := json.NewDecoder(bufio.NewReader(f))
	dec.UseNumber()
	_, err = dec.Token()
	require.NoError(t, err)
	type ev struct {
		Ph, Name string
		Pid      json.Number
		Ts       string
		Dur      json.Number
		Args     struct{ Name string }
	}
	var evs []ev
	overlapPid := ""
	for dec.More() {
		var e ev
		require.NoError(t, dec.Decode(&e))
		if e.Ph == "M" && e.Name == "process_name" && e.Args.Name == "Overlap Analysis" {
			overlapPid = e.Pid.String()
		}
		if e.Ph == "X" {
			evs = append(evs, e)
		}
	}
	require.NotEmpty(t, overlapPid, "%s has no Overlap Analysis process", path)
	ns := func(us string) int64 {
		w, fr, _ := strings.Cut(us, ".")
		a, err := strconv.ParseInt(w, 10, 64)
		require.NoError(t, err, us)
		b, err := strconv.ParseInt((fr + "000")[:3], 10, 64)
		require.NoError(t, err, us)
		return a*1000 + b
	}
	sums = map[string]int64{}
	first, last := int64(-1), int64(0)
	var places []int64
	for _, e := range evs {
		start := ns(e.Ts)
		if e.Name == "PROFILING_ENABLE" || e.Name == "PROFILING_DISABLE" {
			places = append(places, start)
		}
		if e.Pid.String() != overlapPid {
			continue
		}
		d := ns(e.Dur.String())
		sums[e.Name] += d
		if first < 0 || start < first {
			first = start
		}
		last = max(last, start+d)
	}
	for _, p := range places {
		placeholderOutside = placeholderOutside || p < first || p >= last
	}
	return sums, last - first, placeholderOutside
}

var reHashSuffix = regexp.MustCompile(`_[0-9a-f]{32}$`)

// npuprof's overlap and window over a tracegen msprof capture equal msprof's
// own Overlap Analysis events in msprof_*.json, exactly, though the
// timeline holds the profiler's PROFILING_ENABLE placeholder outside them;
// without msprof_*.json, task_time_*.csv (whose PROFILING_DISABLE lies
// 898 ms after the last kernel) and op_summary give the same, with the
// kernels under op_summary's names (no hash suffix). No real sample holds
// an msprof_*.json, so the events are the generator's (msprof's definition,
// docs/formats.md#overlap-analysis).
func TestMsprofOverlapEvents(t *testing.T) {
	sc := testutil.Scenario(t, "ep-fc1-cumsum")
	sc.Ranks, sc.Layers, sc.Steps = 2, 3, 2
	dir, truth := testutil.GenerateLayout(t, sc, tracegen.LayoutMsprofText)
	want := map[string]int64{}
	check := func(res *analysis.Result, label string) {
		for i, rr := range res.Ranks {
			p := filepath.Join(dir, truth.Ranks[i].Dir)
			for name, metric := range map[string]string{
				"Computing": "overlap.computing.time_us", "Communication": "overlap.communication.time_us",
				"Communication(Not Overlapped)": "overlap.communication_not_overlapped.time_us", "Free": "overlap.free.time_us",
				"window": "device.window.time_us",
			} {
				require.Contains(t, rr.Metrics, metric, "%s rank %d", label, i)
				within(t, float64(want[p+name])/1000, rr.Metrics[metric], 1e-9, label+" "+metric)
			}
			for _, k := range analysis.KernelsOf(rr).Top {
				require.False(t, reHashSuffix.MatchString(k.Name), "%s rank %d: %s keeps its hash", label, i, k.Name)
			}
		}
	}
	for _, rt := range truth.Ranks {
		p := filepath.Join(dir, rt.Dir)
		js, err := filepath.Glob(filepath.Join(p, "mindstudio_profiler_output", "msprof_*.json"))
		require.NoError(t, err)
		require.Len(t, js, 1)
		sums, span, outside := msprofOverlap(t, js[0])
		require.True(t, outside, "the placeholder lies outside msprof's overlap window")
		require.Positive(t, sums["Computing"])
		require.Positive(t, sums["Communication"])
		require.Positive(t, sums["Free"])
		for k, v := range sums {
			want[p+k] = v
		}
		want[p+"window"] = span
	}
	res, err := pipeline.Analyze(context.Background(), dir, pipeline.Options{})
	require.NoError(t, err)
	check(res, "msprof_*.json")
	for _, rt := range truth.Ranks {
		js, _ := filepath.Glob(filepath.Join(dir, rt.Dir, "mindstudio_profiler_output", "msprof_*.json"))
		require.NoError(t, os.Remove(js[0]))
	}
	res, err = pipeline.Analyze(context.Background(), dir, pipeline.Options{})
	require.NoError(t, err)
	check(res, "task_time_*.csv")
}
