package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/npuprof/npuprof/internal/driver"
	"github.com/npuprof/npuprof/internal/inputs/expertload"
	"github.com/npuprof/npuprof/internal/lang"
	"github.com/npuprof/npuprof/internal/render"
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
	// VLLMAscend and MoELayers: --vllm-ascend-version, --moe-layers.
	VLLMAscend string
	MoELayers  int
	langFlag
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
	intFlag(f, &o.EPSize, "ep-size", 0, fmt.Sprintf("1..%d (at most the experts per layer)", driver.EPLBMaxRanks), "EP ranks to place experts on, `N` (default: the ranks of the expert map read with the dumps); 1..experts per layer (every rank holds an expert; more only when the expert map read has more ranks)")
	f.StringVar(&o.Stage, "stage", "", "which MindIE dumps to read when both exist: decode (default) or prefill")
	f.StringVarP(&o.Output, "output", "o", "-", "write the expert map to `FILE` (\"-\": standard output)")
	f.StringVar(&o.VLLMAscend, "vllm-ascend-version", "", "the vLLM-Ascend `VERSION` that will load the map: the serve-with line's form (top-level expert_map_path up to v0.13.0rc1, eplb_config from v0.13.0rc2; default: the newest, with the other)")
	o.langFlag.register(f)
	intFlag(f, &o.MoELayers, "moe-layers", 0, "1..100000", "the served model's MoE layer count, `N`: a map with more layers is refused (vLLM-Ascend's \"Invalid EPLB Table\"), one with fewer is a note (Qwen3-235B-A22B: 94)")
}

func (o *eplbPlanOptions) check(io *streams, cmd *cobra.Command, _ []string) error {
	if err := o.langFlag.resolve(io, true); err != nil {
		return err
	}
	if o.Experts == "" {
		return usageErr("eplb plan: --experts PATH is required (MindIE dumps or a layer,expert,tokens CSV)")
	}
	o.RedundantSet = cmd.Flags().Changed("redundant")
	if o.RedundantSet && o.Redundant < 0 {
		return usageErr("--redundant %d: out of range 0..experts x (EP size - 1): a count of extra expert copies", o.Redundant)
	}
	if cmd.Flags().Changed("ep-size") && (o.EPSize < 1 || o.EPSize > driver.EPLBMaxRanks) {
		// bounded before anything is read: the plan allocates
		// layers x EP size x slots
		return usageErr("--ep-size %d: out of range 1..%d (a plan has at most one EP rank per expert, and no expert-load input holds more than %d experts per layer)", o.EPSize, driver.EPLBMaxRanks, driver.EPLBMaxRanks)
	}
	if cmd.Flags().Changed("moe-layers") && (o.MoELayers < 1 || o.MoELayers > 100000) {
		return usageErr("--moe-layers %d: out of range 1..100000 (the model's MoE layer count)", o.MoELayers)
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
layer,expert,tokens CSV ('npuprof docs experts'). The plan, per MoE layer: give
the --redundant extra slots to the experts with the most tokens per copy, then
place copies largest first on the least-loaded rank with a free slot and no copy
of that expert, then swap copies while that lowers the busiest rank
('npuprof docs eplb'). Every expert is placed at least once, every rank gets
(experts + redundant) / EP size slots, and no rank holds an expert twice.

"Before" is the expert map read with the dumps when it has --ep-size ranks,
else vLLM's default contiguous split without redundant experts. Predictions
split an expert's tokens evenly over its copies, as vLLM-Ascend's EPLB
worker does. The plan is written to -o (standard output when "-"); the
summary goes to standard output, or to standard error when the plan does.

The serve-with line is in the form --vllm-ascend-version reads: the
top-level expert_map_path up to v0.13.0rc1, eplb_config.expert_map_path from
v0.13.0rc2 (#5533); without it, the newest form and the other. --moe-layers
checks the map against the model: more layers than the model's MoE layers
is refused (vLLM-Ascend's loader raises "Invalid EPLB Table" for a layer id
past moe_layer_count), fewer is a note.`,
		Example: `  # Plan from MindIE dumps with one redundant expert per rank
  $ npuprof eplb plan --experts ./expert_hotspot/ -o expert_map.json

  # From a layer,expert,tokens CSV, 16 EP ranks, 16 redundant slots
  $ npuprof eplb plan --experts moe_load.csv --ep-size 16 --redundant 16 -o expert_map.json

  # For vLLM-Ascend v0.13.0rc1 serving Qwen3-235B-A22B (94 MoE layers)
  $ npuprof eplb plan --experts moe_load.csv --ep-size 16 --vllm-ascend-version v0.13.0rc1 --moe-layers 94 -o expert_map.json

  # Then serve with the plan (vLLM-Ascend static EPLB; v0.13.0rc2 and later)
  $ vllm serve Qwen/Qwen3-235B-A22B --enable-expert-parallel \
      --additional-config '{"eplb_config": {"expert_map_path": "/abs/path/expert_map.json"}}'
  # (v0.13.0rc1 and earlier: --additional-config '{"expert_map_path": "/abs/path/expert_map.json"}')`,
		Args: cobra.NoArgs,
	}, &eplbPlanOptions{}, eplbPlanRun)
}

