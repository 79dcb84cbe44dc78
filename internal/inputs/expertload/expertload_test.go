package expertload

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/npuprof/npuprof/internal/errkind"
	"github.com/npuprof/npuprof/internal/parser/model"
	"github.com/npuprof/npuprof/internal/testutil"
)

const (
	hotspotRel    = "Ascend-msinsight/server/src/test/test_data/expert_hotspot"
	deploymentRel = "Ascend-msinsight/server/src/test/test_data/expert_deployment/prefill_global_deployment.json"
	vaMapRel      = "vllm-project-vllm-ascend/tests/ut/eplb/core/a2/expert_map.json"
)

// readRows parses a dump with encoding/csv, independently of ReadDump.
func readRows(t *testing.T, p string) [][]int64 {
	t.Helper()
	f, err := os.Open(p)
	require.NoError(t, err)
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	require.NoError(t, err)
	var rows [][]int64
	for _, rec := range recs {
		var row []int64
		for _, c := range rec {
			v, err := strconv.ParseInt(c, 10, 64)
			require.NoError(t, err)
			row = append(row, v)
		}
		rows = append(rows, row)
	}
	return rows
}

// The real MindIE sample: layers, slots and totals match the files.
func TestMindIESample(t *testing.T) {
	dir := testutil.Sample(t, hotspotRel)
	for _, stage := range []string{"decode", "prefill"} {
		t.Run(stage, func(t *testing.T) {
			want := readRows(t, filepath.Join(dir, stage+"_0.csv"))
			x, err := Load(dir, Options{Stage: stage})
			require.NoError(t, err)
			assert.Equal(t, model.ExpertFormatMindIEDump, x.Format)
			assert.Equal(t, stage, x.Stage)
			require.NotNil(t, x.Config)
			assert.Equal(t, 59, x.Config.NumMoELayers)
			assert.Equal(t, 256, x.Config.NumExperts)
			assert.Equal(t, 8, x.Config.NumSelectedExperts)
			// 58 lines in the file (fewer than num_moe_layers=59): all kept.
			require.Len(t, x.Layers, len(want))
			require.Len(t, want, 58)
			assert.Equal(t, []int{0}, x.RankIDs)
			// No deployment of this stage matches: expert ids are the slots.
			assert.Equal(t, 4, x.NumExperts)
			assert.Nil(t, x.Observed)
			var total, fileTotal int64
			for l, row := range want {
				assert.Equal(t, l, x.Layers[l].ID)
				assert.Equal(t, row, x.Layers[l].Tokens, "layer %d", l)
				var s int64
				for _, v := range row {
					s += v
				}
				assert.Equal(t, []int64{s}, x.Layers[l].RankTokens)
				total += x.Layers[l].Total()
				fileTotal += s
			}
			assert.Equal(t, fileTotal, total)
			notes := strings.Join(x.Notes, "\n")
			assert.Contains(t, notes, "fewer than the 59 MoE layers")
			assert.Contains(t, notes, "expert ids are slot positions")
			assert.Contains(t, notes, "model_gen_config.json says 256 experts")
		})
	}
	x, err := Load(dir, Options{})
	require.NoError(t, err)
	assert.Equal(t, "decode", x.Stage, "decode is preferred")
	assert.Contains(t, strings.Join(x.Notes, "\n"), "prefill dumps also present")
	assert.Len(t, x.Files, 2)
	// Totals the test knows independently: decode 14,697,255 tokens.
	var total int64
	for i := range x.Layers {
		total += x.Layers[i].Total()
	}
	assert.Equal(t, int64(14697255), total)
}

