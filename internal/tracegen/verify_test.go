package tracegen

// An independent re-reading of the generated files: a tiny parser written
// from docs/formats.md (not from the generator's data structures) recomputes
// every ground-truth metric from trace_view.json and checks it against the
// Truth, plus the cross-file invariants (kernel_details rows, flows,
// metadata, per-step truth).

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/npuprof/npuprof/internal/parser/model"
)

// tev is one trace event as read back.
type tev struct {
	Ph   string         `json:"ph"`
	Name string         `json:"name"`
	Pid  int64          `json:"pid"`
	Tid  int64          `json:"tid"`
	TS   string         `json:"ts"`
	Dur  json.Number    `json:"dur"`
	Cat  string         `json:"cat"`
	ID   json.Number    `json:"id"`
	Args map[string]any `json:"args"`
}

// decNs parses a decimal µs text ("123.456", "0.02", "0") into integer ns
// without going through float64.
func decNs(t *testing.T, s string) int64 {
	t.Helper()
	whole, frac, _ := strings.Cut(s, ".")
	require.LessOrEqual(t, len(frac), 3, "more than 3 decimals in %q", s)
	frac += strings.Repeat("0", 3-len(frac))
	w, err := strconv.ParseInt(whole, 10, 64)
	require.NoError(t, err, s)
	f, err := strconv.ParseInt(frac, 10, 64)
	require.NoError(t, err, s)
	return w*1000 + f
}

func readTrace(t *testing.T, path string) []tev {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	require.True(t, bytes.HasPrefix(data, []byte("[{")), "bare JSON array")
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var ev []tev
	require.NoError(t, dec.Decode(&ev))
	return ev
}

// segs merges [start,end) pairs into disjoint segments (test-local copy of
// the algorithm, kept deliberately naive).
func segs(iv [][2]int64) [][2]int64 {
	sort.Slice(iv, func(i, j int) bool { return iv[i][0] < iv[j][0] })
	var out [][2]int64
	for _, x := range iv {
		if x[1] <= x[0] {
			continue
		}
		if n := len(out); n > 0 && x[0] <= out[n-1][1] {
			out[n-1][1] = max(out[n-1][1], x[1])
		} else {
			out = append(out, x)
		}
	}
	return out
}

func total(s [][2]int64) int64 {
	var n int64
	for _, x := range s {
		n += x[1] - x[0]
	}
	return n
}

// overlapOf returns computing, communication, not-overlapped and free ns of
// the given intervals inside window [lo, hi).
func overlapOf(comp, comm [][2]int64, lo, hi int64) [4]int64 {
	cu := total(segs(append([][2]int64{}, comp...)))
	co := total(segs(append([][2]int64{}, comm...)))
	both := total(segs(append(append([][2]int64{}, comp...), comm...)))
	return [4]int64{cu, co, both - cu, (hi - lo) - both}
}

var computeTypes = map[string]bool{"AI_CORE": true, "AI_VECTOR_CORE": true, "MIX_AIC": true, "MIX_AIV": true, "AI_CPU": true, "DSA_SQE": true}

