package driver

import (
	"fmt"
	"github.com/npuprof/npuprof/inputs/expertload"
	"strings"

	"github.com/npuprof/npuprof/analysis"
	"github.com/npuprof/npuprof/analysis/eplb"
	"github.com/npuprof/npuprof/internal/errkind"
	"github.com/npuprof/npuprof/parser/model"
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
	return p, nil
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
