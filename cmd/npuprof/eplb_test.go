package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/npuprof/npuprof/internal/analysis/eplb"
	"github.com/npuprof/npuprof/internal/inputs/expertload"
	"github.com/npuprof/npuprof/internal/results"
	"github.com/npuprof/npuprof/internal/testutil"
	"github.com/npuprof/npuprof/internal/tracegen"
)

const hotspot = "Ascend-msinsight/server/src/test/test_data/expert_hotspot"

// wholeHotspot is the MindIE sample's dumps (rank 0, 4 slots, decode and
// prefill) with a model_gen_config.json of a 4-expert model, so they hold
// every expert's load: the sample's own config says 256 experts, of which
// one rank's dump covers 4, and a plan refuses it.
func wholeHotspot(t *testing.T) string {
	t.Helper()
	src := testutil.Sample(t, hotspot)
	dir := t.TempDir()
	for _, f := range []string{"decode_0.csv", "prefill_0.csv"} {
		b, err := os.ReadFile(filepath.Join(src, f))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, f), b, 0o644))
	}
	cfg := `{"num_moe_layers": 59, "collection_Interval": 8, "num_of_experts": 4, "num_of_selected_experts": 2, "num_dangling_shared_experts": 0}`
	require.NoError(t, os.WriteFile(filepath.Join(dir, "model_gen_config.json"), []byte(cfg), 0o644))
	return dir
}

// The plan for the real MindIE sample lowers the predicted max/mean,
// places every expert at least once, gives every rank the same number of
// slots with no expert twice, and reads back through the deployment reader.
func TestEPLBPlanMindIESample(t *testing.T) {
	dir := wholeHotspot(t)
	for _, c := range []struct {
		stage            string
		ranks, redundant string
	}{{"decode", "2", "2"}, {"prefill", "2", "2"}, {"decode", "4", "4"}, {"prefill", "2", "0"}} {
		t.Run(c.stage+"-ep"+c.ranks+"-r"+c.redundant, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "expert_map.json")
			code, stdout, stderr := run("eplb", "plan", "--experts", dir, "--stage", c.stage, "--ep-size", c.ranks, "--redundant", c.redundant, "-o", out)
			require.Equal(t, ExitOK, code, stderr)
			require.Empty(t, stderr)
			require.Contains(t, stdout, "wrote "+out)
			require.Contains(t, stdout, `"expert_map_path"`)

			f, err := os.Open(out)
			require.NoError(t, err)
			plan, notes, err := expertload.ReadDeployment(f, out)
			f.Close()
			require.NoError(t, err)
			require.Empty(t, notes)
			x, err := expertload.Load(dir, expertload.Options{Stage: c.stage})
			require.NoError(t, err)
			ranks, redundant := atoi(t, c.ranks), atoi(t, c.redundant)
			slots := (x.NumExperts + redundant) / ranks
			require.Len(t, plan.Layers, len(x.Layers))
			for l, layer := range plan.Layers {
				require.Equal(t, l, layer.ID)
				require.Len(t, layer.Devices, ranks)
				seen := map[int]int{}
				for _, dev := range layer.Devices {
					require.Len(t, dev, slots, "slots per rank")
					held := map[int]bool{}
					for _, e := range dev {
						require.False(t, held[e], "layer %d: expert %d twice on one rank", l, e)
						held[e] = true
						seen[e]++
					}
				}
				for e := 0; e < x.NumExperts; e++ {
					require.GreaterOrEqual(t, seen[e], 1, "layer %d: expert %d not placed", l, e)
				}
				total := 0
				for _, n := range seen {
					total += n
				}
				require.Equal(t, x.NumExperts+redundant, total)
			}
			// Predicted max/mean, computed here from the loads: after < before.
			tok := make([][]int64, len(x.Layers))
			for i, l := range x.Layers {
				tok[i] = l.Tokens
			}
			before, err := eplb.DefaultPlacement(x.NumExperts, ranks, 0, len(x.Layers))
			require.NoError(t, err)
			b, err := eplb.Predict(before, tok)
			require.NoError(t, err)
			a, err := eplb.Predict(plan, tok)
			require.NoError(t, err)
			require.Less(t, a.Max, b.Max)
			require.Less(t, a.Mean, b.Mean)
			require.Contains(t, stdout, "before (default layout)")
			require.Contains(t, stdout, fmt.Sprintf("%.3f", b.Max))
			require.Contains(t, stdout, fmt.Sprintf("%.3f", a.Max))
		})
	}
}

