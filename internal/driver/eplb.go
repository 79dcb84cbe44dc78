package driver

import (
	"fmt"
	"strings"

	"github.com/npuprof/npuprof/internal/analysis"
	"github.com/npuprof/npuprof/internal/analysis/eplb"
	"github.com/npuprof/npuprof/internal/errkind"
	"github.com/npuprof/npuprof/internal/inputs/expertload"
	"github.com/npuprof/npuprof/internal/parser/model"
	"github.com/npuprof/npuprof/internal/rules"
)

// EPLBMaxRanks bounds eplb plan's --ep-size.
const EPLBMaxRanks = eplb.MaxRanks

// EPLBRequest is one run of npuprof eplb plan.
type EPLBRequest struct {
	// Experts is the expert-load input, Stage its decode or prefill dumps.
	Experts, Stage string
	// EPSize is the EP ranks to place experts on (0: the expert map's).
	EPSize int
	// Redundant is the redundant slots when RedundantSet (else one per
	// rank).
	Redundant    int
	RedundantSet bool
	// VLLMAscend is the vLLM-Ascend version that will read the map ("":
	// unknown): it picks the form of the serve-with line.
	VLLMAscend string
	// MoELayers is the served model's MoE layer count (0: not given): the
	// map's layers are checked against it.
	MoELayers int
}

// EPLBPlan is a plan, its predicted effect and the loads it was made
// from.
type EPLBPlan struct {
	Loads                   *model.ExpertLoads
	Ranks, Redundant, Slots int
	Plan                    *model.Deployment
	// From is what "before" is: "expert map" or the default split.
	From          string
	Before, After eplb.Prediction
	// LayerNote says the map covers fewer MoE layers than the model has
	// ("" when they agree or the model's count was not given).
	LayerNote string
}

