package analysis

import (
	"encoding/csv"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/npuprof/npuprof/internal/inputs/expertload"
	"github.com/npuprof/npuprof/internal/parser/model"
	"github.com/npuprof/npuprof/internal/pipeline/gather"
	"github.com/npuprof/npuprof/internal/testutil"
)

// The imbalance numbers of the real MindIE dump, with a config of a
// 4-expert model (the dump's 4 slots are then every expert), equal values
// this test computes itself from the CSV (encoding/csv, no npuprof parser).
func TestExpertsMindIESample(t *testing.T) {
	src := testutil.Sample(t, "Ascend-msinsight/server/src/test/test_data/expert_hotspot")
	dir := t.TempDir()
	for _, f := range []string{"decode_0.csv", "prefill_0.csv"} {
		b, err := os.ReadFile(filepath.Join(src, f))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, f), b, 0o644))
	}
	cfg := `{"num_moe_layers": 59, "collection_Interval": 8, "num_of_experts": 4, "num_of_selected_experts": 2, "num_dangling_shared_experts": 0}`
	require.NoError(t, os.WriteFile(filepath.Join(dir, "model_gen_config.json"), []byte(cfg), 0o644))
	for _, stage := range []string{"decode", "prefill"} {
		t.Run(stage, func(t *testing.T) {
			f, err := os.Open(filepath.Join(dir, stage+"_0.csv"))
			require.NoError(t, err)
			recs, err := csv.NewReader(f).ReadAll()
			f.Close()
			require.NoError(t, err)
			var maxR, sumR, maxShare float64
			maxLayer := -1
			var total float64
			for l, rec := range recs {
				var s, m float64
				for _, c := range rec {
					v, err := strconv.ParseFloat(c, 64)
					require.NoError(t, err)
					s += v
					m = max(m, v)
				}
				total += s
				r := m / (s / float64(len(rec)))
				sumR += r
				if r > maxR {
					maxR, maxLayer = r, l
				}
				maxShare = max(maxShare, m/s)
			}
			x, err := expertload.Load(dir, expertload.Options{Stage: stage})
			require.NoError(t, err)
			res, err := analyzeProfile(&gather.Set[*model.Rank]{Path: dir, Experts: x})
			require.NoError(t, err)
			require.Empty(t, res.Errors())
			m, na := res.Cluster.Metrics, res.Cluster.Unavailable
			assert.InDelta(t, maxR, m[MetricExpertsImbalanceMax], 1e-12)
			assert.InDelta(t, sumR/float64(len(recs)), m[MetricExpertsImbalanceMean], 1e-12)
			assert.Equal(t, float64(maxLayer), m[MetricExpertsImbalanceMaxLayer])
			assert.InDelta(t, maxShare, m[MetricExpertsHotShareMax], 1e-12)
			assert.Equal(t, 58.0, m[MetricExpertsLayersCount])
			assert.Equal(t, 4.0, m[MetricExpertsCount])
			assert.Equal(t, total, m[MetricExpertsTokensCount])
			// One rank dumped: no rank imbalance, no plan, no trace skew.
			assert.Contains(t, na[MetricExpertsRankImbalanceMax], "the dumps cover one rank (0)")
			assert.Contains(t, na[MetricEPLBAfterMax], "EP size unknown or 1")
			assert.Contains(t, na[MetricSkewGMMMaxOverMean], "no ep group")
			require.NotNil(t, ExpertsOf(res.Cluster))
			require.Len(t, ExpertsOf(res.Cluster).Layers, 58)
			h := ExpertsOf(res.Cluster).Hot[0]
			assert.Equal(t, maxLayer, h.Layer)
			assert.InDelta(t, maxShare, h.Share, 1e-12)
		})
	}
}