func atoi(t *testing.T, s string) int {
	n, err := strconv.Atoi(s)
	require.NoError(t, err)
	return n
}

// With -o - the plan goes to standard output and the summary to standard
// error; usage errors are exit code 2 with one line naming the problem.
func TestEPLBPlanStreamsAndErrors(t *testing.T) {
	dir := wholeHotspot(t)
	code, stdout, stderr := run("eplb", "plan", "--experts", dir, "--ep-size", "2")
	require.Equal(t, ExitOK, code, stderr)
	dep, _, err := expertload.ReadDeployment(strings.NewReader(stdout), "stdout")
	require.NoError(t, err)
	assert.Len(t, dep.Layers, 58)
	assert.Contains(t, stderr, "EP size 2, 2 redundant -> 3 slots per rank", "auto redundancy: one per rank")

	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"eplb", "plan"}, "--experts PATH is required"},
		{[]string{"eplb", "plan", "--experts", dir}, "the dumps cover one rank and no expert map gives the EP size; give --ep-size N"},
		{[]string{"eplb", "plan", "--experts", dir, "--ep-size", "2", "--redundant", "3"}, "not a multiple of EP size 2 (vLLM-Ascend requires it): use 2 or 4"},
		{[]string{"eplb", "plan", "--experts", dir, "--ep-size", "0"}, "--ep-size 0: out of range 1..65536"},
		// sizes are bounded before and after the input is read: a huge EP
		// size used to allocate one slot list per rank (1e9 of them)
		{[]string{"eplb", "plan", "--experts", dir, "--ep-size", "1000000000"}, "--ep-size 1000000000: out of range 1..65536 (a plan has at most one EP rank per expert"},
		{[]string{"eplb", "plan", "--experts", dir, "--ep-size", "-3"}, "--ep-size -3: out of range 1..65536"},
		{[]string{"eplb", "plan", "--experts", dir, "--ep-size", "99999999999999999999"}, "--ep-size 99999999999999999999: out of range: expected 1..65536"},
		{[]string{"eplb", "plan", "--experts", dir, "--ep-size", "5"}, "--ep-size 5: out of range 1..4: " + dir + " has 4 experts per layer, and every EP rank must hold at least one of them"},
		{[]string{"eplb", "plan", "--experts", dir, "--ep-size", "65536"}, "--ep-size 65536: out of range 1..4: "},
		{[]string{"eplb", "plan", "--experts", dir, "--ep-size", "2", "--redundant", "-1"}, "--redundant -1: out of range 0..experts x (EP size - 1)"},
		{[]string{"eplb", "plan", "--experts", dir, "--ep-size", "4", "--redundant", "1000"}, "--redundant 1000: out of range 0..12: each of the 4 experts has at most one copy per rank, so at most 3 redundant copies with EP size 4"},
		// near MaxInt64: experts + redundant used to overflow in the divisibility test
		{[]string{"eplb", "plan", "--experts", dir, "--ep-size", "2", "--redundant", "9223372036854775807"}, "--redundant 9223372036854775807: out of range 0..4"},
		{[]string{"eplb", "plan", "--experts", dir, "--stage", "both"}, `--stage "both"`},
		{[]string{"eplb", "plan", "--experts", "/no/such"}, "--experts /no/such: no such file"},
		{[]string{"eplb"}, "missing subcommand"},
	} {
		code, _, stderr := run(c.args...)
		assert.Equal(t, ExitUsage, code, c.args)
		assert.Contains(t, stderr, c.want, c.args)
		assert.Equal(t, 1, strings.Count(stderr, "\n"), stderr)
	}

	logOnly := filepath.Join(t.TempDir(), "serve.log")
	require.NoError(t, os.WriteFile(logOnly, []byte("[eplb/worker] Expert hotness imbalance, current: mean=1.200 max=1.500, updated: mean=1.010 max=1.050\n"), 0o644))
	code, _, stderr = run("eplb", "plan", "--experts", logOnly)
	assert.Equal(t, ExitUsage, code)
	assert.Contains(t, stderr, "only log lines")
}

