package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/stretchr/testify/require"

	"github.com/npuprof/npuprof/internal/parser/parquetio"
	"github.com/npuprof/npuprof/internal/testutil"
	"github.com/npuprof/npuprof/internal/tracegen"
)

// TestExportRoundTrip is the "no silent loss" test of the Parquet export:
// for every committed input, several generated captures (each layout
// tracegen writes, a rank cut mid-trace, summaries-only ranks, expert-load
// dumps in the profile folder, a rank without collective data) and the
// real samples, the JSON document of `npuprof analyze EXPORT` must equal
// the one of `npuprof analyze CAPTURE` field by field. The only fields
// allowed to differ are those of exportDifferences; every other difference
// is reported with its path in the document.
func TestExportRoundTrip(t *testing.T) {
	for _, in := range roundTripInputs(t) {
		t.Run(in.name, func(t *testing.T) {
			docA, docB, diffs := exportDocs(t, in.path, nil)
			diffs = append(diffs, compareJSON("", docA, docB)...)
			if len(diffs) > 0 {
				t.Errorf("the analysis of the export differs from that of %s (docs/parquet.md: no silent loss):\n%s", in.path, strings.Join(diffs, "\n"))
			}
		})
	}
}

// exportDocs analyzes the capture in (at its absolute path), exports it,
// lets rewrite change the export (when not nil), analyzes the export, and
// returns both documents with exportDifferences applied to the export's,
// and what did not differ as they allow.
func exportDocs(t *testing.T, in string, rewrite func(pq string)) (docA, docB map[string]any, diffs []string) {
	t.Helper()
	abs, err := filepath.Abs(in)
	require.NoError(t, err)
	code, a, errs := run("analyze", abs, "--format", "json")
	require.Equal(t, ExitOK, code, errs)
	pq := filepath.Join(t.TempDir(), "pq")
	code, _, errs = run("export", abs, "-o", pq, "-q")
	require.Equal(t, ExitOK, code, errs)
	if rewrite != nil {
		rewrite(pq)
	}
	code, b, errs := run("analyze", pq, "--format", "json")
	require.Equal(t, ExitOK, code, errs)
	docA, docB = decodeDoc(t, a), decodeDoc(t, b)
	for _, d := range exportDifferences {
		diffs = append(diffs, d.apply(docA, docB, pq)...)
	}
	return docA, docB, diffs
}

// exportDifference is one way the analysis of an export may legitimately
// differ from that of the capture. apply checks that the export's document
// differs exactly so (returning what does not) and makes it the capture's.
type exportDifference struct {
	field, why string
	apply      func(a, b map[string]any, pq string) []string
}

// exportDifferences is the whole allow-list (docs/parquet.md, "Export and
// read back"): where things were read from, nothing else.
var exportDifferences = []exportDifference{
	{"input.path", "the folder analyzed: the capture's, or the export's (as given)", func(a, b map[string]any, pq string) []string {
		ia, ib := a["input"].(map[string]any), b["input"].(map[string]any)
		if ib["path"] != pq {
			return []string{fmt.Sprintf("input.path: %v, want the export %s", ib["path"], pq)}
		}
		ib["path"] = ia["path"]
		return nil
	}},
	{"ranks[].path, ranks[].exported_from", "a rank read back says it was read from the export (path) and where it was exported from (exported_from); " +
		"exported_from.abs_path is the capture's rank folder", func(_, b map[string]any, pq string) []string {
		var out []string
		for i, r := range docRanks(b) {
			o, ok := r["exported_from"].(map[string]any)
			if r["path"] != pq || !ok {
				out = append(out, fmt.Sprintf("ranks[%d]: path %v and exported_from %v, want the export %s and the origin", i, r["path"], r["exported_from"], pq))
				continue
			}
			r["path"] = o["abs_path"]
			delete(r, "exported_from")
		}
		return out
	}},
}

// roundTripInput is one capture the round trip is run on.
type roundTripInput struct{ name, path string }