// The MindIE sample as shipped: its config says 256 experts and its one
// dump (rank 0) holds 4 slots. What was dumped is kept (layers, slots,
// tokens, per-slot loads); every ratio to a layer's load and the plan are
// unavailable, with what the dumps hold and what they would need.
func TestExpertsMindIESamplePartial(t *testing.T) {
	dir := testutil.Sample(t, "Ascend-msinsight/server/src/test/test_data/expert_hotspot")
	f, err := os.Open(filepath.Join(dir, "decode_0.csv"))
	require.NoError(t, err)
	recs, err := csv.NewReader(f).ReadAll()
	f.Close()
	require.NoError(t, err)
	var total float64
	for _, rec := range recs {
		for _, c := range rec {
			v, err := strconv.ParseFloat(c, 64)
			require.NoError(t, err)
			total += v
		}
	}
	x, err := expertload.Load(dir, expertload.Options{Stage: "decode"})
	require.NoError(t, err)
	res, err := analyzeProfile(&gather.Set[*model.Rank]{Path: dir, Experts: x})
	require.NoError(t, err)
	require.Empty(t, res.Errors())
	m, na := res.Cluster.Metrics, res.Cluster.Unavailable
	assert.Equal(t, 58.0, m[MetricExpertsLayersCount])
	assert.Equal(t, 4.0, m[MetricExpertsCount])
	assert.Equal(t, total, m[MetricExpertsTokensCount])
	why := "the dumps hold the loads of 4 of the model's 256 experts (model_gen_config.json num_of_experts), from 1 EP rank(s) of 4 slots: " +
		"a plan and an expert's ratio to its layer's load need every expert's load (dumps of every EP rank: 64 or more at 4 slots each)"
	for _, k := range append([]string{MetricExpertsImbalanceMax, MetricExpertsImbalanceMean, MetricExpertsImbalanceMaxLayer, MetricExpertsHotShareMax}, eplbMetricNames...) {
		assert.Equal(t, why, na[k], k)
		assert.NotContains(t, m, k)
	}
	assert.Equal(t, why, PartialDump(x))
	r := ExpertsOf(res.Cluster)
	require.Len(t, r.Layers, 58)
	assert.Empty(t, r.Hot)
	assert.Nil(t, r.EPLB)
	assert.Empty(t, r.PlanCommand)
	for i, l := range r.Layers {
		assert.False(t, l.HasLoad, i)
		assert.Empty(t, l.Top, i)
	}
	assert.Equal(t, []RankTokens{{0, int64(total)}}, r.DumpRanks)
}

// Dumps of 2 of 8 EP ranks (16 slots each, no deployment JSON) of a
// 128-expert model: the 32 slots are not taken as a model of 32 experts,
// though two ranks give an EP size a plan could use. Their per-rank
// imbalance, measured, stays.
func TestExpertsPartialDumpOfTwoRanks(t *testing.T) {
	x := &model.ExpertLoads{Source: "two", Format: model.ExpertFormatMindIEDump, NumExperts: 32, RankIDs: []int{0, 1},
		PlacementFromSlots: true, Config: &model.MoEGenConfig{NumMoELayers: 1, NumExperts: 128, NumSelectedExperts: 8}}
	x.Placement = &model.Deployment{Layers: []model.DeploymentLayer{{ID: 0, Devices: [][]int{make([]int, 16), make([]int, 16)}}}}
	tok := make([]int64, 32)
	for e := range tok {
		tok[e] = 10
	}
	tok[3] = 170 // rank 0: 15*10+170 = 320, rank 1: 160
	x.Layers = []model.ExpertLayer{{ID: 0, Tokens: tok, RankTokens: []int64{320, 160}}}
	require.NoError(t, x.Validate())
	res, err := analyzeProfile(&gather.Set[*model.Rank]{Experts: x})
	require.NoError(t, err)
	m, na := res.Cluster.Metrics, res.Cluster.Unavailable
	why := "the dumps hold the loads of 32 of the model's 128 experts (model_gen_config.json num_of_experts), from 2 EP rank(s) of 16 slots: " +
		"a plan and an expert's ratio to its layer's load need every expert's load (dumps of every EP rank: 8 or more at 16 slots each)"
	for _, k := range append([]string{MetricExpertsImbalanceMax, MetricExpertsHotShareMax}, eplbMetricNames...) {
		assert.Equal(t, why, na[k], k)
		assert.NotContains(t, m, k)
	}
	assert.Nil(t, ExpertsOf(res.Cluster).EPLB)
	assert.InDelta(t, 320.0/240, m[MetricExpertsRankImbalanceMax], 1e-12)
	assert.Equal(t, 480.0, m[MetricExpertsTokensCount])
	assert.Equal(t, 32.0, m[MetricExpertsCount])

	// The same dumps with a config of 32 experts are the whole model.
	x.Config.NumExperts = 32
	res, err = analyzeProfile(&gather.Set[*model.Rank]{Experts: x})
	require.NoError(t, err)
	assert.InDelta(t, 170.0/15, res.Cluster.Metrics[MetricExpertsImbalanceMax], 1e-12)
	assert.Contains(t, res.Cluster.Metrics, MetricEPLBMaxLoadReduction)
	assert.Empty(t, PartialDump(x))
}