// PlanEPLB reads the loads of req and plans their placement.
func PlanEPLB(req EPLBRequest) (*EPLBPlan, error) {
	x, err := loadPlanLoads(req)
	if err != nil {
		return nil, err
	}
	ranks, n, err := planSize(req, x)
	if err != nil {
		return nil, err
	}
	p, err := makePlan(x, ranks, n)
	if err != nil {
		return nil, err
	}
	p.Loads = x
	if req.MoELayers > 0 {
		if p.LayerNote, err = checkMoELayers(len(p.Plan.Layers), req.MoELayers); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// checkMoELayers checks the map's layer count against the model's MoE
// layers. More is an error: vLLM-Ascend's expert-map loader raises
// "Invalid EPLB Table" for a layer id past moe_layer_count, and the server
// does not start. Fewer is a note: the layers past the map have no
// placement in it.
func checkMoELayers(mapLayers, model int) (string, error) {
	switch {
	case mapLayers > model:
		return "", usageErr("--moe-layers %d: the loads hold %d MoE layers, the model %d: vLLM-Ascend refuses a map with a layer id past moe_layer_count (\"Invalid EPLB Table\"). Record the loads on this model (every rank, all %d MoE layers), or give the model's MoE layer count if %d is wrong (config.json num_hidden_layers, less any dense layers: first_k_dense_replace, mlp_only_layers)",
			model, mapLayers, model, model, model)
	case mapLayers < model:
		return fmt.Sprintf("the map places %d of the model's %d MoE layers (layer ids 0..%d), so layers %d..%d have no placement in it; record the loads over every MoE layer for a map of all %d", mapLayers, model, mapLayers-1, mapLayers, model-1, model), nil
	}
	return "", nil
}

// eplbNestedFrom is the first vLLM-Ascend release that reads the expert map
// path under eplb_config (#5533); earlier ones read the top-level
// expert_map_path (vllm_ascend/ascend_config.py at v0.13.0rc1; docs/rules.md,
// "Edits by vLLM-Ascend version").
const eplbNestedFrom = "v0.13.0rc2"

// EPLBServeWith is the --additional-config that makes vLLM-Ascend version
// (v0.13.0rc1, "" when unknown) load the expert map at path, and a note
// when the version is unknown (the newest form, and the other).
func EPLBServeWith(version, path string) (config, note string, err error) {
	nested := fmt.Sprintf(`{"eplb_config": {"expert_map_path": %q}}`, path)
	flat := fmt.Sprintf(`{"expert_map_path": %q}`, path)
	if version == "" {
		return nested, fmt.Sprintf("the form %s and later read; v0.13.0rc1 and earlier read the top-level key: --additional-config '%s' (give --vllm-ascend-version to choose)", eplbNestedFrom, flat), nil
	}
	c, err := rules.CompareVersions(version, eplbNestedFrom)
	if err != nil {
		return "", "", usageErr("--vllm-ascend-version %s: %v", version, err)
	}
	if c < 0 {
		return flat, "", nil
	}
	return nested, "", nil
}

// loadPlanLoads reads --experts and refuses loads a plan cannot use.
func loadPlanLoads(req EPLBRequest) (*model.ExpertLoads, error) {
	x, err := expertload.Load(req.Experts, expertload.Options{Stage: req.Stage})
	if errkind.Is(err, errkind.Input) {
		return nil, errkind.Errorf(errkind.Usage, "--experts %w", err)
	}
	if err != nil {
		return nil, err
	}
	if !x.HasLoads() {
		return nil, usageErr("--experts %s: only log lines (per-rank imbalance), no per-expert token counts: a plan needs MindIE dumps or a layer,expert,tokens CSV", req.Experts)
	}
	if why := analysis.PartialDump(x); why != "" {
		return nil, usageErr("--experts %s: %s", req.Experts, why)
	}
	if x.Observed != nil {
		var unknown []string
		for e := 0; e < x.NumExperts && len(unknown) < 8; e++ {
			if !x.IsObserved(e) {
				unknown = append(unknown, fmt.Sprint(e))
			}
		}
		return nil, usageErr("--experts %s: the loads of some experts are unknown (%s…): a plan needs every expert's load (dumps of every rank)", req.Experts, strings.Join(unknown, ", "))
	}
	return x, nil
}

// planSize is the EP size (--ep-size, else the expert map's) and the
// redundant slots (--redundant, else one per rank) of the plan.
func planSize(req EPLBRequest, x *model.ExpertLoads) (ranks, redundant int, err error) {
	ranks = req.EPSize
	if ranks == 0 {
		ranks = x.Placement.Ranks()
		if ranks < 2 {
			what := "no expert map comes with these loads to give the EP size"
			if ranks == 1 {
				what = "the dumps cover one rank and no expert map gives the EP size"
			}
			return 0, 0, usageErr("--experts %s: %s; give --ep-size N (your expert-parallel size)", req.Experts, what)
		}
	}
	if hi := eplb.MaxEPSize(x.NumExperts, x.Placement.Ranks()); req.EPSize > hi {
		return 0, 0, usageErr("--ep-size %d: out of range 1..%d: %s has %d experts per layer, and every EP rank must hold at least one of them (vLLM splits the experts over the EP ranks; more ranks than experts leaves ranks empty)",
			req.EPSize, hi, req.Experts, x.NumExperts)
	}
	n := eplb.AutoRedundant(x.NumExperts, ranks)
	if req.RedundantSet {
		n = req.Redundant
		if hi := eplb.MaxRedundant(x.NumExperts, ranks); n > hi {
			return 0, 0, usageErr("--redundant %d: out of range 0..%d: each of the %d experts has at most one copy per rank, so at most %d redundant copies with EP size %d",
				n, hi, x.NumExperts, ranks-1, ranks)
		}
	}
	if err := eplb.CheckRedundant(x.NumExperts, ranks, n); err != nil {
		return 0, 0, usageErr("--redundant/--ep-size: %v", err)
	}
	return ranks, n, nil
}

// makePlan plans the placement of x's experts on ranks with n redundant
// slots, checks it and predicts its rank loads against the placement
// before.
func makePlan(x *model.ExpertLoads, ranks, n int) (*EPLBPlan, error) {
	tok := analysis.ExpertTokens(x)
	before, from, err := analysis.BeforePlacement(x, ranks)
	if err != nil {
		return nil, usageErr("%v", err)
	}
	var cur *model.Deployment
	if from == "expert map" {
		cur = before
	}
	plan, err := eplb.Plan(tok, ranks, n, cur)
	if err != nil {
		return nil, err
	}
	p := &EPLBPlan{Ranks: ranks, Redundant: n, Slots: (x.NumExperts + n) / ranks, Plan: plan, From: from}
	if err := eplb.Check(plan, x.NumExperts, ranks, p.Slots); err != nil {
		return nil, fmt.Errorf("internal error: invalid plan: %w", err)
	}
	if p.Before, err = eplb.Predict(before, tok); err != nil {
		return nil, err
	}
	if p.After, err = eplb.Predict(plan, tok); err != nil {
		return nil, err
	}
	return p, nil
}