// npuprof analyze on a generated hot-experts capture: the dump beside the
// profile is found, the JSON document carries the experts object with the
// truth's numbers and the plan command, and the summary names the hot rank.
func TestAnalyzeHotExperts(t *testing.T) {
	s := testutil.Scenario(t, "hot-experts")
	s.Layers, s.Steps = 3, 2
	dir, truth := testutil.Generate(t, s)

	code, out, errs := run("analyze", dir, "--detail", "tables")
	require.Equal(t, ExitOK, code, errs)
	require.Contains(t, out, "Expert load")
	require.Contains(t, out, "slowest rank 5")
	require.Contains(t, out, "expert loads read from "+filepath.Join(dir, tracegen.ExpertDumpDir))
	requireText(t, out, "npuprof eplb plan --experts "+filepath.Join(dir, tracegen.ExpertDumpDir)+" --redundant 8 -o expert_map.json")

	code, out, errs = run("analyze", dir, "--format", "json")
	require.Equal(t, ExitOK, code, errs)
	doc, err := results.Read(strings.NewReader(out), "doc")
	require.NoError(t, err)
	require.NotNil(t, doc.Experts)
	require.NotNil(t, doc.Cluster)
	for k, want := range truth.Experts.Metrics {
		require.InEpsilon(t, want+1e-12, doc.Cluster.Metrics[k]+1e-12, 1e-3, k)
	}
	require.Len(t, doc.Experts.Layers, 3)
	require.Len(t, doc.Experts.Layers[0].ExpertTokens, 128)
	require.Len(t, doc.Experts.EPRanks, 8)
	require.True(t, doc.Experts.EPRanks[5].Hot)
	require.NotNil(t, doc.Experts.EPLB)
	require.Less(t, doc.Experts.EPLB.After.Max, doc.Experts.EPLB.Before.Max)
	require.NotEmpty(t, doc.Experts.HotExperts)
	// the raw document keeps every pre-existing top-level key
	var raw map[string]json.RawMessage
	require.NoError(t, json.Unmarshal([]byte(out), &raw))
	for _, k := range []string{"schema", "input", "ranks", "findings", "cluster", "experts"} {
		require.Contains(t, raw, k)
	}

	// --experts pointing elsewhere wins; a bad one is a usage error.
	csv := filepath.Join(t.TempDir(), "loads.csv")
	require.NoError(t, os.WriteFile(csv, []byte("layer,expert,tokens\n0,0,30\n0,1,10\n"), 0o644))
	code, out, errs = run("analyze", dir, "--experts", csv, "--format", "json")
	require.Equal(t, ExitOK, code, errs)
	doc, err = results.Read(strings.NewReader(out), "doc")
	require.NoError(t, err)
	require.Equal(t, 1.5, doc.Cluster.Metrics["experts.imbalance.max"])
	code, _, errs = run("analyze", dir, "--experts", filepath.Join(dir, "nope"))
	require.Equal(t, ExitUsage, code)
	require.Contains(t, errs, "--experts "+filepath.Join(dir, "nope")+": no such file")
	code, _, _ = run("analyze", dir, "--stage", "x")
	require.Equal(t, ExitUsage, code)

	// the plan command the analysis suggests runs and writes a valid map
	var buf bytes.Buffer
	code = Main([]string{"eplb", "plan", "--experts", filepath.Join(dir, tracegen.ExpertDumpDir), "--redundant", "8"}, strings.NewReader(""), &buf, &bytes.Buffer{})
	require.Equal(t, ExitOK, code)
	plan, _, err := expertload.ReadDeployment(&buf, "plan")
	require.NoError(t, err)
	require.NoError(t, eplb.Check(plan, 128, 8, 17))
}