// handMadeLoads is a two-rank expert input with loads, a placement and
// log lines.
func handMadeLoads() *model.ExpertLoads {
	return &model.ExpertLoads{Source: "hand", Format: model.ExpertFormatMindIEDump, NumExperts: 4, RankIDs: []int{0, 1},
		Placement: &model.Deployment{Layers: []model.DeploymentLayer{
			{ID: 0, Devices: [][]int{{0, 1}, {2, 3}}},
			{ID: 1, Devices: [][]int{{0, 1}, {2, 3}}},
		}},
		Layers: []model.ExpertLayer{
			{ID: 0, Tokens: []int64{70, 10, 10, 10}, RankTokens: []int64{80, 20}},
			{ID: 1, Tokens: []int64{25, 25, 25, 25}, RankTokens: []int64{50, 50}},
		},
		Logs: []model.ExpertLog{
			{Kind: model.LogMoELoadStats, Layer: -1, Values: map[string]float64{"mean": 1.5, "max": 2, "min": 1}},
			{Kind: model.LogMoELoadStatsLayer, Layer: 3, Values: map[string]float64{"par": 1.25}},
			{Kind: model.LogEPLBStep, Layer: -1, Model: "main", Values: map[string]float64{"avg_tokens": 10, "max_tokens": 20, "balancedness": 0.5}},
			{Kind: model.LogEPLBStep, Layer: -1, Model: "drafter", Values: map[string]float64{"avg_tokens": 1, "max_tokens": 1, "balancedness": 1}},
		}}
}