// The real MindIE global deployment and the vLLM-Ascend fixture parse and
// round-trip through WriteDeployment.
func TestDeploymentSamples(t *testing.T) {
	p := testutil.Sample(t, deploymentRel)
	data, err := os.ReadFile(p)
	require.NoError(t, err)
	dep, notes, err := ReadDeployment(bytes.NewReader(data), p)
	require.NoError(t, err)
	require.Len(t, dep.Layers, 58)
	assert.Equal(t, 64, dep.Ranks())
	assert.Equal(t, 5, dep.SlotsPerRank())
	assert.True(t, dep.Uniform())
	// Independent decode: every device list equals the file's.
	var raw struct {
		LayerList []struct {
			LayerID    int `json:"layer_id"`
			DeviceList []struct {
				DeviceID     int   `json:"device_id"`
				DeviceExpert []int `json:"device_expert"`
			} `json:"device_list"`
		} `json:"layer_list"`
	}
	require.NoError(t, json.Unmarshal(data, &raw))
	for i, l := range raw.LayerList {
		assert.Equal(t, l.LayerID, dep.Layers[i].ID)
		for _, d := range l.DeviceList {
			assert.Equal(t, d.DeviceExpert, dep.Layers[i].Devices[d.DeviceID])
		}
	}
	// Device 63 of the last layer holds expert 255 twice in the real file.
	assert.Equal(t, []int{255, 67, 255, 121, 88}, dep.Layers[57].Devices[63])
	assert.Contains(t, strings.Join(notes, "\n"), "hold the same expert twice")

	var buf bytes.Buffer
	require.NoError(t, WriteDeployment(&buf, dep))
	back, _, err := ReadDeployment(&buf, "roundtrip")
	require.NoError(t, err)
	assert.Equal(t, dep, back)

	va := testutil.Sample(t, vaMapRel)
	f, err := os.Open(va)
	require.NoError(t, err)
	defer f.Close()
	vd, vnotes, err := ReadDeployment(f, va)
	require.NoError(t, err)
	assert.Empty(t, vnotes)
	require.Len(t, vd.Layers, 1)
	assert.Equal(t, [][]int{{7, 2, 0, 3, 5}, {6, 1, 4, 7, 2}}, vd.Layers[0].Devices)
}

// WriteDeployment's bytes have the shape of vLLM-Ascend's json.dump(indent=4).
func TestWriteDeploymentShape(t *testing.T) {
	var buf bytes.Buffer
	require.NoError(t, WriteDeployment(&buf, &model.Deployment{Layers: []model.DeploymentLayer{{ID: 3, Devices: [][]int{{1, 0}, {2, 1}}}}}))
	want := `{
    "moe_layer_count": 1,
    "layer_list": [
        {
            "layer_id": 0,
            "device_count": 2,
            "device_list": [
                {
                    "device_id": 0,
                    "device_expert": [
                        1,
                        0
                    ]
                },
                {
                    "device_id": 1,
                    "device_expert": [
                        2,
                        1
                    ]
                }
            ]
        }
    ]
}
`
	assert.Equal(t, want, buf.String())
}

func TestReadDumpAppended(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "appended_decode_0.csv"))
	require.NoError(t, err)
	rows, dropped, err := ReadDump(bytes.NewReader(data), "appended", 2)
	require.NoError(t, err)
	assert.Equal(t, 2, dropped)
	assert.Equal(t, [][]int64{{100, 200, 300, 400}, {10, 20, 30, 40}}, rows)
	rows, dropped, err = ReadDump(bytes.NewReader(data), "appended", 0)
	require.NoError(t, err)
	assert.Equal(t, 0, dropped)
	assert.Len(t, rows, 4)
	// CRLF and a trailing blank line
	rows, _, err = ReadDump(strings.NewReader("1, 2\r\n3,4\r\n\r\n"), "crlf", 0)
	require.NoError(t, err)
	assert.Equal(t, [][]int64{{1, 2}, {3, 4}}, rows)
}