// The MindIE sample's config says 256 experts and its one dump (rank 0)
// covers 4 slots: a plan of those 4 as the whole model would be a map
// vLLM-Ascend cannot use, so the plan is refused at any EP size, naming
// what the dumps cover and what a plan needs, in English and in Chinese,
// and no map is written.
func TestEPLBPlanRefusesDumpsOfSomeRanks(t *testing.T) {
	dir := testutil.Sample(t, hotspot)
	want := "--experts " + dir + ": the dumps hold the loads of 4 of the model's 256 experts (model_gen_config.json num_of_experts), from 1 EP rank(s) of 4 slots: a plan and an expert's ratio to its layer's load need every expert's load (dumps of every EP rank: 64 or more at 4 slots each)"
	for _, ep := range []string{"2", "4", "64"} {
		out := filepath.Join(t.TempDir(), "expert_map.json")
		code, stdout, stderr := run("eplb", "plan", "--experts", dir, "--ep-size", ep, "-o", out)
		assert.Equal(t, ExitUsage, code, ep)
		assert.Empty(t, stdout, ep)
		assert.Contains(t, stderr, want, ep)
		assert.NoFileExists(t, out, ep)
	}
	code, _, stderr := run("eplb", "plan", "--experts", dir, "--ep-size", "2", "-o", "-", "--lang", "zh")
	assert.Equal(t, ExitUsage, code)
	assert.Contains(t, stderr, "--experts "+dir+"：dump 只含模型 256 个专家中 4 个的负载（model_gen_config.json num_of_experts），来自 1 个 EP rank（每个 4 个槽位）：方案以及专家占其层负载的比值都需要每个专家的负载（每个 EP rank 的 dump：每个 4 个槽位时需 64 个或更多）")
}

// A layer,expert,tokens CSV without a row for expert 1 in layer 1 (layer
// 0 has one) holds an unknown load there, not 0 tokens: eplb plan refuses
// it, saying which experts lack a row and what a plan needs, in English
// and in Chinese, and writes no map; with the 0 written it plans.
func TestEPLBPlanRefusesCSVWithoutARow(t *testing.T) {
	dir := t.TempDir()
	gap := filepath.Join(dir, "gap.csv")
	const rows = "layer,expert,tokens\n0,0,40\n0,1,10\n0,2,10\n0,3,20\n1,0,30\n1,2,10\n1,3,20\n"
	require.NoError(t, os.WriteFile(gap, []byte(rows), 0o644))
	out := filepath.Join(dir, "expert_map.json")
	code, stdout, stderr := run("eplb", "plan", "--experts", gap, "--ep-size", "2", "-o", out)
	assert.Equal(t, ExitUsage, code)
	assert.Empty(t, stdout)
	assert.Contains(t, stderr, "--experts "+gap+": the layer,expert,tokens CSV has no row for 1 of its 4 experts (ids 0..3) in some layer (expert(s) 1): "+
		"a missing row is an unknown load, not 0 tokens: a plan and an expert's ratio to its layer's load need every expert's load "+
		"(a row for every expert in every layer, tokens 0 for one that got none)")
	assert.NoFileExists(t, out)
	code, _, stderr = run("eplb", "plan", "--experts", gap, "--ep-size", "2", "-o", out, "--lang", "zh")
	assert.Equal(t, ExitUsage, code)
	assert.Contains(t, stderr, "--experts "+gap+"：layer,expert,tokens CSV 在某些层中缺少其 4 个专家（id 0..3）中 1 个的行（专家 1）：缺少的行表示负载未知，而不是 0 个 token：")

	zero := filepath.Join(dir, "zero.csv")
	require.NoError(t, os.WriteFile(zero, []byte(rows+"1,1,0\n"), 0o644))
	code, _, stderr = run("eplb", "plan", "--experts", zero, "--ep-size", "2", "-o", out)
	require.Equal(t, ExitOK, code, stderr)
	f, err := os.Open(out)
	require.NoError(t, err)
	defer f.Close()
	plan, _, err := expertload.ReadDeployment(f, out)
	require.NoError(t, err)
	require.Len(t, plan.Layers, 2)
}

