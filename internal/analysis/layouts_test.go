package analysis

import (
	"context"
	"database/sql"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/npuprof/npuprof/internal/parser/model"
	"github.com/npuprof/npuprof/internal/pipeline/gather"
	"github.com/npuprof/npuprof/internal/testutil"
	"github.com/npuprof/npuprof/internal/tracegen"
)

// checkTruth asserts every truth metric (within 0.01%) and, when steps is
// set, the per-step breakdown. msprof output has no parallel_group_info, so
// for it the hccl.group.* metrics must be unavailable, with the reason.
func checkTruth(t *testing.T, truth *tracegen.Truth, res *Result, steps bool) {
	msprof := res.Ranks[0].Format == model.FormatMsprofText
	t.Helper()
	require.Len(t, res.Ranks, len(truth.Ranks))
	for i, rt := range truth.Ranks {
		rr := res.Ranks[i]
		require.Equal(t, rt.Rank, rr.Rank)
		require.Empty(t, rr.Errors)
		require.Equal(t, rt.Dir, filepath.Base(rr.Path))
		keys := rt.SortedMetricNames()
		for _, k := range keys {
			if msprof && strings.HasPrefix(k, "hccl.group.") {
				require.Contains(t, rr.Unavailable["hccl.group.*"], "parallel_group_info")
				continue
			}
			got, ok := rr.Metrics[k]
			require.Truef(t, ok, "rank %d: metric %s missing (unavailable: %q)", rt.Rank, k, rr.Unavailable[k])
			require.Truef(t, closeEnough(rt.Metrics[k], got), "rank %d %s: truth %v, npuprof %v", rt.Rank, k, rt.Metrics[k], got)
		}
		for k := range rr.Metrics {
			// per-layer times are means over matching layers, checked in
			// TestPerLayerCollectiveTime; not in the truth
			if strings.HasPrefix(k, "hccl.") && !(strings.HasPrefix(k, "hccl.per_layer.") && strings.HasSuffix(k, ".time_us")) {
				_, ok := rt.Metrics[k]
				require.Truef(t, ok, "rank %d: unexpected metric %s", rt.Rank, k)
			}
		}
		if !steps {
			continue
		}
		require.Len(t, StepsOf(rr), len(rt.Steps))
		for j, st := range rt.Steps {
			s := StepsOf(rr)[j]
			require.Equal(t, st.Step, s.Step)
			require.Truef(t, closeEnough(st.ComputingUs, us(s.Computing)), "rank %d step %d computing", rt.Rank, st.Step)
			require.Truef(t, closeEnough(st.CommunicationUs, us(s.Communication)), "rank %d step %d communication", rt.Rank, st.Step)
			require.Truef(t, closeEnough(st.CommunicationNotOverlappedUs, us(s.CommunicationNotOverlapped)), "rank %d step %d not overlapped", rt.Rank, st.Step)
			require.Truef(t, closeEnough(st.FreeUs, us(s.Free)), "rank %d step %d free", rt.Rank, st.Step)
		}
	}
}

func analyzeDir(t *testing.T, dir string) *Result {
	t.Helper()
	p, err := gather.Models(context.Background(), dir, gather.Options{})
	require.NoError(t, err)
	res, err := analyzeProfile(p)
	require.NoError(t, err)
	return res
}