func TestReadDumpErrors(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"", "x.csv: empty"},
		{"\n\n", "x.csv: empty"},
		{"1,2,3\n4,5\n", "x.csv:2: 2 slots, but the first line has 3"},
		{"1,a,3\n", `x.csv:1: expected comma-separated token counts per expert slot: "a" is not a whole number`},
		{"1,-2\n", "negative count"},
		{"1.5,2\n", "not a whole number"},
		{"99999999999999999999,2\n", `"99999999999999999999" is too large (more than 9223372036854775807)`},
		{"layer,expert,tokens\n", "x.csv:1"},
		{strings.Repeat("1", maxLineBytes+10), "line too long"},
	} {
		_, _, err := ReadDump(strings.NewReader(c.in), "x.csv", 0)
		if assert.Error(t, err, c.in) {
			assert.Contains(t, err.Error(), c.want)
		}
	}
}

func TestReadDeploymentErrors(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{``, "expected an expert-map JSON"},
		{`[]`, "expected an expert-map JSON"},
		{`{"moe_layer_count": 1}`, `no "layer_list"`},
		{`{"layer_list": [{"device_list": []}]}`, `no "layer_id"`},
		{`{"layer_list": [{"layer_id": 0, "device_list": []}]}`, `empty "device_list"`},
		{`{"layer_list": [{"layer_id": 0, "device_list": [{"device_id": 1, "device_expert": [0]}]}]}`, "device_id 1: expected each of 0..0 once"},
		{`{"layer_list": [{"layer_id": 0, "device_list": [{"device_id": 0, "device_expert": []}]}]}`, "must list"},
		{`{"layer_list": [{"layer_id": 0, "device_list": [{"device_id": 0, "device_expert": [-1]}]}]}`, "expert id -1 out of range"},
		{`{"layer_list": [{"layer_id": 0, "device_list": [{"device_id": 0, "device_expert": [0]}]}, {"layer_id": 0, "device_list": [{"device_id": 0, "device_expert": [0]}]}]}`, "negative or repeated"},
	} {
		_, _, err := ReadDeployment(strings.NewReader(c.in), "m.json")
		if assert.Error(t, err, c.in) {
			assert.Contains(t, err.Error(), c.want)
		}
	}
	_, notes, err := ReadDeployment(strings.NewReader(`{"moe_layer_count": 2, "layer_list": [{"layer_id": 0, "device_count": 3, "device_list": [{"device_id": 0, "device_expert": [0, 1]}, {"device_id": 1, "device_expert": [2]}]}]}`), "m.json")
	require.NoError(t, err)
	all := strings.Join(notes, "\n")
	assert.Contains(t, all, "device_count 3 but 2 devices listed")
	assert.Contains(t, all, "moe_layer_count 2 but 1 layers listed")
	assert.Contains(t, all, "differ in slot count")
}

func TestReadLoadCSV(t *testing.T) {
	f, err := os.Open(filepath.Join("testdata", "loads.csv"))
	require.NoError(t, err)
	defer f.Close()
	x, err := ReadLoadCSV(f, "loads.csv")
	require.NoError(t, err)
	assert.Equal(t, 4, x.NumExperts)
	require.Len(t, x.Layers, 2)
	assert.Equal(t, []int64{10, 30, 20, 20}, x.Layers[0].Tokens)
	assert.Equal(t, []int64{5, 5, 5, 45}, x.Layers[1].Tokens)
	assert.Nil(t, x.Observed)

	// Any column order, extra columns, sparse experts and layers.
	x, err = ReadLoadCSV(strings.NewReader("Tokens, rank ,Layer,Expert\n7,0,3,2\n9,1,5,0\n"), "s.csv")
	require.NoError(t, err)
	assert.Equal(t, 3, x.NumExperts)
	// (layer 3 has no row for experts 0 and 1, layer 5 none for 1 and 2)
	assert.Equal(t, []bool{false, false, false}, x.Observed)
	assert.Equal(t, 3, x.Layers[0].ID)
	assert.Equal(t, []int64{0, 0, 7}, x.Layers[0].Tokens)
	assert.Contains(t, strings.Join(x.Notes, "\n"), "expert(s) 1 appear in no row")
	assert.Contains(t, strings.Join(x.Notes, "\n"), "expert(s) 0, 2 have rows in some layers only (2 of the 2 layers lack a row for one of them)")
	assert.Contains(t, strings.Join(x.Notes, "\n"), "layer ids run 3..5")

	for _, c := range []struct{ in, want string }{
		{"", "empty"},
		{"a,b,c\n1,2,3\n", "expected the header layer,expert,tokens"},
		{"layer,expert,tokens\n", "no rows"},
		{"layer,expert,tokens\n0,1\n", "s.csv:2: 2 cells"},
		{"layer,expert,tokens\n0,1,x\n", "s.csv:2: tokens"},
		{"layer,expert,tokens\n0,99999999,1\n", "out of range"},
	} {
		_, err := ReadLoadCSV(strings.NewReader(c.in), "s.csv")
		if assert.Error(t, err, c.in) {
			assert.Contains(t, err.Error(), c.want)
		}
	}
}