func eplbPlanRun(_ context.Context, io *streams, opts *eplbPlanOptions) error {
	if opts.VLLMAscend != "" {
		if _, _, err := driver.EPLBServeWith(opts.VLLMAscend, ""); err != nil {
			return err // refused before the loads are read
		}
	}
	p, err := driver.PlanEPLB(driver.EPLBRequest{Experts: opts.Experts, Stage: opts.Stage, EPSize: opts.EPSize,
		Redundant: opts.Redundant, RedundantSet: opts.RedundantSet, VLLMAscend: opts.VLLMAscend, MoELayers: opts.MoELayers})
	if err != nil {
		return err
	}
	if err := writeOutput(io, opts.Output, func(w ioWriter) error { return expertload.WriteDeployment(w, p.Plan) }); err != nil {
		return err
	}
	sw := io.out
	if opts.Output == "" || opts.Output == "-" {
		sw = io.err
	}
	return printPlan(sw, opts, p)
}

// printPlan writes the plan's summary: its shape, the predicted rank
// loads before and after, notes, and how to serve with it.
func printPlan(sw io.Writer, opts *eplbPlanOptions, p *driver.EPLBPlan) error {
	x := p.Loads
	stage := ""
	if x.Stage != "" {
		stage = " (" + x.Stage + ")"
	}
	// the summary in the run's language: zhMessages' formats, the notes
	// through the phrase table
	t := func(format string) string { return messageText(opts.lang, format) }
	pr := func(format string, args ...any) {
		for i, a := range args {
			if s, ok := a.(string); ok {
				args[i] = lang.Translate(opts.lang, s)
			}
		}
		fmt.Fprintf(sw, t(format), args...)
	}
	pr("EPLB plan for %s%s: %d MoE layers, %d experts, EP size %d, %d redundant -> %d slots per rank\n",
		opts.Experts, stage, len(x.Layers), x.NumExperts, p.Ranks, p.Redundant, p.Slots)
	b, a := p.Before, p.After
	if b.Layers == 0 {
		pr("every layer has 0 tokens: nothing to balance\n")
	} else {
		// a Chinese cell's wide characters count twice (widePad after
		// each, dropped once the table is laid out)
		var tb bytes.Buffer
		tw := tabwriter.NewWriter(&tb, 2, 4, 2, ' ', 0)
		fmt.Fprintf(tw, padWide(t("predicted max/mean rank load\tbefore (%s)\tafter\n")), padWide(lang.Translate(opts.lang, p.From)))
		fmt.Fprintf(tw, padWide(t("  worst layer\t%.3f\t%.3f\n")), b.Max, a.Max)
		fmt.Fprintf(tw, padWide(t("  mean over layers\t%.3f\t%.3f\n")), b.Mean, a.Mean)
		fmt.Fprintf(tw, padWide(t("  slowest rank, all layers\t%s tokens\t%s tokens (%+.1f%%)\n")), render.Count(b.MaxLoad), render.Count(a.MaxLoad), 100*(a.MaxLoad/b.MaxLoad-1))
		tw.Flush()
		if _, err := sw.Write(bytes.ReplaceAll(tb.Bytes(), []byte(string(widePad)), nil)); err != nil {
			return err
		}
	}
	for _, n := range x.Notes {
		pr("note: %s\n", n)
	}
	if p.LayerNote != "" {
		pr("note: %s\n", p.LayerNote)
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
		pr("wrote %s: %d layers x %d ranks x %d slots (vLLM-Ascend expert map)\n", opts.Output, len(p.Plan.Layers), p.Ranks, p.Slots)
		config, note, err := driver.EPLBServeWith(opts.VLLMAscend, abs)
		if err != nil {
			return err
		}
		pr("serve with: --enable-expert-parallel --additional-config '%s'\n", config)
		if note != "" {
			pr("  (%s)\n", note)
		}
	}
	return nil
}

// widePad follows each wide character of a table cell so that
// text/tabwriter, which counts runes, counts it twice.
const widePad = '\uE000'

// padWide is s with widePad after each wide (two-column) character.
func padWide(s string) string {
	var b strings.Builder
	for _, r := range s {
		b.WriteRune(r)
		if render.DisplayWidth(string(r)) == 2 {
			b.WriteRune(widePad)
		}
	}
	return b.String()
}