// verifyRank re-derives rank rt's truth from its files.
func verifyRank(t *testing.T, dir string, s Scenario, rt RankTruth) {
	t.Helper()
	rdir := filepath.Join(dir, rt.Dir)
	out := filepath.Join(rdir, OutputDir)
	ev := readTrace(t, filepath.Join(out, "trace_view.json"))

	// Metadata: communicator suffixes are distinct.
	var meta struct {
		Env map[string]string `json:"ENV_VARIABLES"`
		PGI map[string]struct {
			GroupName   string `json:"group_name"`
			GroupRank   int    `json:"group_rank"`
			GlobalRanks []int  `json:"global_ranks"`
		} `json:"parallel_group_info"`
	}
	data, err := os.ReadFile(filepath.Join(rdir, "profiler_metadata.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, &meta))
	suffixGroup := map[string]string{}
	for comm, g := range meta.PGI {
		h := strconv.FormatUint(model.DoubleHash(comm), 10)
		suf := h[len(h)-3:]
		require.NotContains(t, suffixGroup, suf, "suffix clash on rank %d", rt.Rank)
		suffixGroup[suf] = g.GroupName
		require.Equal(t, rt.Rank, g.GlobalRanks[g.GroupRank])
	}
	var info map[string]any
	data, err = os.ReadFile(filepath.Join(rdir, "profiler_info_"+strconv.Itoa(rt.Rank)+".json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, &info))
	assert.EqualValues(t, rt.Rank, info["rank_id"])

	procName := map[int64]string{}
	threadName := map[[2]int64]string{}
	lastX := map[string]int{}
	firstM := map[string]int{}
	for _, e := range ev {
		if e.Ph == "M" && e.Name == "process_name" {
			procName[e.Pid] = e.Args["name"].(string)
		}
		if e.Ph == "M" && e.Name == "thread_name" {
			threadName[[2]int64{e.Pid, e.Tid}] = e.Args["name"].(string)
		}
	}
	got := map[string]int64{}
	cnt := map[string]int64{}
	add := func(k string, ns int64) { got[k+".time_us"] += ns; cnt[k+".count"]++ }
	graphKernels := 0
	var comp, comm, win, other [][2]int64
	hccl := map[[2]int64]bool{}
	var aiv [][2]int64
	xAt := map[[3]int64]tev{}
	byName := map[string]map[[2]int64]bool{}
	var steps [][2]int64
	inRouting := map[int64]bool{}
	for i, e := range ev {
		p := procName[e.Pid]
		if e.Ph == "M" {
			if _, ok := firstM[p]; !ok {
				firstM[p] = i
			}
			continue
		}
		if e.Ph != "X" {
			continue
		}
		lastX[p] = i
		_, frac, _ := strings.Cut(e.TS, ".")
		require.Len(t, frac, 3, "ts %q", e.TS)
		st, du := decNs(t, e.TS), decNs(t, e.Dur.String())
		xAt[[3]int64{e.Pid, e.Tid, st}] = e
		if byName[e.Name] == nil {
			byName[e.Name] = map[[2]int64]bool{}
		}
		byName[e.Name][[2]int64{st, du}] = true
		switch {
		case p == "Python" && strings.HasPrefix(e.Name, "ProfilerStep#"):
			steps = append(steps, [2]int64{st, st + du})
		case p == "Ascend Hardware":
			tt := e.Args["Task Type"].(string)
			if e.Name != "PROFILING_ENABLE" && e.Name != "PROFILING_DISABLE" {
				// current msprof's window extremes (docs/formats.md)
				other = append(other, [2]int64{st, st + du})
			}
			switch {
			case strings.HasSuffix(e.Name, "AivKernel"):
				aiv = append(aiv, [2]int64{st, st + du})
			case tt == "EVENT_WAIT_SQE":
				add("event_wait", du)
				add("event_wait.stream."+strconv.FormatInt(e.Tid, 10), du)
			case computeTypes[tt] && !strings.HasPrefix(e.Name, "EVENT_"):
				// the device window spans compute kernels and HCCL big
				// ops, as the profiler's Overlap Analysis does
				win = append(win, [2]int64{st, st + du})
				comp = append(comp, [2]int64{st, st + du})
				add("kernel.compute", du)
				if tt == "AI_CPU" {
					add("kernel.aicpu", du)
				}
				if fmt.Sprint(e.Args["Model Id"]) != "4294967295" {
					graphKernels++
				}
				// MoE Cumsum = a Cumsum after a MoeInitRouting* and before
				// the next GroupedMatmul* on the same stream (docs/formats.md#moe-kernels);
				// device events are written in time order.
				switch {
				case strings.Contains(e.Name, "MoeInitRouting"):
					add("moe.routing", du)
					inRouting[e.Tid] = true
				case strings.Contains(e.Name, "GroupedMatmul"):
					add("moe.gmm", du)
					inRouting[e.Tid] = false
				case strings.Contains(e.Name, "Cumsum") && inRouting[e.Tid]:
					add("moe.cumsum", du)
					if tt == "AI_CPU" {
						add("moe.cumsum.aicpu", du)
					}
				}
			}
		case p == "HCCL" && strings.HasPrefix(threadName[[2]int64{e.Pid, e.Tid}], "Plane "):
			// a plane task, counted by its args' transport type
			switch e.Args["transport type"] {
			case "SDMA":
				cnt[MetricHCCLPlaneSDMACount]++
			case "RDMA":
				cnt[MetricHCCLPlaneRDMACount]++
			}
		case p == "HCCL" && strings.HasSuffix(threadName[[2]int64{e.Pid, e.Tid}], "Communication"):
			win = append(win, [2]int64{st, st + du})
			comm = append(comm, [2]int64{st, st + du})
			hccl[[2]int64{st, st + du}] = true
			typ, rest, ok := strings.Cut(strings.TrimPrefix(e.Name, "hcom_"), "__")
			require.True(t, ok, e.Name)
			grp := suffixGroup[strings.Split(rest, "_")[0]]
			require.NotEmpty(t, grp, "op %s has no group", e.Name)
			add("hccl.total", du)
			add("hccl."+strings.ToLower(typ), du)
			add("hccl.group."+grp, du)
			add("hccl.group."+grp+"."+strings.ToLower(typ), du)
		}
	}
	for _, a := range aiv {
		assert.True(t, hccl[a], "AIV kernel not coincident with an HCCL op")
	}
	lo, hi := win[0][0], win[0][1]
	for _, w := range win {
		lo, hi = min(lo, w[0]), max(hi, w[1])
	}
	got[MetricKernelSpanUs] = hi - lo
	klo, khi := lo, hi
	if s.extremesWindow() {
		for _, w := range other {
			lo, hi = min(lo, w[0]), max(hi, w[1])
		}
	}
	got[MetricHeadIdleUs], got[MetricTailIdleUs] = klo-lo, hi-khi
	ov := overlapOf(comp, comm, lo, hi)
	got[MetricWindowUs] = hi - lo
	got[MetricComputingUs], got[MetricCommunicationUs], got[MetricCommNotOverlappedUs], got[MetricFreeUs] = ov[0], ov[1], ov[2], ov[3]
	want := rt.Metrics
	for k, v := range cnt {
		got[k] = v * 1000
	}
	keys := map[string]bool{}
	for k := range got {
		keys[k] = true
	}
	for k, v := range want {
		if v != 0 {
			keys[k] = true
		}
	}
	// Structural metrics follow from the program, not from the files;
	// the graph share is checked from the Model Id of every kernel.
	for k := range structureTruth(s) {
		delete(keys, k)
	}
	assert.InDelta(t, want[MetricGraphKernelsShare], float64(graphKernels)/float64(cnt["kernel.compute.count"]), 1e-9)
	for k := range keys {
		assert.InDelta(t, want[k], float64(got[k])/1000, 1e-6, "rank %d metric %s", rt.Rank, k)
	}

	// Overlap Analysis slices sum to the truth.
	ovSum := map[string]int64{}
	for _, e := range ev {
		if e.Ph == "X" && procName[e.Pid] == "Overlap Analysis" {
			ovSum[e.Name] += decNs(t, e.Dur.String())
		}
	}
	assert.InDelta(t, want[MetricComputingUs], us(ovSum["Computing"]), 1e-6)
	assert.InDelta(t, want[MetricCommunicationUs], us(ovSum["Communication"]), 1e-6)
	assert.InDelta(t, want[MetricCommNotOverlappedUs], us(ovSum["Communication(Not Overlapped)"]), 1e-6)
	assert.InDelta(t, want[MetricFreeUs], us(ovSum["Free"]), 1e-6)
	var ovLo, ovHi int64 = -1, 0
	for _, e := range ev {
		if e.Ph == "X" && procName[e.Pid] == "Overlap Analysis" {
			st := decNs(t, e.TS)
			if ovLo < 0 || st < ovLo {
				ovLo = st
			}
			ovHi = max(ovHi, st+decNs(t, e.Dur.String()))
		}
	}
	assert.InDelta(t, want[MetricWindowUs], us(ovHi-ovLo), 1e-6, "the Overlap Analysis spans the window")

	// Device metadata comes after the device slices (as in real files).
	assert.Greater(t, firstM["Ascend Hardware"], lastX["Ascend Hardware"])
	assert.Greater(t, firstM["HCCL"], lastX["HCCL"])

	// Flows: s on a Python op, f on a device slice at (pid, tid, ts); id = f ts in ns.
	seen := map[string]int{}
	for _, e := range ev {
		if e.Name != "torch_to_npu" {
			continue
		}
		assert.Equal(t, "async_npu", e.Cat)
		x, ok := xAt[[3]int64{e.Pid, e.Tid, decNs(t, e.TS)}]
		require.True(t, ok, "flow %s end %s has no slice", e.Ph, e.ID)
		if e.Ph == "f" {
			assert.Equal(t, e.ID.String(), strconv.FormatInt(decNs(t, e.TS), 10))
			assert.Contains(t, []string{"Ascend Hardware", "HCCL"}, procName[x.Pid])
		} else {
			assert.Equal(t, "Python", procName[x.Pid])
		}
		seen[e.ID.String()+e.Ph]++
	}
	for k, n := range seen {
		assert.Equal(t, 1, n, "duplicate flow %s", k)
	}

	// kernel_details.csv: CRLF, trailing TAB, one row per compute kernel and
	// HCCL big op, each matching a trace slice.
	raw, err := os.ReadFile(filepath.Join(out, "kernel_details.csv"))
	require.NoError(t, err)
	assert.Equal(t, strings.Count(string(raw), "\n"), strings.Count(string(raw), "\r\n"), "CRLF line ends")
	rows, err := csv.NewReader(bytes.NewReader(raw)).ReadAll()
	require.NoError(t, err)
	hdr := rows[0]
	if s.ProfilerSteps {
		require.Equal(t, "Step Id", hdr[0])
	} else {
		require.Equal(t, "Model ID", hdr[0])
	}
	col := map[string]int{}
	for i, h := range hdr {
		col[h] = i
	}
	var nk, nh int
	for _, r := range rows[1:] {
		require.Len(t, r, len(hdr))
		start := r[col["Start Time(us)"]]
		require.True(t, strings.HasSuffix(start, "\t"), "trailing TAB")
		key := [2]int64{decNs(t, strings.TrimSpace(start)), decNs(t, r[col["Duration(us)"]])}
		assert.True(t, byName[r[col["Name"]]][key], "row %s not in trace", r[col["Name"]])
		if r[col["Accelerator Core"]] == "HCCL" {
			nh++
			assert.Equal(t, "N/A", r[col["Task ID"]])
		} else {
			nk++
			assert.True(t, strings.HasPrefix(r[col["Input Shapes"]], `"`) && strings.HasSuffix(r[col["Input Shapes"]], `"`))
		}
	}
	assert.EqualValues(t, want[MetricKernelComputeCount], nk)
	assert.EqualValues(t, want[MetricHCCLTotalCount], nh)

	// Per-step truth.
	if s.ProfilerSteps {
		require.Len(t, rt.Steps, len(steps))
		for i, sp := range steps {
			var c, k [][2]int64
			for _, x := range comp {
				if x[0] >= sp[0] && x[0] < sp[1] {
					c = append(c, x)
				}
			}
			for _, x := range comm {
				if x[0] >= sp[0] && x[0] < sp[1] {
					k = append(k, x)
				}
			}
			all := append(append([][2]int64{}, c...), k...)
			wlo, whi := all[0][0], all[0][1]
			for _, x := range all {
				wlo, whi = min(wlo, x[0]), max(whi, x[1])
			}
			o := overlapOf(c, k, wlo, whi)
			st := rt.Steps[i]
			assert.Equal(t, stepNumber(i), st.Step)
			assert.InDelta(t, st.ComputingUs, us(o[0]), 1e-6)
			assert.InDelta(t, st.CommunicationUs, us(o[1]), 1e-6)
			assert.InDelta(t, st.CommunicationNotOverlappedUs, us(o[2]), 1e-6)
			assert.InDelta(t, st.FreeUs, us(o[3]), 1e-6)
		}
	} else {
		assert.Empty(t, steps)
		assert.Empty(t, rt.Steps)
	}

	// communication.json parses.
	if s.CommJSON {
		data, err := os.ReadFile(filepath.Join(out, "communication.json"))
		require.NoError(t, err)
		var cj map[string]map[string]map[string]any
		require.NoError(t, json.Unmarshal(data, &cj))
		n := 0
		for _, blk := range cj {
			n += len(blk["collective"]) - 1 // minus Total Op Info
			assert.Contains(t, blk["collective"], "Total Op Info")
		}
		assert.EqualValues(t, want[MetricHCCLTotalCount], n)
	}
}
