package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/npuprof/npuprof/analysis"
	"github.com/npuprof/npuprof/analysis/eplb"
	"github.com/npuprof/npuprof/inputs/expertload"
	"github.com/npuprof/npuprof/internal/errkind"
	"github.com/npuprof/npuprof/parser/model"
	"github.com/npuprof/npuprof/render"
)

// eplbPlanOptions are the flags of `npuprof eplb plan`.
type eplbPlanOptions struct {
	Experts   string
	Redundant int
	// RedundantSet is true when --redundant was given (else one per rank).
	RedundantSet bool
	EPSize       int
	Stage        string
	Output       string
}

func newEPLBCmd(io *streams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "eplb",
		Short: "Expert-parallel load balancing: plan an expert placement from measured loads",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return usageErr("eplb: missing subcommand (try `npuprof eplb plan --help`)")
		},
	}
	cmd.AddCommand(newEPLBPlanCmd(io))
	return cmd
}

func (o *eplbPlanOptions) register(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&o.Experts, "experts", "", "per-expert loads: a `PATH` to MindIE dumps or a layer,expert,tokens CSV (required)")
	intFlag(f, &o.Redundant, "redundant", 0, "0..experts x (EP size - 1)", "redundant expert slots in total, `N` (default: one per EP rank, rounded up so experts + N divide by the EP size); 0..experts x (EP size - 1): one copy of an expert per rank at most")
	intFlag(f, &o.EPSize, "ep-size", 0, fmt.Sprintf("1..%d (at most the experts per layer)", eplb.MaxRanks), "EP ranks to place experts on, `N` (default: the ranks of the expert map read with the dumps); 1..experts per layer (every rank holds an expert; more only when the expert map read has more ranks)")
	f.StringVar(&o.Stage, "stage", "", "which MindIE dumps to read when both exist: decode (default) or prefill")
	f.StringVarP(&o.Output, "output", "o", "-", "write the expert map to `FILE` (\"-\": standard output)")
}

func (o *eplbPlanOptions) check(_ *streams, cmd *cobra.Command, _ []string) error {
	if o.Experts == "" {
		return usageErr("eplb plan: --experts PATH is required (MindIE dumps or a layer,expert,tokens CSV)")
	}
	o.RedundantSet = cmd.Flags().Changed("redundant")
	if o.RedundantSet && o.Redundant < 0 {
		return usageErr("--redundant %d: out of range 0..experts x (EP size - 1): a count of extra expert copies", o.Redundant)
	}
	if cmd.Flags().Changed("ep-size") && (o.EPSize < 1 || o.EPSize > eplb.MaxRanks) {
		// bounded before anything is read: the plan allocates
		// layers x EP size x slots
		return usageErr("--ep-size %d: out of range 1..%d (a plan has at most one EP rank per expert, and no expert-load input holds more than %d experts per layer)", o.EPSize, eplb.MaxRanks, eplb.MaxRanks)
	}
	if err := checkStage(o.Stage); err != nil {
		return err
	}
	return checkOutputs([]string{o.Output}, o.Experts)
}