func roundTripInputs(t *testing.T) []roundTripInput {
	var ins []roundTripInput
	traces, err := filepath.Glob(filepath.Join("..", "..", "testdata", "traces", "*"))
	require.NoError(t, err)
	for _, p := range traces {
		if st, err := os.Stat(p); err == nil && st.IsDir() {
			ins = append(ins, roundTripInput{"committed/" + filepath.Base(p), p})
		}
	}
	require.Len(t, ins, 4, "testdata/traces: every committed capture")
	// the broken inputs analyze reads (folders: a rank cut mid-event,
	// files that are not what their name says, ...)
	broken, err := filepath.Glob(filepath.Join("..", "..", "testdata", "broken", "*"))
	require.NoError(t, err)
	for _, p := range broken {
		if st, err := os.Stat(p); err == nil && st.IsDir() {
			if code, _, _ := run("analyze", p, "--format", "json", "-o", os.DevNull); code == ExitOK {
				ins = append(ins, roundTripInput{"broken/" + filepath.Base(p), p})
			}
		}
	}
	ins = append(ins, generatedInputs(t)...)
	if d, why := testutil.FindSamples(); d == "" {
		testutil.Skipped(t, "the real-sample cases of the round-trip tests (cmd/npuprof)", why)
	} else {
		for _, rel := range []string{"Ascend-msinsight/test/data/pytorch", "Ascend-msinsight/test/data/pytorch/text/level0",
			"Ascend-msinsight/test/data/pytorch/text/level2", "Ascend-msinsight/server/src/test/test_data"} {
			ins = append(ins, roundTripInput{"samples/" + rel, filepath.Join(d, filepath.FromSlash(rel))})
		}
	}
	return ins
}

// generatedInputs: ep-fc1-cumsum-steps in every layout tracegen writes
// (summaries-only odd ranks among them), with one rank's trace cut in the
// middle of an event, hot-experts with its MindIE dumps in the profile
// folder, a capture whose last rank lost its collectives, and a capture
// with its service folder.
func generatedInputs(t *testing.T) []roundTripInput {
	var ins []roundTripInput
	s := testutil.Scenario(t, "ep-fc1-cumsum-steps")
	s.Ranks, s.Steps, s.Layers = 2, 2, 2
	for _, lay := range append(tracegen.Layouts(), tracegen.MoreLayouts()...) {
		dir, _ := testutil.GenerateLayout(t, s, lay)
		ins = append(ins, roundTripInput{"generated/" + string(lay), dir})
	}
	dir, truth := testutil.Generate(t, s)
	trace := filepath.Join(dir, truth.Ranks[1].Dir, tracegen.OutputDir, "trace_view.json")
	b, err := os.ReadFile(trace)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(trace, b[:len(b)*3/5], 0o644))
	ins = append(ins, roundTripInput{"generated/rank-1-cut", dir})

	h := testutil.Scenario(t, "hot-experts")
	h.Ranks, h.HotRank, h.Steps = 4, 1, 2
	dir, _ = testutil.Generate(t, h)
	ins = append(ins, roundTripInput{"generated/hot-experts", dir})
	dir, _, _ = testutil.NoCommCapture(t, 2)
	ins = append(ins, roundTripInput{"generated/no-collectives-rank-1", dir})

	// a capture with the service folder of its run beside the rank (the
	// export carries the service tables; analyze reads them back)
	dir = t.TempDir()
	_, err = tracegen.GenerateRank(filepath.Join(dir, "rank0_ascend_pt"), tracegen.FieldReport2()[0], 0)
	require.NoError(t, err)
	_, err = tracegen.GenerateService(filepath.Join(dir, "service"), tracegen.ServiceScenarios()[2], tracegen.ServiceMillis)
	require.NoError(t, err)
	return append(ins, roundTripInput{"generated/service", dir})
}

func decodeDoc(t *testing.T, doc string) map[string]any {
	t.Helper()
	d := json.NewDecoder(strings.NewReader(doc))
	d.UseNumber()
	var m map[string]any
	require.NoError(t, d.Decode(&m))
	return m
}

func docRanks(doc map[string]any) []map[string]any {
	var out []map[string]any
	for _, r := range asList(doc["ranks"]) {
		if m, ok := r.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}

// compareJSON lists every difference between two decoded JSON values, by
// path (ranks[2].metrics.kernel.compute.time_us).
func compareJSON(path string, a, b any) []string {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok {
			return []string{fmt.Sprintf("%s: %s, want %s", path, short(b), short(a))}
		}
		keys := make([]string, 0, len(x)+len(y))
		for k := range x {
			keys = append(keys, k)
		}
		for k := range y {
			if _, ok := x[k]; !ok {
				keys = append(keys, k)
			}
		}
		slices.Sort(keys)
		var out []string
		for _, k := range keys {
			p := k
			if path != "" {
				p = path + "." + k
			}
			va, inA := x[k]
			vb, inB := y[k]
			switch {
			case !inB:
				out = append(out, fmt.Sprintf("%s: missing from the export's analysis (was %s)", p, short(va)))
			case !inA:
				out = append(out, fmt.Sprintf("%s: only in the export's analysis (%s)", p, short(vb)))
			default:
				out = append(out, compareJSON(p, va, vb)...)
			}
		}
		return out
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return []string{fmt.Sprintf("%s: %s, want %s", path, short(b), short(a))}
		}
		var out []string
		for i := range x {
			out = append(out, compareJSON(fmt.Sprintf("%s[%d]", path, i), x[i], y[i])...)
		}
		return out
	}
	if fmt.Sprint(a) != fmt.Sprint(b) || fmt.Sprintf("%T", a) != fmt.Sprintf("%T", b) {
		return []string{fmt.Sprintf("%s: %s, want %s", path, short(b), short(a))}
	}
	return nil
}