// A hand-made two-rank input: every number below is computed by hand.
func TestExpertsHandMade(t *testing.T) {
	x := handMadeLoads()
	res, err := analyzeProfile(&gather.Set[*model.Rank]{Experts: x})
	require.NoError(t, err)
	m := res.Cluster.Metrics
	assert.Equal(t, 2.8, m[MetricExpertsImbalanceMax]) // 70 / 25
	assert.Equal(t, 1.9, m[MetricExpertsImbalanceMean])
	assert.Equal(t, 0.0, m[MetricExpertsImbalanceMaxLayer])
	assert.Equal(t, 0.7, m[MetricExpertsHotShareMax])
	assert.Equal(t, 1.6, m[MetricExpertsRankImbalanceMax]) // 80 / 50
	assert.Equal(t, 1.3, m[MetricExpertsRankImbalanceMean])
	assert.Equal(t, 200.0, m[MetricExpertsTokensCount])
	// Plan: 2 ranks, 2 redundant slots (3 per rank). Layer 0: expert 0
	// gets the second copy (35 each), then expert 1 (5 each): copies
	// 35,35,10,10,5,5 pack into 50 | 50. Layer 1: 50 | 50.
	assert.Equal(t, 2.0, m[MetricEPLBRanks])
	assert.Equal(t, 2.0, m[MetricEPLBRedundant])
	assert.Equal(t, 1.6, m[MetricEPLBBeforeMax])
	assert.Equal(t, 1.3, m[MetricEPLBBeforeMean])
	assert.Equal(t, 1.0, m[MetricEPLBAfterMax])
	assert.Equal(t, 1.0, m[MetricEPLBAfterMean])
	assert.InDelta(t, 1-(50.0+50)/(80+50), m[MetricEPLBMaxLoadReduction], 1e-12)
	assert.Equal(t, "npuprof eplb plan --experts hand --redundant 2 -o expert_map.json", ExpertsOf(res.Cluster).PlanCommand)
	assert.Equal(t, 1.5, m[MetricLogRankImbalanceMean])
	assert.Equal(t, 2.0, m[MetricLogRankImbalanceMax])
	assert.Equal(t, 0.5, m[MetricLogBalancedness], "the first model's line, not the drafter's")
	assert.Equal(t, 4.0, m[MetricLogLinesCount])
	assert.Equal(t, map[int]float64{3: 1.25}, ExpertsOf(res.Cluster).LogLayers)
	require.Len(t, ExpertsOf(res.Cluster).Layers, 2)
	assert.Equal(t, []HotExpert{{Layer: 0, Expert: 0, Tokens: 70, Share: 0.7, MaxOverMean: 2.8}, {Layer: 0, Expert: 1, Tokens: 10, Share: 0.1, MaxOverMean: 0.4},
		{Layer: 0, Expert: 2, Tokens: 10, Share: 0.1, MaxOverMean: 0.4}}, ExpertsOf(res.Cluster).Layers[0].Top)
	assert.Equal(t, []RankTokens{{0, 130}, {1, 70}}, ExpertsOf(res.Cluster).DumpRanks)

	// Without loads every experts.* metric is unavailable with the reason.
	res, err = analyzeProfile(&gather.Set[*model.Rank]{})
	require.NoError(t, err)
	for _, k := range loadMetricNames {
		assert.Contains(t, res.Cluster.Unavailable[k], "no per-expert loads", k)
		_, ok := res.Cluster.Metrics[k]
		assert.False(t, ok)
	}
}