func newEPLBPlanCmd(io *streams) *cobra.Command {
	return newCommand(io, &cobra.Command{
		Use:   "plan --experts PATH [--redundant N] [--ep-size N] -o expert_map.json",
		Short: "Write a vLLM-Ascend expert map that balances measured expert loads",
		Long: `Plan reads per-expert token loads and writes an expert placement in
vLLM-Ascend's expert-map JSON schema (the file eplb_config.expert_map_path
loads, the same schema as expert_map_record_path and MindIE's
{stage}_global_deployment.json), and prints the predicted max/mean rank load
before and after.

--experts is a folder of MindIE dumps ({decode|prefill}_{rank}.csv with
model_gen_config.json and {stage}_global_deployment.json), one dump, or a
layer,expert,tokens CSV (docs/experts.md). The plan, per MoE layer: give the
--redundant extra slots to the experts with the most tokens per copy, then
place copies largest first on the least-loaded rank with a free slot and no
copy of that expert, then swap copies while that lowers the busiest rank
(docs/eplb.md). Every expert is placed at least once, every rank gets
(experts + redundant) / EP size slots, and no rank holds an expert twice.

"Before" is the expert map read with the dumps when it has --ep-size ranks,
else vLLM's default contiguous split without redundant experts. Predictions
split an expert's tokens evenly over its copies, as vLLM-Ascend's EPLB
worker does. The plan is written to -o (standard output when "-"); the
summary goes to standard output, or to standard error when the plan does.`,
		Example: `  # Plan from MindIE dumps with one redundant expert per rank
  $ npuprof eplb plan --experts ./expert_hotspot/ -o expert_map.json

  # From a layer,expert,tokens CSV, 16 EP ranks, 16 redundant slots
  $ npuprof eplb plan --experts moe_load.csv --ep-size 16 --redundant 16 -o expert_map.json

  # Then serve with the plan (vLLM-Ascend static EPLB)
  $ vllm serve Qwen/Qwen3-235B-A22B --enable-expert-parallel \
      --additional-config '{"eplb_config": {"expert_map_path": "/abs/path/expert_map.json"}}'`,
		Args: cobra.NoArgs,
	}, &eplbPlanOptions{}, eplbPlanRun)
}

// eplbPlan is a plan and its predicted effect.
type eplbPlan struct {
	ranks, redundant, slots int
	plan                    *model.Deployment
	from                    string // what "before" is: "expert map" or the default split
	before, after           eplb.Prediction
}

func eplbPlanRun(_ context.Context, io *streams, opts *eplbPlanOptions) error {
	x, err := loadPlanLoads(opts)
	if err != nil {
		return err
	}
	ranks, n, err := planSize(opts, x)
	if err != nil {
		return err
	}
	p, err := makePlan(x, ranks, n)
	if err != nil {
		return err
	}
	if err := writeOutput(io, opts.Output, func(w ioWriter) error { return expertload.WriteDeployment(w, p.plan) }); err != nil {
		return err
	}
	sw := io.out
	if opts.Output == "" || opts.Output == "-" {
		sw = io.err
	}
	printPlan(sw, opts, x, p)
	return nil
}

// loadPlanLoads reads --experts and refuses loads a plan cannot use.
func loadPlanLoads(opts *eplbPlanOptions) (*model.ExpertLoads, error) {
	x, err := expertload.Load(opts.Experts, expertload.Options{Stage: opts.Stage})
	if errkind.Is(err, errkind.Input) {
		return nil, errkind.Errorf(errkind.Usage, "--experts %w", err)
	}
	if err != nil {
		return nil, err
	}
	if !x.HasLoads() {
		return nil, usageErr("--experts %s: only log lines (per-rank imbalance), no per-expert token counts: a plan needs MindIE dumps or a layer,expert,tokens CSV", opts.Experts)
	}
	if x.Observed != nil {
		var unknown []string
		for e := 0; e < x.NumExperts && len(unknown) < 8; e++ {
			if !x.IsObserved(e) {
				unknown = append(unknown, fmt.Sprint(e))
			}
		}
		return nil, usageErr("--experts %s: the loads of some experts are unknown (%s…): a plan needs every expert's load (dumps of every rank)", opts.Experts, strings.Join(unknown, ", "))
	}
	return x, nil
}