// An expert without a row in some layer of a layer,expert,tokens CSV that
// other layers have has an unknown load there, not 0 tokens: it is
// unobserved, with a note saying so. A row with tokens 0 is a known 0,
// and the CSV stays whole.
func TestReadLoadCSVMissingRow(t *testing.T) {
	x, err := ReadLoadCSV(strings.NewReader("layer,expert,tokens\n0,0,10\n0,1,20\n0,2,30\n1,0,5\n1,2,7\n2,0,1\n2,1,1\n2,2,1\n"), "gap.csv")
	require.NoError(t, err)
	require.NoError(t, x.Validate())
	assert.Equal(t, 3, x.NumExperts)
	assert.Equal(t, []bool{true, false, true}, x.Observed)
	assert.Equal(t, []int64{5, 0, 7}, x.Layers[1].Tokens)
	assert.Contains(t, x.Notes, "gap.csv: expert(s) 1 have rows in some layers only (1 of the 3 layers lack a row for one of them): "+
		"their load is unknown, not 0 tokens (a row with tokens 0 says an expert got none)")

	// the same loads with the 0 written: whole
	x, err = ReadLoadCSV(strings.NewReader("layer,expert,tokens\n0,0,10\n0,1,20\n0,2,30\n1,0,5\n1,1,0\n1,2,7\n2,0,1\n2,1,1\n2,2,1\n"), "zero.csv")
	require.NoError(t, err)
	assert.Nil(t, x.Observed)
	assert.Empty(t, x.Notes)
	assert.Equal(t, []int64{5, 0, 7}, x.Layers[1].Tokens)

	// an id missing from every layer (ids not 0..N-1) and one missing
	// from one layer: both unobserved, each with its note
	x, err = ReadLoadCSV(strings.NewReader("layer,expert,tokens\n0,0,4\n0,1,4\n0,3,4\n1,0,4\n1,3,4\n"), "ids.csv")
	require.NoError(t, err)
	assert.Equal(t, []bool{true, false, false, true}, x.Observed)
	assert.Contains(t, x.Notes, "ids.csv: expert(s) 2 appear in no row: their load is unknown")
	assert.Contains(t, strings.Join(x.Notes, "\n"), "ids.csv: expert(s) 1 have rows in some layers only (1 of the 2 layers lack")
}