// One scenario, three layouts (torch_npu text, msprof text, torch_npu db):
// npuprof reports the same metrics from each, equal to the truth within
// 0.01%; the per-step breakdown too wherever the layout has steps (msprof
// has no framework events, so no ProfilerStep).
func TestLayoutsReportTheSameMetrics(t *testing.T) {
	for _, name := range []string{"ep-fc1-cumsum-steps", "hot-rank"} {
		sc, ok := tracegen.Lookup(name)
		require.True(t, ok)
		sc.Layers, sc.Steps = 3, 2
		results := map[tracegen.Layout]*Result{}
		for _, lay := range tracegen.Layouts() {
			t.Run(name+"/"+string(lay), func(t *testing.T) {
				dir := t.TempDir()
				s := sc
				if lay == tracegen.LayoutMsprofText {
					s.MsprofSlice = 500 // exercise msprof_slice_* joining
				}
				truth, err := tracegen.GenerateLayout(dir, s, lay)
				require.NoError(t, err)
				res := analyzeDir(t, dir)
				for _, rr := range res.Ranks {
					require.Equal(t, model.Format(lay), rr.Format)
				}
				checkTruth(t, truth, res, lay != tracegen.LayoutMsprofText)
				results[lay] = res
			})
		}
		// and the layouts agree with each other on every metric they share
		base := results[tracegen.LayoutTorchNPUText]
		for _, lay := range []tracegen.Layout{tracegen.LayoutMsprofText, tracegen.LayoutTorchNPUDB} {
			other := results[lay]
			if base == nil || other == nil {
				continue
			}
			for i := range base.Ranks {
				var keys []string
				for k := range base.Ranks[i].Metrics {
					keys = append(keys, k)
				}
				sort.Strings(keys)
				for _, k := range keys {
					if lay == tracegen.LayoutMsprofText && strings.HasPrefix(k, "hccl.group.") {
						continue
					}
					if lay == tracegen.LayoutMsprofText && k == "decode.step.time_us" {
						// msprof's timeline has no ProfilerStep#N: its step
						// time is npuprof's decode steps' (another definition)
						continue
					}
					// msprof output has no torch_npu ProfilerStep#N (the idle
					// within steps is then told by the decode-step boundaries)
					if lay == tracegen.LayoutMsprofText && (strings.HasPrefix(k, "steps.") || k == MetricFreeInStepsUs || k == MetricFreeBetweenStepsUs) {
						continue
					}
					// torch_npu's db export has no HCCL plane tasks
					if lay == tracegen.LayoutTorchNPUDB && strings.HasPrefix(k, "hccl.plane.") {
						require.Contains(t, other.Ranks[i].Unavailable[k], "no HCCL plane tasks")
						continue
					}
					v, ok := other.Ranks[i].Metrics[k]
					require.Truef(t, ok, "%s rank %d lacks %s", lay, i, k)
					require.Truef(t, closeEnough(base.Ranks[i].Metrics[k], v), "%s rank %d %s: text %v, %s %v", lay, i, k, base.Ranks[i].Metrics[k], lay, v)
				}
			}
		}
	}
}

// Without the msprof_*.json timeline, task_time_*.csv is the timeline and
// op_summary_*.csv gives the collectives: the same metrics.
func TestMsprofTaskTimeFallback(t *testing.T) {
	sc := testutil.Scenario(t, "ep-fc1-cumsum")
	sc.Layers, sc.Steps, sc.Ranks = 3, 2, 2
	dir, truth := testutil.GenerateLayout(t, sc, tracegen.LayoutMsprofText)
	jsons, _ := filepath.Glob(filepath.Join(dir, "PROF_*", "mindstudio_profiler_output", "msprof_*.json"))
	require.Len(t, jsons, 2)
	for _, j := range jsons {
		require.NoError(t, os.Remove(j))
	}
	p, err := gather.Models(context.Background(), dir, gather.Options{})
	require.NoError(t, err)
	res, err := analyzeProfile(p)
	require.NoError(t, err)
	// task_time_*.csv has no HCCL plane tasks
	for i := range truth.Ranks {
		delete(truth.Ranks[i].Metrics, MetricHCCLPlaneSDMACount)
		delete(truth.Ranks[i].Metrics, MetricHCCLPlaneRDMACount)
	}
	checkTruth(t, truth, res, false)
	for i, rr := range res.Ranks {
		m := p.Ranks[i]
		require.Contains(t, m.Have.TimelineFile, "task_time_")
		require.Contains(t, rr.Unavailable[MetricHCCLPlaneSDMACount], "no HCCL plane tasks")
		require.NotEmpty(t, m.CommStats)
		require.NotEmpty(t, m.APIStats)
		require.NotEmpty(t, m.Communication, "analyze/communication.json")
		for _, w := range rr.Warnings {
			require.NotContains(t, w.Message, "communication_statistic", "stats agree with the ops")
			require.NotContains(t, w.Message, "match no row", "every task_time kernel has its op_summary row")
		}
		// task_time names kernels by their binaries' hashes; the names and
		// types come from op_summary
		require.NotEmpty(t, KernelsOf(rr).Top)
		for _, k := range KernelsOf(rr).Top {
			require.NotRegexp(t, `_[0-9a-f]{32}$`, k.Name)
			require.NotRegexp(t, `_[0-9a-f]{32}$`, k.OpType)
		}
		// the PROFILING_DISABLE bookkeeping task 898 ms after the last
		// kernel is left out of the window (checkTruth compared it)
		last := m.Tasks[len(m.Tasks)-1]
		require.Equal(t, "PROFILING_DISABLE", m.Str(m.Name(&last)))
		require.Less(t, rr.Metrics["device.window.time_us"], 898000.0)
	}
	// without op_summary the names stay task_time's, with a warning
	for _, o := range glob(t, dir, "PROF_*", "mindstudio_profiler_output", "op_summary_*.csv") {
		require.NoError(t, os.Remove(o))
	}
	p, err = gather.Models(context.Background(), dir, gather.Options{})
	require.NoError(t, err)
	res, err = analyzeProfile(p)
	require.NoError(t, err)
	rr := res.Ranks[0]
	require.Regexp(t, `_[0-9a-f]{32}$`, KernelsOf(rr).Top[0].Name)
	require.NotRegexp(t, `[0-9a-f]{32}`, KernelsOf(rr).Top[0].OpType, "the op type is the name without the hash")
	found := false
	for _, w := range rr.Warnings {
		found = found || strings.Contains(w.Message, "no op_summary_*.csv: kernel names and op types are task_time's")
	}
	require.True(t, found, "%v", rr.Warnings)
	within(t, truth.Ranks[0].Metrics["device.window.time_us"], rr.Metrics["device.window.time_us"], 1e-9, "window without op_summary")
}