// Dumps read with a deployment JSON that places experts on EP ranks
// without a dump are partial too, whether the missing ranks hold experts
// no dumped rank has or copies of dumped ones; so are dumps without a
// deployment JSON with a rank missing below the highest, and dumps whose
// deployment leaves an expert out of some layer. Each says what is
// missing; the per-rank imbalance of the dumped ranks, measured, stays.
func TestExpertsPartialDumpWithDeployment(t *testing.T) {
	dump := func(dep [][]int, ranks []int, rankTok []int64, tok []int64) *model.ExpertLoads {
		x := &model.ExpertLoads{Source: "d", Format: model.ExpertFormatMindIEDump, Stage: "decode", NumExperts: len(tok), RankIDs: ranks,
			Placement: &model.Deployment{Layers: []model.DeploymentLayer{{ID: 0, Devices: dep}}},
			Layers:    []model.ExpertLayer{{ID: 0, Tokens: tok, RankTokens: rankTok}}}
		require.NoError(t, x.Validate())
		return x
	}
	for _, c := range []struct {
		name string
		x    *model.ExpertLoads
		why  string
	}{
		{"copies on the undumped rank", // rank 1 holds a copy of every expert rank 0 holds
			dump([][]int{{0, 1, 2}, {0, 1, 2}}, []int{0}, []int64{60}, []int64{40, 10, 10}),
			"the dumps cover 1 of the 2 EP ranks of decode_global_deployment.json (no dump of rank(s) 1): 3 of the model's 3 experts have a slot on those ranks, whose load is unknown: " +
				"a plan and an expert's ratio to its layer's load need every expert's load (dumps of every EP rank: 2)"},
		{"experts only on undumped ranks",
			func() *model.ExpertLoads {
				x := dump([][]int{{0, 1}, {2, 3}, {4, 5}, {6, 7}}, []int{0, 2}, []int64{50, 20}, []int64{40, 10, 0, 0, 10, 10, 0, 0})
				x.Observed = []bool{true, true, false, false, true, true, false, false}
				return x
			}(),
			"the dumps cover 2 of the 4 EP ranks of decode_global_deployment.json (no dump of rank(s) 1,3): 4 of the model's 8 experts have a slot on those ranks, whose load is unknown: " +
				"a plan and an expert's ratio to its layer's load need every expert's load (dumps of every EP rank: 4)"},
		{"no deployment, a rank missing below the highest",
			func() *model.ExpertLoads {
				x := dump([][]int{{0, 1}, {2, 3}, {4, 5}}, []int{0, 2}, []int64{50, 20}, []int64{40, 10, 0, 0, 10, 10})
				x.PlacementFromSlots, x.Observed = true, []bool{true, true, false, false, true, true}
				return x
			}(),
			"the dumps cover EP ranks 0,2 but not 1 (expert ids are slot positions: no deployment JSON fits the dumps): the loads of the 2 experts in those ranks' slots are unknown: " +
				"a plan and an expert's ratio to its layer's load need every expert's load (dumps of every EP rank: 3 or more)"},
		{"an expert in no slot",
			func() *model.ExpertLoads {
				x := dump([][]int{{0, 1}, {2, 3}}, []int{0, 1}, []int64{50, 20}, []int64{40, 10, 10, 10, 0})
				x.Config = &model.MoEGenConfig{NumMoELayers: 1, NumExperts: 5}
				x.Observed = []bool{true, true, true, true, false}
				return x
			}(),
			"the loads of 1 of the model's 5 experts are unknown (expert(s) 4: in no dumped slot of some layer): " +
				"a plan and an expert's ratio to its layer's load need every expert's load"},
	} {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.why, PartialDump(c.x))
			res, err := analyzeProfile(&gather.Set[*model.Rank]{Experts: c.x})
			require.NoError(t, err)
			m, na := res.Cluster.Metrics, res.Cluster.Unavailable
			for _, k := range append([]string{MetricExpertsImbalanceMax, MetricExpertsImbalanceMean, MetricExpertsImbalanceMaxLayer, MetricExpertsHotShareMax}, eplbMetricNames...) {
				assert.Equal(t, c.why, na[k], k)
				assert.NotContains(t, m, k)
			}
			r := ExpertsOf(res.Cluster)
			assert.Nil(t, r.EPLB)
			assert.Empty(t, r.Hot)
			assert.Contains(t, m, MetricExpertsTokensCount)
			if len(c.x.RankIDs) > 1 {
				assert.Contains(t, m, MetricExpertsRankImbalanceMax)
			}
		})
	}

	// Every rank of the deployment dumped: whole.
	x := dump([][]int{{0, 1, 2}, {0, 1, 2}}, []int{0, 1}, []int64{60, 30}, []int64{60, 15, 15})
	assert.Empty(t, PartialDump(x))
	res, err := analyzeProfile(&gather.Set[*model.Rank]{Experts: x})
	require.NoError(t, err)
	assert.Equal(t, 2.0, res.Cluster.Metrics[MetricExpertsImbalanceMax])
}

// The pass's Doc says what a partial dump does: which metrics it leaves
// unavailable (each one PartialDump's reason is set on) and which it keeps.
func TestExpertsDocSaysPartialDumps(t *testing.T) {
	doc := ExpertsPass.Doc
	assert.Contains(t, doc, "partial dump")
	assert.Contains(t, doc, "PartialDump")
	x := &model.ExpertLoads{Source: "d", Format: model.ExpertFormatMindIEDump, Stage: "decode", NumExperts: 3, RankIDs: []int{0},
		Placement: &model.Deployment{Layers: []model.DeploymentLayer{{ID: 0, Devices: [][]int{{0, 1, 2}, {0, 1, 2}}}}},
		Layers:    []model.ExpertLayer{{ID: 0, Tokens: []int64{40, 10, 10}, RankTokens: []int64{60}}}}
	res, err := analyzeProfile(&gather.Set[*model.Rank]{Experts: x})
	require.NoError(t, err)
	why := PartialDump(x)
	require.NotEmpty(t, why)
	named := func(metric string) bool {
		for _, w := range strings.FieldsFunc(doc, func(r rune) bool { return r == ' ' || r == '\n' || r == ',' || r == '(' || r == ')' }) {
			if w == metric || (strings.HasSuffix(w, ".*") && strings.HasPrefix(metric, strings.TrimSuffix(w, "*"))) {
				return true
			}
		}
		return false
	}
	for k, v := range res.Cluster.Unavailable {
		if v == why {
			assert.True(t, named(k), "the Doc names %s, unavailable on a partial dump", k)
		}
	}
	for _, k := range []string{MetricExpertsLayersCount, MetricExpertsCount, MetricExpertsTokensCount} {
		assert.Contains(t, res.Cluster.Metrics, k)
		assert.True(t, named(k), "the Doc names %s, kept on a partial dump", k)
	}
}