// A model_gen_config.json beside a layer,expert,tokens CSV gives the
// model's expert count: experts past the CSV's highest id have no row and
// an unknown load. Read with the CSV named or its folder.
func TestLoadCSVWithGenConfig(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "loads.csv")
	require.NoError(t, os.WriteFile(p, []byte("layer,expert,tokens\n0,0,3\n0,1,1\n1,0,2\n1,1,2\n"), 0o644))
	for _, in := range []string{p, dir} {
		x, err := Load(in, Options{})
		require.NoError(t, err, in)
		assert.Equal(t, 2, x.NumExperts, in)
		assert.Nil(t, x.Observed, in)
		assert.Equal(t, []string{p}, x.Files, in)
	}
	cfg := filepath.Join(dir, "model_gen_config.json")
	require.NoError(t, os.WriteFile(cfg, []byte(`{"num_moe_layers": 2, "num_of_experts": 4}`), 0o644))
	for _, in := range []string{p, dir} {
		x, err := Load(in, Options{})
		require.NoError(t, err, in)
		assert.Equal(t, 4, x.NumExperts, in)
		assert.Equal(t, []bool{true, true, false, false}, x.Observed, in)
		assert.Equal(t, []int64{3, 1, 0, 0}, x.Layers[0].Tokens, in)
		assert.Equal(t, []string{p, cfg}, x.Files, in)
		assert.Contains(t, x.Notes, cfg+": num_of_experts is 4, the CSV's expert ids stop at 1: expert(s) 2..3 have no row, their load is unknown", in)
	}
	require.NoError(t, os.WriteFile(cfg, []byte(`{"num_moe_layers": 2, "num_of_experts": 1}`), 0o644))
	x, err := Load(p, Options{})
	require.NoError(t, err)
	assert.Equal(t, 2, x.NumExperts)
	assert.Nil(t, x.Observed)
	assert.Contains(t, x.Notes, cfg+": num_of_experts is 1, but the CSV has expert ids up to 1: read 2 experts")
}

func TestReadLog(t *testing.T) {
	var logs []model.ExpertLog
	f, err := os.Open(filepath.Join("testdata", "vllm-ascend.log"))
	require.NoError(t, err)
	defer f.Close()
	st, err := ReadLog(f, "va.log", func(e model.ExpertLog) { logs = append(logs, e) })
	require.NoError(t, err)
	assert.Equal(t, 8, st.Lines)
	assert.Equal(t, 1, st.NonFinite)
	require.Len(t, logs, 6)
	assert.Equal(t, model.ExpertLog{File: "va.log", Line: 2, Kind: model.LogMoELoadStatsLayer, Layer: 0, Values: map[string]float64{"par": 1.2315}}, logs[0])
	assert.Equal(t, 1, logs[1].Layer)
	assert.Equal(t, model.ExpertLog{File: "va.log", Line: 5, Kind: model.LogMoELoadStats, Layer: -1,
		Values: map[string]float64{"mean": 1.3788, "max": 1.8042, "min": 1.1007}}, logs[3])
	assert.Equal(t, model.LogExpertHotness, logs[4].Kind)
	assert.Equal(t, map[string]float64{"mean": 1.412, "max": 2.050, "updated_mean": 1.061, "updated_max": 1.127}, logs[4].Values)
	assert.Equal(t, model.LogHotnessImbalance, logs[5].Kind)
	assert.Equal(t, map[string]float64{"mean": 1.377, "max": 1.912, "updated_mean": 1.048, "updated_max": 1.101}, logs[5].Values)

	logs = nil
	g, err := os.Open(filepath.Join("testdata", "vllm-eplb.log"))
	require.NoError(t, err)
	defer g.Close()
	_, err = ReadLog(g, "v.log", func(e model.ExpertLog) { logs = append(logs, e) })
	require.NoError(t, err)
	require.Len(t, logs, 3)
	assert.Equal(t, map[string]float64{"avg_tokens": 5214.38, "max_tokens": 7901, "balancedness": 0.66}, logs[1].Values)
	assert.Equal(t, "", logs[1].Model)
	assert.Equal(t, "Qwen/Qwen3-30B-A3B", logs[2].Model)
	assert.Equal(t, map[string]float64{"avg_tokens": 4096, "max_tokens": 5120, "balancedness": 0.8}, logs[2].Values)

	// A long line is skipped, not fatal.
	long := strings.Repeat("x", maxLineBytes+5) + "\n" + "[ModelRunner][MOE_load_stats][Layer 7] PAR=1.5000\n"
	logs = nil
	_, err = ReadLog(strings.NewReader(long), "l.log", func(e model.ExpertLog) { logs = append(logs, e) })
	require.NoError(t, err)
	require.Len(t, logs, 1)
	assert.Equal(t, 2, logs[0].Line)
}

