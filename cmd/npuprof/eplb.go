package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/npuprof/npuprof/analysis"
	"github.com/npuprof/npuprof/analysis/eplb"
	"github.com/npuprof/npuprof/parser/model"
	"github.com/npuprof/npuprof/pipeline"
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
	cmd.AddCommand(newEPLBPlanCmd(io, nil))
	return cmd
}

func newEPLBPlanCmd(io *streams, runF func(*eplbPlanOptions) error) *cobra.Command {
	opts := &eplbPlanOptions{}
	cmd := &cobra.Command{
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
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.Experts == "" {
				return usageErr("eplb plan: --experts PATH is required (MindIE dumps or a layer,expert,tokens CSV)")
			}
			opts.RedundantSet = cmd.Flags().Changed("redundant")
			if opts.RedundantSet && opts.Redundant < 0 {
				return usageErr("--redundant %d: out of range 0..experts x (EP size - 1): a count of extra expert copies", opts.Redundant)
			}
			if cmd.Flags().Changed("ep-size") && (opts.EPSize < 1 || opts.EPSize > eplb.MaxRanks) {
				// bounded before anything is read: the plan allocates
				// layers x EP size x slots
				return usageErr("--ep-size %d: out of range 1..%d (a plan has at most one EP rank per expert, and no expert-load input holds more than %d experts per layer)", opts.EPSize, eplb.MaxRanks, eplb.MaxRanks)
			}
			if opts.Stage != "" && opts.Stage != "decode" && opts.Stage != "prefill" {
				return usageErr("--stage %q: expected decode or prefill", opts.Stage)
			}
			if err := checkOutputs([]string{opts.Output}, opts.Experts); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return eplbPlanRun(io, opts)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.Experts, "experts", "", "per-expert loads: a `PATH` to MindIE dumps or a layer,expert,tokens CSV (required)")
	intFlag(f, &opts.Redundant, "redundant", 0, "0..experts x (EP size - 1)", "redundant expert slots in total, `N` (default: one per EP rank, rounded up so experts + N divide by the EP size); 0..experts x (EP size - 1): one copy of an expert per rank at most")
	intFlag(f, &opts.EPSize, "ep-size", 0, fmt.Sprintf("1..%d (at most the experts per layer)", eplb.MaxRanks), "EP ranks to place experts on, `N` (default: the ranks of the expert map read with the dumps); 1..experts per layer (every rank holds an expert; more only when the expert map read has more ranks)")
	f.StringVar(&opts.Stage, "stage", "", "which MindIE dumps to read when both exist: decode (default) or prefill")
	f.StringVarP(&opts.Output, "output", "o", "-", "write the expert map to `FILE` (\"-\": standard output)")
	return cmd
}