// analyze with dumps of some EP ranks (no deployment JSON, slots fewer
// than model_gen_config.json's experts) keeps what was dumped but takes
// no ratio to a layer's load and predicts no plan: the metrics say why
// (the facts eplb plan's refusal names) and the expert-imbalance finding
// quotes no gain. Generated: 2 of 8 ranks' dumps of a 128-expert model,
// with the trace's ep group of 8; real: the MindIE sample (4 of 256).
func TestAnalyzePartialDumps(t *testing.T) {
	s := testutil.Scenario(t, "hot-experts")
	s.Layers, s.Steps = 3, 2
	dir, _ := testutil.Generate(t, s)
	part := t.TempDir()
	for _, f := range []string{"decode_0.csv", "decode_1.csv", "model_gen_config.json"} {
		b, err := os.ReadFile(filepath.Join(dir, tracegen.ExpertDumpDir, f))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(part, f), b, 0o644))
	}
	sample := testutil.Sample(t, hotspot)
	for _, c := range []struct {
		experts, why  string
		rankImbalance bool
	}{
		{part, "the dumps hold the loads of 32 of the model's 128 experts (model_gen_config.json num_of_experts), from 2 EP rank(s) of 16 slots: a plan and an expert's ratio to its layer's load need every expert's load (dumps of every EP rank: 8 or more at 16 slots each)", true},
		{sample, "the dumps hold the loads of 4 of the model's 256 experts (model_gen_config.json num_of_experts), from 1 EP rank(s) of 4 slots: a plan and an expert's ratio to its layer's load need every expert's load (dumps of every EP rank: 64 or more at 4 slots each)", false},
	} {
		code, out, errs := run("analyze", dir, "--experts", c.experts, "--format", "json")
		require.Equal(t, ExitOK, code, errs)
		doc, err := results.Read(strings.NewReader(out), "doc")
		require.NoError(t, err)
		for _, k := range []string{"experts.imbalance.max", "experts.imbalance.mean", "experts.imbalance.max_layer", "experts.hot.share.max",
			"experts.eplb.ranks", "experts.eplb.before.max", "experts.eplb.after.max", "experts.eplb.max_load.reduction"} {
			assert.Equal(t, c.why, doc.Cluster.Unavailable[k], k)
			assert.NotContains(t, doc.Cluster.Metrics, k)
		}
		assert.Contains(t, doc.Cluster.Metrics, "experts.tokens.count")
		_, ok := doc.Cluster.Metrics["experts.rank_imbalance.max"]
		assert.Equal(t, c.rankImbalance, ok)
		assert.Nil(t, doc.Experts.EPLB)
		assert.Empty(t, doc.Experts.HotExperts)
		fired := false
		for _, f := range doc.Findings {
			if f.Rule == "expert-imbalance" {
				fired = true
				assert.NotContains(t, f.Fix, "cuts the slowest rank's load")
				assert.Contains(t, f.Fix, "npuprof eplb plan --experts PATH writes one from MindIE expert-load dumps")
			}
		}
		assert.True(t, fired, "the trace's EP skew still fires the rule")

		code, out, errs = run("analyze", dir, "--experts", c.experts, "--detail", "tables")
		require.Equal(t, ExitOK, code, errs)
		requireText(t, out, "expert imbalance: unavailable: "+c.why)
		assert.NotContains(t, out, "EPLB plan (predicted")
	}
	code, out, errs := run("analyze", dir, "--experts", part, "--detail", "tables", "--lang", "zh")
	require.Equal(t, ExitOK, code, errs)
	requireText(t, out, "dump 只含模型 128 个专家中 32 个的负载（model_gen_config.json num_of_experts），来自 2 个 EP rank（每个 16 个槽位）：方案以及专家占其层负载的比值都需要每个专家的负载（每个 EP rank 的 dump：每个 16 个槽位时需 8 个或更多）")
}