// short is a JSON value as text, cut to 200 bytes.
func short(v any) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Sprint(v)
	}
	s := strings.TrimSpace(buf.String())
	if len(s) > 200 {
		s = s[:200] + "..."
	}
	return s
}

// The allow-list names each difference once, with a reason, and is the
// list docs/parquet.md gives users (its table of what may differ).
func TestExportDifferencesDocumented(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "parquet.md"))
	require.NoError(t, err)
	var fields []string
	for _, d := range exportDifferences {
		require.NotEmpty(t, d.why, d.field)
		fields = append(fields, d.field)
		var cells []string
		for _, f := range strings.Split(d.field, ", ") {
			name, paren, _ := strings.Cut(f, " (")
			cell := "`" + name + "`"
			if paren != "" {
				cell += " (" + paren
			}
			cells = append(cells, cell)
		}
		require.Contains(t, string(doc), "\n| "+strings.Join(cells, ", ")+" | ", "docs/parquet.md lists %s among what may differ", d.field)
	}
	require.Equal(t, len(fields), len(slices.Compact(slices.Clone(fields))))
}

// metricV11 is the metrics row of npuprof.parquet/v1.1, before source.
type metricV11 struct {
	Name        string   `parquet:"name,dict"`
	Value       *float64 `parquet:"value,optional"`
	Unavailable *string  `parquet:"unavailable,optional"`
}

// asV11Export rewrites the export pq as an npuprof of schema v1.1 wrote it
// before sources["device"]: no DeviceFile in have_json, no metrics source
// column, no device_file, no expert loads in the manifest.
func asV11Export(t *testing.T, pq string) {
	t.Helper()
	ranks, err := parquetio.Ranks(pq)
	require.NoError(t, err)
	for _, rk := range ranks {
		f := parquetio.PartFile(pq, parquetio.TableRanks, rk)
		rows, err := parquet.ReadFile[parquetio.Rank](f)
		require.NoError(t, err)
		require.Len(t, rows, 1)
		var have map[string]any
		require.NoError(t, json.Unmarshal([]byte(rows[0].HaveJSON), &have))
		require.Contains(t, have, "DeviceFile")
		delete(have, "DeviceFile")
		delete(have, "DeviceNote")
		b, err := json.Marshal(have)
		require.NoError(t, err)
		// (device_file, which the reader never reads, is emptied)
		rows[0].HaveJSON, rows[0].Schema, rows[0].DeviceFile = string(b), "npuprof.parquet/v1.1", ""
		rows[0].GroupsJSON = groupsV1(t, pq, rk)
		require.NoError(t, parquet.WriteFile(f, rows))
		f = parquetio.PartFile(pq, parquetio.TableMetrics, rk)
		ms, err := parquet.ReadFile[parquetio.Metric](f)
		require.NoError(t, err)
		var old []metricV11
		for _, m := range ms {
			old = append(old, metricV11{Name: m.Name, Value: m.Value, Unavailable: m.Unavailable})
		}
		require.NoError(t, parquet.WriteFile(f, old))
	}
	dropNodeTables(t, pq)
	paths, err := filepath.Glob(filepath.Join(pq, parquetio.ManifestDir, "export*.json"))
	require.NoError(t, err)
	require.Len(t, paths, 1)
	b, err := os.ReadFile(paths[0])
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(b, &m))
	m["schema"] = "npuprof.parquet/v1.1"
	delete(m, "experts")
	delete(m, "experts_note")
	b, err = json.Marshal(m)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(paths[0], b, 0o644))
}