func eplbPlanRun(io *streams, opts *eplbPlanOptions) error {
	x, err := pipeline.LoadExperts(opts.Experts, opts.Stage)
	if err != nil {
		return err
	}
	if !x.HasLoads() {
		return usageErr("--experts %s: only log lines (per-rank imbalance), no per-expert token counts: a plan needs MindIE dumps or a layer,expert,tokens CSV", opts.Experts)
	}
	if x.Observed != nil {
		var unknown []string
		for e := 0; e < x.NumExperts && len(unknown) < 8; e++ {
			if !x.IsObserved(e) {
				unknown = append(unknown, fmt.Sprint(e))
			}
		}
		return usageErr("--experts %s: the loads of some experts are unknown (%s…): a plan needs every expert's load (dumps of every rank)", opts.Experts, strings.Join(unknown, ", "))
	}
	ranks := opts.EPSize
	if ranks == 0 {
		ranks = x.Placement.Ranks()
		if ranks < 2 {
			what := "no expert map comes with these loads to give the EP size"
			if ranks == 1 {
				what = "the dumps cover one rank and no expert map gives the EP size"
			}
			return usageErr("--experts %s: %s; give --ep-size N (your expert-parallel size)", opts.Experts, what)
		}
	}
	if hi := eplb.MaxEPSize(x.NumExperts, x.Placement.Ranks()); opts.EPSize > hi {
		return usageErr("--ep-size %d: out of range 1..%d: %s has %d experts per layer, and every EP rank must hold at least one of them (vLLM splits the experts over the EP ranks; more ranks than experts leaves ranks empty)",
			opts.EPSize, hi, opts.Experts, x.NumExperts)
	}
	n := eplb.AutoRedundant(x.NumExperts, ranks)
	if opts.RedundantSet {
		n = opts.Redundant
		if hi := eplb.MaxRedundant(x.NumExperts, ranks); n > hi {
			return usageErr("--redundant %d: out of range 0..%d: each of the %d experts has at most one copy per rank, so at most %d redundant copies with EP size %d",
				n, hi, x.NumExperts, ranks-1, ranks)
		}
	}
	if err := eplb.CheckRedundant(x.NumExperts, ranks, n); err != nil {
		return usageErr("--redundant/--ep-size: %v", err)
	}
	tok := analysis.ExpertTokens(x)
	before, from, err := analysis.BeforePlacement(x, ranks)
	if err != nil {
		return usageErr("%v", err)
	}
	var cur *model.Deployment
	if from == "expert map" {
		cur = before
	}
	plan, err := eplb.Plan(tok, ranks, n, cur)
	if err != nil {
		return err
	}
	slots := (x.NumExperts + n) / ranks
	if err := eplb.Check(plan, x.NumExperts, ranks, slots); err != nil {
		return fmt.Errorf("internal error: invalid plan: %w", err)
	}
	b, err := eplb.Predict(before, tok)
	if err != nil {
		return err
	}
	a, err := eplb.Predict(plan, tok)
	if err != nil {
		return err
	}
	if err := writeOutput(io, opts.Output, func(w ioWriter) error { return pipeline.WriteDeployment(w, plan) }); err != nil {
		return err
	}
	sw := io.out
	if opts.Output == "" || opts.Output == "-" {
		sw = io.err
	}
	stage := ""
	if x.Stage != "" {
		stage = " (" + x.Stage + ")"
	}
	p := func(format string, args ...any) { fmt.Fprintf(sw, format, args...) }
	p("EPLB plan for %s%s: %d MoE layers, %d experts, EP size %d, %d redundant -> %d slots per rank\n",
		opts.Experts, stage, len(x.Layers), x.NumExperts, ranks, n, slots)
	if b.Layers == 0 {
		p("every layer has 0 tokens: nothing to balance\n")
	} else {
		tw := tabwriter.NewWriter(sw, 2, 4, 2, ' ', 0)
		fmt.Fprintf(tw, "predicted max/mean rank load\tbefore (%s)\tafter\n", from)
		fmt.Fprintf(tw, "  worst layer\t%.3f\t%.3f\n", b.Max, a.Max)
		fmt.Fprintf(tw, "  mean over layers\t%.3f\t%.3f\n", b.Mean, a.Mean)
		fmt.Fprintf(tw, "  slowest rank, all layers\t%s tokens\t%s tokens (%+.1f%%)\n", render.Count(b.MaxLoad), render.Count(a.MaxLoad), 100*(a.MaxLoad/b.MaxLoad-1))
		tw.Flush()
	}
	for _, n := range x.Notes {
		p("note: %s\n", n)
	}
	for _, l := range x.Layers[:1] {
		if l.ID != 0 || x.Layers[len(x.Layers)-1].ID != len(x.Layers)-1 {
			p("note: input layers %d..%d are written as MoE layers 0..%d in order\n", l.ID, x.Layers[len(x.Layers)-1].ID, len(x.Layers)-1)
		}
	}
	if opts.Output != "" && opts.Output != "-" {
		abs, err := filepath.Abs(opts.Output)
		if err != nil {
			abs = opts.Output
		}
		p("wrote %s: %d layers x %d ranks x %d slots (vLLM-Ascend expert map)\n", opts.Output, len(plan.Layers), ranks, slots)
		p("serve with: --enable-expert-parallel --additional-config '{\"eplb_config\": {\"expert_map_path\": %q}}'\n", abs)
	}
	return nil
}