func glob(t *testing.T, parts ...string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(parts...))
	require.NoError(t, err)
	require.NotEmpty(t, m)
	return m
}

// A PROF_* folder inside a *_ascend_pt folder whose ASCEND_PROFILER_OUTPUT
// is missing (torch_npu's parsing failed): read as msprof, with the rank
// and level from profiler_info.
func TestNestedProfInAscendPT(t *testing.T) {
	sc := testutil.Scenario(t, "clean")
	sc.Layers, sc.Steps, sc.Ranks = 2, 1, 2
	profs, truth := testutil.GenerateLayout(t, sc, tracegen.LayoutMsprofText)
	texts, _ := testutil.Generate(t, sc)
	cluster := t.TempDir()
	for i, rt := range truth.Ranks {
		pts, _ := filepath.Glob(filepath.Join(texts, "*rank"+string(rune('0'+i))+"_*_ascend_pt"))
		require.Len(t, pts, 1)
		pt := filepath.Join(cluster, filepath.Base(pts[0]))
		require.NoError(t, os.Rename(pts[0], pt))
		require.NoError(t, os.RemoveAll(filepath.Join(pt, "ASCEND_PROFILER_OUTPUT")))
		require.NoError(t, os.Rename(filepath.Join(profs, rt.Dir), filepath.Join(pt, rt.Dir)))
	}
	res := analyzeDir(t, cluster)
	require.Len(t, res.Ranks, 2)
	for i, rr := range res.Ranks {
		require.Equal(t, i, rr.Rank)
		require.Equal(t, model.FormatMsprofText, rr.Format)
		require.Equal(t, "Level1", rr.ProfilerLevel)
		require.Truef(t, closeEnough(truth.Ranks[i].Metrics["hccl.total.time_us"], rr.Metrics["hccl.total.time_us"]), "rank %d", i)
		require.NotEmpty(t, rr.Metrics["hccl.group.tp.count"], "groups from profiler_metadata.json")
	}
}