// planSize is the EP size (--ep-size, else the expert map's) and the
// redundant slots (--redundant, else one per rank) of the plan.
func planSize(opts *eplbPlanOptions, x *model.ExpertLoads) (ranks, redundant int, err error) {
	ranks = opts.EPSize
	if ranks == 0 {
		ranks = x.Placement.Ranks()
		if ranks < 2 {
			what := "no expert map comes with these loads to give the EP size"
			if ranks == 1 {
				what = "the dumps cover one rank and no expert map gives the EP size"
			}
			return 0, 0, usageErr("--experts %s: %s; give --ep-size N (your expert-parallel size)", opts.Experts, what)
		}
	}
	if hi := eplb.MaxEPSize(x.NumExperts, x.Placement.Ranks()); opts.EPSize > hi {
		return 0, 0, usageErr("--ep-size %d: out of range 1..%d: %s has %d experts per layer, and every EP rank must hold at least one of them (vLLM splits the experts over the EP ranks; more ranks than experts leaves ranks empty)",
			opts.EPSize, hi, opts.Experts, x.NumExperts)
	}
	n := eplb.AutoRedundant(x.NumExperts, ranks)
	if opts.RedundantSet {
		n = opts.Redundant
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
func makePlan(x *model.ExpertLoads, ranks, n int) (*eplbPlan, error) {
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
	p := &eplbPlan{ranks: ranks, redundant: n, slots: (x.NumExperts + n) / ranks, plan: plan, from: from}
	if err := eplb.Check(plan, x.NumExperts, ranks, p.slots); err != nil {
		return nil, fmt.Errorf("internal error: invalid plan: %w", err)
	}
	if p.before, err = eplb.Predict(before, tok); err != nil {
		return nil, err
	}
	if p.after, err = eplb.Predict(plan, tok); err != nil {
		return nil, err
	}
	return p, nil
}

// printPlan writes the plan's summary: its shape, the predicted rank
// loads before and after, notes, and how to serve with it.
func printPlan(sw io.Writer, opts *eplbPlanOptions, x *model.ExpertLoads, p *eplbPlan) {
	stage := ""
	if x.Stage != "" {
		stage = " (" + x.Stage + ")"
	}
	pr := func(format string, args ...any) { fmt.Fprintf(sw, format, args...) }
	pr("EPLB plan for %s%s: %d MoE layers, %d experts, EP size %d, %d redundant -> %d slots per rank\n",
		opts.Experts, stage, len(x.Layers), x.NumExperts, p.ranks, p.redundant, p.slots)
	b, a := p.before, p.after
	if b.Layers == 0 {
		pr("every layer has 0 tokens: nothing to balance\n")
	} else {
		tw := tabwriter.NewWriter(sw, 2, 4, 2, ' ', 0)
		fmt.Fprintf(tw, "predicted max/mean rank load\tbefore (%s)\tafter\n", p.from)
		fmt.Fprintf(tw, "  worst layer\t%.3f\t%.3f\n", b.Max, a.Max)
		fmt.Fprintf(tw, "  mean over layers\t%.3f\t%.3f\n", b.Mean, a.Mean)
		fmt.Fprintf(tw, "  slowest rank, all layers\t%s tokens\t%s tokens (%+.1f%%)\n", render.Count(b.MaxLoad), render.Count(a.MaxLoad), 100*(a.MaxLoad/b.MaxLoad-1))
		tw.Flush()
	}
	for _, n := range x.Notes {
		pr("note: %s\n", n)
	}
	for _, l := range x.Layers[:1] {
		if l.ID != 0 || x.Layers[len(x.Layers)-1].ID != len(x.Layers)-1 {
			pr("note: input layers %d..%d are written as MoE layers 0..%d in order\n", l.ID, x.Layers[len(x.Layers)-1].ID, len(x.Layers)-1)
		}
	}
	if opts.Output != "" && opts.Output != "-" {
		abs, err := filepath.Abs(opts.Output)
		if err != nil {
			abs = opts.Output
		}
		pr("wrote %s: %d layers x %d ranks x %d slots (vLLM-Ascend expert map)\n", opts.Output, len(p.plan.Layers), p.ranks, p.slots)
		pr("serve with: --enable-expert-parallel --additional-config '{\"eplb_config\": {\"expert_map_path\": %q}}'\n", abs)
	}
}