func TestLoadPaths(t *testing.T) {
	dir := t.TempDir()
	write := func(name, data string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(data), 0o644))
		return p
	}
	_, err := Load(filepath.Join(dir, "nope"), Options{})
	require.True(t, errkind.Is(err, errkind.Input))
	assert.Contains(t, err.Error(), "no such file")

	_, err = Load(dir, Options{})
	require.True(t, errkind.Is(err, errkind.Input))
	assert.Contains(t, err.Error(), "no expert load files; expected MindIE dumps")

	// Two ranks, appended dumps, a config and a matching deployment with a
	// redundant copy of expert 0 on rank 1.
	write("hot/model_gen_config.json", `{"num_moe_layers": 2, "collection_Interval": 8, "num_of_experts": 3, "num_of_selected_experts": 2, "num_dangling_shared_experts": 0}`)
	write("hot/decode_0.csv", "9,9\n9,9\n1,2\n3,4\n")
	write("hot/decode_1.csv", "5,6\n7,8\n")
	write("hot/decode_global_deployment.json", `{"moe_layer_count": 2, "layer_list": [
		{"layer_id": 0, "device_count": 2, "device_list": [{"device_id": 0, "device_expert": [0, 1]}, {"device_id": 1, "device_expert": [2, 0]}]},
		{"layer_id": 1, "device_count": 2, "device_list": [{"device_id": 1, "device_expert": [1, 2]}, {"device_id": 0, "device_expert": [0, 2]}]}]}`)
	write("hot/serve.log", "[ModelRunner][MOE_load_stats] Peak-to-Average-Ratio: Mean=1.1000, Max=1.2000, Min=1.0000\n")
	x, err := Load(filepath.Join(dir, "hot"), Options{})
	require.NoError(t, err)
	assert.Equal(t, 3, x.NumExperts)
	assert.Equal(t, []int{0, 1}, x.RankIDs)
	require.Len(t, x.Layers, 2)
	// layer 0: rank0 [0:1, 1:2], rank1 [2:5, 0:6]
	assert.Equal(t, []int64{7, 2, 5}, x.Layers[0].Tokens)
	assert.Equal(t, []int64{3, 11}, x.Layers[0].RankTokens)
	// layer 1: rank0 [0:3, 2:4], rank1 [1:7, 2:8]
	assert.Equal(t, []int64{3, 7, 12}, x.Layers[1].Tokens)
	assert.Equal(t, []int64{7, 15}, x.Layers[1].RankTokens)
	require.NotNil(t, x.Placement)
	assert.Equal(t, []int{0, 2}, x.Placement.Layers[1].Devices[0])
	require.Len(t, x.Logs, 1)
	assert.Contains(t, strings.Join(x.Notes, "\n"), "appended dumps in 1 file(s) (decode_0.csv): kept the last 2 lines of each, dropped 2 earlier line(s)")
	assert.Equal(t, filepath.Join(dir, "hot"), Find(dir), "found one folder below the profile")

	// One dump file named directly.
	x, err = Load(filepath.Join(dir, "hot", "decode_1.csv"), Options{})
	require.NoError(t, err)
	assert.Equal(t, []int{1}, x.RankIDs)
	// rank 1 hosts expert 0 only in layer 0 and expert 1 only in layer 1
	assert.Equal(t, []bool{false, false, true}, x.Observed)
	_, err = Load(filepath.Join(dir, "hot", "decode_1.csv"), Options{Stage: "prefill"})
	assert.Contains(t, err.Error(), "a decode dump, but stage prefill")
	_, err = Load(filepath.Join(dir, "hot"), Options{Stage: "prefill"})
	assert.Contains(t, err.Error(), "no prefill_{rank}.csv dumps (found decode)")
	_, err = Load(filepath.Join(dir, "hot"), Options{Stage: "both"})
	assert.Contains(t, err.Error(), `stage "both"`)
	_, err = Load(filepath.Join(dir, "hot", "decode_global_deployment.json"), Options{})
	assert.Contains(t, err.Error(), "holds no loads")

	// Dumps of different shapes.
	write("bad/decode_0.csv", "1,2\n")
	write("bad/decode_1.csv", "1,2,3\n")
	_, err = Load(filepath.Join(dir, "bad"), Options{})
	assert.Contains(t, err.Error(), "dumps of different runs?")

	// A log alone, a CSV alone.
	p := write("only.log", "nothing here\n")
	_, err = Load(p, Options{})
	assert.Contains(t, err.Error(), "no expert-imbalance log lines found")
	p = write("v.log", "EPLB step: avg_tokens=10.00, max_tokens=20, balancedness=0.5000\n")
	x, err = Load(p, Options{})
	require.NoError(t, err)
	assert.Equal(t, model.ExpertFormatLog, x.Format)
	assert.False(t, x.HasLoads())
	p = write("csv/l.csv", "layer,expert,tokens\n0,0,1\n0,1,3\n")
	x, err = Load(p, Options{})
	require.NoError(t, err)
	assert.Equal(t, []string{p}, x.Files)
	x, err = Load(filepath.Dir(p), Options{})
	require.NoError(t, err)
	assert.Equal(t, model.ExpertFormatCSV, x.Format)
	write("csv/m.csv", "layer,expert,tokens\n0,0,1\n")
	_, err = Load(filepath.Dir(p), Options{})
	assert.Contains(t, err.Error(), "several layer,expert,tokens CSVs")
}