// An export of the previous schema minor (v1.1, and before it recorded
// sources["device"]) still reads, and what it lacks is said, not guessed:
// each rank's unavailable["device"] says the export does not record the
// device's source (the device itself is kept), a note says expert loads of
// the profile folder are not in it, and the cluster's experts.* metrics
// are unavailable (never 0). Everything else equals the capture's analysis.
func TestExportRoundTripV11(t *testing.T) {
	h := testutil.Scenario(t, "hot-experts")
	h.Ranks, h.HotRank, h.Steps = 4, 1, 2
	in, _ := testutil.Generate(t, h)
	docA, docB, diffs := exportDocs(t, in, func(pq string) { asV11Export(t, pq) })
	// what the v1.1 export lacks, said
	for i, r := range docRanks(docB) {
		why := r["unavailable"].(map[string]any)["device"]
		require.Equal(t, fmt.Sprintf("the source of device %v: not recorded by this export (npuprof.parquet/v1.1, written before exports recorded which file named the device)",
			r["device"]), why, "rank %d", i)
		ra := docRanks(docA)[i]
		require.NotNil(t, ra["sources"].(map[string]any)["device"])
		delete(ra["sources"].(map[string]any), "device")
		ra["unavailable"].(map[string]any)["device"] = why
	}
	notes := asList(docB["notes"])
	require.Equal(t, fmt.Sprintf("this export (written before npuprof.parquet/v1.2) does not carry the expert loads of the profile folder it was exported from (%s), if it had any: give --experts PATH", in),
		notes[len(notes)-1])
	require.Contains(t, fmt.Sprint(docA["notes"]), "expert loads read from ")
	docA["notes"] = notes
	ca, cb := docA["cluster"].(map[string]any), docB["cluster"].(map[string]any)
	for _, k := range []string{"experts.count", "experts.imbalance.max", "experts.eplb.max_load.reduction"} {
		require.Contains(t, ca["metrics"], k)
		require.NotContains(t, cb["metrics"], k, "not 0: unavailable")
		require.Contains(t, cb["unavailable"].(map[string]any)[k], "no per-expert loads", k)
	}
	diffs = append(diffs, compareJSON("", docA["ranks"], docB["ranks"])...)
	require.Empty(t, diffs)
}

// The export carries each rank's sources (v1.2): every metric row of the
// metrics table has the source the document's ranks[].sources gives that
// metric (null when it gives none), and ranks.device_file is
// sources["device"]. Rows are only metrics: none without a value or a
// reason.
func TestExportMetricsSources(t *testing.T) {
	s := testutil.Scenario(t, "ep-fc1-cumsum-steps")
	s.Ranks, s.Steps, s.Layers = 2, 2, 2
	gen, _ := testutil.GenerateLayout(t, s, tracegen.LayoutSummariesHalf)
	for _, in := range []string{filepath.Join("..", "..", "testdata", "traces", "ep-fc1-cumsum"), gen} {
		code, a, errs := run("analyze", in, "--format", "json")
		require.Equal(t, ExitOK, code, errs)
		pq := filepath.Join(t.TempDir(), "pq")
		code, _, errs = run("export", in, "-o", pq, "-q")
		require.Equal(t, ExitOK, code, errs)
		for i, r := range docRanks(decodeDoc(t, a)) {
			src := r["sources"].(map[string]any)
			meta, err := parquet.ReadFile[parquetio.Rank](parquetio.PartFile(pq, parquetio.TableRanks, i))
			require.NoError(t, err)
			if r["device"] != nil {
				require.NotEmpty(t, src["device"], "rank %d", i)
			}
			require.Equal(t, fmt.Sprint(src["device"]), fmt.Sprint(orNil(meta[0].DeviceFile)), "%s rank %d: ranks.device_file", in, i)
			rows, err := parquet.ReadFile[parquetio.Metric](parquetio.PartFile(pq, parquetio.TableMetrics, i))
			require.NoError(t, err)
			withSource := 0
			for _, m := range rows {
				require.True(t, m.Value != nil || m.Unavailable != nil, "%s: a row is a metric, with a value or a reason", m.Name)
				var got any
				if m.Source != nil {
					got, withSource = *m.Source, withSource+1
				}
				require.Equal(t, src[m.Name], got, "%s rank %d: %s", in, i, m.Name)
			}
			require.Greater(t, withSource, 10, "rank %d", i)
		}
	}
}

// orNil is s, or nil when empty.
func orNil(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// The expert loads an export carries are of one stage: asked for another,
// analyze of the export reads none and says why.
func TestExportExpertsOtherStage(t *testing.T) {
	h := testutil.Scenario(t, "hot-experts")
	h.Ranks, h.HotRank, h.Steps = 4, 1, 2
	in, _ := testutil.Generate(t, h)
	pq := filepath.Join(t.TempDir(), "pq")
	code, _, errs := run("export", in, "-o", pq, "-q")
	require.Equal(t, ExitOK, code, errs)
	code, out, errs := run("analyze", pq, "--format", "json", "--stage", "prefill")
	require.Equal(t, ExitOK, code, errs)
	doc := decodeDoc(t, out)
	require.Contains(t, asList(doc["notes"]), fmt.Sprintf("the export carries the decode expert loads of %s, not --stage prefill: give --experts PATH", filepath.Join(in, "expert_hotspot")))
	require.NotContains(t, doc["cluster"].(map[string]any)["metrics"], "experts.count")
}