// Dumps of 2 of 8 EP ranks read with the deployment JSON the generator
// writes beside them (the serving config: 8 ranks of 16 experts) are
// partial too: analyze reports experts.imbalance.*, experts.hot.share.max
// and experts.eplb.* unavailable naming the undumped ranks, in English and
// in Chinese, and eplb plan refuses them with the same reason. So does a
// deployment whose undumped rank holds only copies of dumped experts
// (every expert is observed; their loads are not whole).
func TestPartialDumpsWithDeployment(t *testing.T) {
	s := testutil.Scenario(t, "hot-experts")
	s.Layers, s.Steps = 3, 2
	dir, _ := testutil.Generate(t, s)
	part := t.TempDir()
	for _, f := range []string{"decode_0.csv", "decode_1.csv", "model_gen_config.json", "decode_global_deployment.json"} {
		b, err := os.ReadFile(filepath.Join(dir, tracegen.ExpertDumpDir, f))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(part, f), b, 0o644))
	}
	why := "the dumps cover 2 of the 8 EP ranks of decode_global_deployment.json (no dump of rank(s) 2-7): 96 of the model's 128 experts have a slot on those ranks, whose load is unknown: " +
		"a plan and an expert's ratio to its layer's load need every expert's load (dumps of every EP rank: 8)"
	code, out, errs := run("analyze", dir, "--experts", part, "--format", "json")
	require.Equal(t, ExitOK, code, errs)
	doc, err := results.Read(strings.NewReader(out), "doc")
	require.NoError(t, err)
	for _, k := range []string{"experts.imbalance.max", "experts.imbalance.mean", "experts.imbalance.max_layer", "experts.hot.share.max",
		"experts.eplb.ranks", "experts.eplb.before.max", "experts.eplb.after.max", "experts.eplb.max_load.reduction"} {
		assert.Equal(t, why, doc.Cluster.Unavailable[k], k)
		assert.NotContains(t, doc.Cluster.Metrics, k)
	}
	assert.Contains(t, doc.Cluster.Metrics, "experts.rank_imbalance.max")
	assert.Empty(t, doc.Experts.HotExperts)
	code, out, errs = run("analyze", dir, "--experts", part, "--detail", "tables", "--lang", "zh")
	require.Equal(t, ExitOK, code, errs)
	requireText(t, out, "dump 只覆盖 decode_global_deployment.json 的 8 个 EP rank 中的 2 个（rank 2-7 没有 dump）：模型 128 个专家中有 96 个在这些 rank 上有槽位，其负载未知：方案以及专家占其层负载的比值都需要每个专家的负载（每个 EP rank 的 dump：8 个）")
	code, stdout, stderr := run("eplb", "plan", "--experts", part, "-o", filepath.Join(part, "plan.json"))
	assert.Equal(t, ExitUsage, code)
	assert.Empty(t, stdout)
	assert.Contains(t, stderr, "--experts "+part+": "+why)
	assert.NoFileExists(t, filepath.Join(part, "plan.json"))

	copies := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(copies, "decode_0.csv"), []byte("40,10,10\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(copies, "decode_global_deployment.json"), []byte(`{"moe_layer_count": 1, "layer_list": [{"layer_id": 0, "device_count": 2, "device_list": [
		{"device_id": 0, "device_expert": [0, 1, 2]}, {"device_id": 1, "device_expert": [0, 1, 2]}]}]}`), 0o644))
	code, stdout, stderr = run("eplb", "plan", "--experts", copies, "-o", filepath.Join(copies, "plan.json"))
	assert.Equal(t, ExitUsage, code, stdout)
	assert.Contains(t, stderr, "--experts "+copies+": the dumps cover 1 of the 2 EP ranks of decode_global_deployment.json (no dump of rank(s) 1): 3 of the model's 3 experts have a slot on those ranks")
	assert.NoFileExists(t, filepath.Join(copies, "plan.json"))
}

// What the loader noticed about the input (the config names more experts
// than the dumps cover, lines fewer than the MoE layers, ...) changes
// what the plan is worth: the plan summary must say it.
func TestEPLBPlanShowsInputNotes(t *testing.T) {
	dir := wholeHotspot(t)
	out := filepath.Join(t.TempDir(), "expert_map.json")
	code, stdout, stderr := run("eplb", "plan", "--experts", dir, "--ep-size", "2", "-o", out)
	require.Equal(t, ExitOK, code, stderr)
	assert.Contains(t, stdout, "fewer than the 59 MoE layers expected")
	assert.Contains(t, stdout, "prefill dumps also present")
}

// Dumps without a deployment JSON: their slots are taken as vLLM's default
// contiguous layout; "before" is that default layout, not an "expert map"
// (none was read).
func TestEPLBPlanDumpsWithoutMapSayDefaultLayout(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "decode_0.csv"), []byte("90,10\n50,50\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "decode_1.csv"), []byte("5,5\n40,60\n"), 0o644))
	code, stdout, stderr := run("eplb", "plan", "--experts", dir, "-o", filepath.Join(dir, "plan.json"))
	require.Equal(t, ExitOK, code, stderr)
	assert.Contains(t, stdout, "EP size 2")
	assert.Contains(t, stdout, "before (default layout)")
	assert.NotContains(t, stdout, "before (expert map)")
}

// The serve-with line is in the form the vLLM-Ascend version reads: the
// top-level expert_map_path up to v0.13.0rc1, eplb_config from v0.13.0rc2,
// the newest with the other when the version is not given. --moe-layers
// refuses a map with more layers than the model (vLLM-Ascend's "Invalid
// EPLB Table") and notes one with fewer.
func TestEPLBPlanServeWithByVersionAndLayers(t *testing.T) {
	dir := wholeHotspot(t)
	out := filepath.Join(t.TempDir(), "expert_map.json")
	args := []string{"eplb", "plan", "--experts", dir, "--ep-size", "2", "-o", out}
	abs, err := filepath.Abs(out)
	require.NoError(t, err)
	flat := fmt.Sprintf(`--additional-config '{"expert_map_path": %q}'`, abs)
	nested := fmt.Sprintf(`--additional-config '{"eplb_config": {"expert_map_path": %q}}'`, abs)

	code, stdout, stderr := run(append(args, "--vllm-ascend-version", "v0.13.0rc1")...)
	require.Equal(t, ExitOK, code, stderr)
	require.Contains(t, stdout, "serve with: --enable-expert-parallel "+flat+"\n")
	require.NotContains(t, stdout, "eplb_config")

	code, stdout, stderr = run(append(args, "--vllm-ascend-version", "0.13.0rc2")...)
	require.Equal(t, ExitOK, code, stderr)
	require.Contains(t, stdout, "serve with: --enable-expert-parallel "+nested+"\n")

	code, stdout, stderr = run(args...)
	require.Equal(t, ExitOK, code, stderr)
	require.Contains(t, stdout, "serve with: --enable-expert-parallel "+nested+"\n")
	require.Contains(t, stdout, "v0.13.0rc1 and earlier read the top-level key: "+flat)

	// the sample's decode dumps hold 58 MoE layers
	code, stdout, stderr = run(append(args, "--moe-layers", "94")...)
	require.Equal(t, ExitOK, code, stderr)
	require.Contains(t, stdout, "note: the map places 58 of the model's 94 MoE layers (layer ids 0..57), so layers 58..93 have no placement in it")
	code, _, stderr = run(append(args, "--moe-layers", "48")...)
	require.Equal(t, ExitUsage, code)
	require.Contains(t, stderr, `the loads hold 58 MoE layers, the model 48: vLLM-Ascend refuses a map with a layer id past moe_layer_count ("Invalid EPLB Table")`)
	code, _, _ = run(append(args, "--moe-layers", "58")...)
	require.Equal(t, ExitOK, code)

	code, _, stderr = run(append(args, "--vllm-ascend-version", "latest")...)
	require.Equal(t, ExitUsage, code)
	require.Contains(t, stderr, "--vllm-ascend-version latest")
	code, _, stderr = run(append(args, "--moe-layers", "0")...)
	require.Equal(t, ExitUsage, code)
	require.Contains(t, stderr, "--moe-layers 0: out of range")
}