// msprof's own DB (PROF_*/msprof_{ts}.db) has the torch_npu DB's schema
// without the PyTorch tables and without parallel_group_info: built here
// from the generated torch_npu DB, it gives the same metrics.
func TestMsprofDB(t *testing.T) {
	sc := testutil.Scenario(t, "ep-fc1-cumsum")
	sc.Layers, sc.Steps, sc.Ranks = 3, 2, 2
	src, truth := testutil.GenerateLayout(t, sc, tracegen.LayoutTorchNPUDB)
	dir := t.TempDir()
	for i, rt := range truth.Ranks {
		prof := filepath.Join(dir, fmt.Sprintf("PROF_%06d_20250109081620431_ABCDEFGHIJKLMNO%c", i+1, 'A'+i))
		dev := filepath.Join(prof, fmt.Sprintf("device_%d", i))
		require.NoError(t, os.MkdirAll(dev, 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dev, fmt.Sprintf("info.json.%d", i)), []byte(fmt.Sprintf(`{"rank_id": %d}`, i)), 0o644))
		db := filepath.Join(prof, "msprof_20250109081750.db")
		require.NoError(t, os.Rename(filepath.Join(src, rt.Dir, "ASCEND_PROFILER_OUTPUT", fmt.Sprintf("ascend_pytorch_profiler_%d.db", i)), db))
		conn, err := sql.Open("sqlite", db)
		require.NoError(t, err)
		for _, q := range []string{`DROP TABLE PYTORCH_API`, `DROP TABLE CONNECTION_IDS`, `DROP TABLE STEP_TIME`, `DROP TABLE RANK_DEVICE_MAP`,
			`DELETE FROM META_DATA WHERE name = 'parallel_group_info'`} {
			_, err := conn.Exec(q)
			require.NoError(t, err, q)
		}
		require.NoError(t, conn.Close())
		truth.Ranks[i].Dir = filepath.Base(prof)
	}
	res := analyzeDir(t, dir)
	for i, rr := range res.Ranks {
		require.Equal(t, model.FormatMsprofDB, rr.Format)
		require.Equal(t, i, rr.Device)
		for _, k := range truth.Ranks[i].SortedMetricNames() {
			if strings.HasPrefix(k, "hccl.group.") {
				continue
			}
			require.Truef(t, closeEnough(truth.Ranks[i].Metrics[k], rr.Metrics[k]), "rank %d %s: truth %v, npuprof %v", i, k, truth.Ranks[i].Metrics[k], rr.Metrics[k])
		}
		require.Contains(t, rr.Unavailable["hccl.group.*"], "parallel_group_info")
	}
	require.Equal(t, 0, res.Ranks[0].Rank)
	require.Equal(t, 1, res.Ranks[1].Rank, "rank from device_N/info.json.N")
}

// msprof's CSVs cut short: task_time_*.csv (the timeline when there is no
// msprof_*.json) makes the rank and every metric partial; a cut
// communication_statistic_*.csv is warned about. Both were read as whole.
func TestMsprofCutCSVsArePartial(t *testing.T) {
	sc := testutil.Scenario(t, "ep-fc1-cumsum")
	sc.Layers, sc.Steps, sc.Ranks = 3, 2, 1
	dir, _ := testutil.GenerateLayout(t, sc, tracegen.LayoutMsprofText)
	for _, j := range glob(t, dir, "PROF_*", "mindstudio_profiler_output", "msprof_*.json") {
		require.NoError(t, os.Remove(j))
	}
	load := func() *RankResult {
		p, err := gather.Models(context.Background(), dir, gather.Options{})
		require.NoError(t, err)
		res, err := analyzeProfile(p)
		require.NoError(t, err)
		return res.Ranks[0]
	}
	require.False(t, load().Partial)
	cutLast := func(p string) int {
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		b = b[:len(b)-2] // inside the last row's last cell
		require.NoError(t, os.WriteFile(p, b, 0o644))
		return strings.Count(string(b), "\n") + 1
	}
	tt := glob(t, dir, "PROF_*", "mindstudio_profiler_output", "task_time_*.csv")[0]
	line := cutLast(tt)
	rr := load()
	require.True(t, rr.Partial)
	require.Contains(t, rr.PartialReason, fmt.Sprintf("%s ends inside line %d, without a newline (cut short?)", tt, line))
	require.ElementsMatch(t, slices.Collect(maps.Keys(rr.Metrics)), rr.PartialMetrics, "every metric comes from the cut timeline")

	cs := glob(t, dir, "PROF_*", "mindstudio_profiler_output", "communication_statistic_*.csv")[0]
	line = cutLast(cs)
	warned := false
	for _, w := range load().Warnings {
		warned = warned || w.File == cs && strings.Contains(w.Message, fmt.Sprintf("the file ends inside line %d", line))
	}
	require.True(t, warned)
}