// Find skips rank folders and returns "" when nothing is there.
func TestFind(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "x_ascend_pt"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "x_ascend_pt", "decode_0.csv"), []byte("1\n"), 0o644))
	assert.Equal(t, "", Find(dir))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "kernel.csv"), []byte("Name,Type\n"), 0o644))
	assert.Equal(t, "", Find(dir))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "expert_load.csv"), []byte("layer,expert,tokens\n0,0,1\n"), 0o644))
	assert.Equal(t, dir, Find(dir))
}

// Counts that each fit an int64 but whose sum does not: refused, naming
// the line (the layer total wrapped to a negative experts.tokens.count
// and the plan's predicted loads overflowed).
func TestTokenTotalBounded(t *testing.T) {
	big := "4611686018427387903" // 2^62-1
	_, err := ReadLoadCSV(strings.NewReader("layer,expert,tokens\n0,0,"+big+"\n0,1,"+big+"\n"), "big.csv")
	require.ErrorContains(t, err, "big.csv:2: more than 9007199254740992 tokens in total")
	_, _, err = ReadDump(strings.NewReader("1,2\n"+big+",1\n"), "decode_0.csv", 0)
	require.ErrorContains(t, err, "decode_0.csv:2: more than 9007199254740992 tokens in total")

	// each file below the bound, together above it
	dir := t.TempDir()
	half := "4503599627370496" // 2^52
	require.NoError(t, os.WriteFile(filepath.Join(dir, "decode_0.csv"), []byte(half+",1\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "decode_1.csv"), []byte(half+",1\n"), 0o644))
	_, err = Load(dir, Options{})
	require.True(t, errkind.Is(err, errkind.Input))
	require.ErrorContains(t, err, "more than 9007199254740992 tokens in total")

	// at the bound: read, exact
	x, err := ReadLoadCSV(strings.NewReader("layer,expert,tokens\n0,0,"+half+"\n0,1,"+half+"\n"), "ok.csv")
	require.NoError(t, err)
	require.Equal(t, int64(1)<<53, x.Layers[0].Total())
}

// The log patterns compile on first use: each one compiles.
func TestLogPatternsCompile(t *testing.T) {
	for _, p := range logPatterns {
		require.NotNil(t, p.re(), p.kind)
	}
}