// A layer,expert,tokens CSV without a row for an expert in one layer
// (that other layers have) is partial like a dump of some ranks: the
// missing row is an unknown load, not 0 tokens, so no ratio to a layer's
// load and no plan; the same loads with the 0 written are whole.
func TestExpertsPartialCSV(t *testing.T) {
	read := func(in string) *model.ExpertLoads {
		x, err := expertload.ReadLoadCSV(strings.NewReader(in), "l.csv")
		require.NoError(t, err)
		x.Source = "l.csv"
		return x
	}
	const rows = "layer,expert,tokens\n0,0,40\n0,1,10\n0,2,10\n0,3,20\n1,0,30\n1,2,10\n1,3,20\n"
	x := read(rows)
	why := "the layer,expert,tokens CSV has no row for 1 of its 4 experts (ids 0..3) in some layer (expert(s) 1): " +
		"a missing row is an unknown load, not 0 tokens: a plan and an expert's ratio to its layer's load need every expert's load " +
		"(a row for every expert in every layer, tokens 0 for one that got none)"
	assert.Equal(t, why, PartialDump(x))
	res, err := analyzeProfile(&gather.Set[*model.Rank]{Experts: x})
	require.NoError(t, err)
	m, na := res.Cluster.Metrics, res.Cluster.Unavailable
	for _, k := range append([]string{MetricExpertsImbalanceMax, MetricExpertsImbalanceMean, MetricExpertsImbalanceMaxLayer, MetricExpertsHotShareMax}, eplbMetricNames...) {
		assert.Equal(t, why, na[k], k)
		assert.NotContains(t, m, k)
	}
	assert.Equal(t, 3.0, m[MetricExpertsCount], "experts with a row in every layer")
	assert.Equal(t, 2.0, m[MetricExpertsLayersCount])
	r := ExpertsOf(res.Cluster)
	assert.Nil(t, r.EPLB)
	assert.Empty(t, r.Hot)

	// with the model's expert count from a model_gen_config.json beside it
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "l.csv"), []byte("layer,expert,tokens\n0,0,40\n0,1,10\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "model_gen_config.json"), []byte(`{"num_moe_layers": 1, "num_of_experts": 4}`), 0o644))
	x, err = expertload.Load(dir, expertload.Options{})
	require.NoError(t, err)
	assert.Equal(t, "the layer,expert,tokens CSV has no row for 2 of the model's 4 experts (model_gen_config.json num_of_experts) in some layer (expert(s) 2-3): "+
		"a missing row is an unknown load, not 0 tokens: a plan and an expert's ratio to its layer's load need every expert's load "+
		"(a row for every expert in every layer, tokens 0 for one that got none)", PartialDump(x))

	// the 0 written: whole, with 0 tokens for expert 1 in layer 1
	x = read(rows + "1,1,0\n")
	assert.Empty(t, PartialDump(x))
	res, err = analyzeProfile(&gather.Set[*model.Rank]{Experts: x})
	require.NoError(t, err)
	m = res.Cluster.Metrics
	assert.Equal(t, 2.0, m[MetricExpertsImbalanceMax], "layer 0: 40 / (80/4)")
	assert.Equal(t, 4.0, m[MetricExpertsCount])
	assert.NotContains(t, res.Cluster.Unavailable, MetricExpertsImbalanceMax)
}
