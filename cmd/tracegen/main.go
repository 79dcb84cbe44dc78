// Command tracegen writes synthetic torch_npu profiler output (one
// *_ascend_pt folder per rank, vLLM-Ascend Qwen3-MoE decode) plus the exact
// ground truth in npuprof_truth.json.
//
//	tracegen -scenario ep-fc1-cumsum -o DIR [-ranks 8 -layers 8 -steps 4 -seed 1 ...]
//	tracegen -list
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/npuprof/npuprof/internal/tracegen"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("tracegen", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		scenario = fs.String("scenario", "ep-fc1-cumsum", "built-in scenario to start from (see -list)")
		out      = fs.String("o", "", "output directory (required unless -list)")
		list     = fs.Bool("list", false, "list the built-in scenarios and exit")
		rank     = fs.Int("rank", -1, "write only this rank's folder (no npuprof_truth.json)")
		quiet    = fs.Bool("q", false, "do not print the ground truth summary")
		layout   = fs.String("layout", "torch_npu_text", "output layout: torch_npu_text (*_ascend_pt text export), msprof_text (PROF_* folders), torch_npu_db (*_ascend_pt with ascend_pytorch_profiler_{rank}.db)")
	)
	// Overrides of scenario fields; applied only when given on the command
	// line (the scenario's own value is used otherwise).
	ranks := fs.Int("ranks", 0, "number of ranks")
	layers := fs.Int("layers", 0, "MoE layers per decode step")
	steps := fs.Int("steps", 0, "decode steps")
	batch := fs.Int("batch", 0, "decode batch (tokens per step)")
	seed := fs.Int64("seed", 0, "random seed")
	hot := fs.Int("hot-rank", -1, "slow rank, -1 for none")
	skew := fs.Float64("skew", 0, "GroupedMatmul slow-down factor of the hot rank")
	slow := fs.Int("slow-rank", -1, "rank whose every compute kernel is -slow-factor times longer, -1 for none")
	slowF := fs.Float64("slow-factor", 0, "compute slow-down factor of -slow-rank")
	slice := fs.Int("msprof-slice", 0, "msprof_text layout: events per msprof_slice_* file (0: one msprof_*.json)")
	hotExperts := fs.Int("hot-experts", 0, "hot experts per MoE layer (EP only; writes a MindIE expert-load dump in DIR/expert_hotspot)")
	hotFactor := fs.Float64("hot-expert-factor", 0, "routing weight multiplier of the hot experts")
	size := fs.Int64("size", 0, "choose -steps so that one rank's trace_view.json is about this many bytes")
	bools := []struct {
		name string
		dst  func(*tracegen.Scenario) *bool
		val  *bool
	}{
		{name: "ep", dst: func(s *tracegen.Scenario) *bool { return &s.ExpertParallel }},
		{name: "fc1", dst: func(s *tracegen.Scenario) *bool { return &s.FlashComm1 }},
		{name: "cumsum", dst: func(s *tracegen.Scenario) *bool { return &s.Cumsum }},
		{name: "profiler-steps", dst: func(s *tracegen.Scenario) *bool { return &s.ProfilerSteps }},
		{name: "sampler-cumsum", dst: func(s *tracegen.Scenario) *bool { return &s.SamplerCumsum }},
		{name: "event-waits", dst: func(s *tracegen.Scenario) *bool { return &s.EventWaits }},
		{name: "aiv", dst: func(s *tracegen.Scenario) *bool { return &s.AivComm }},
		{name: "comm-json", dst: func(s *tracegen.Scenario) *bool { return &s.CommJSON }},
		{name: "device-meta-first", dst: func(s *tracegen.Scenario) *bool { return &s.DeviceMetaFirst }},
	}
	usage := map[string]string{
		"ep": "expert parallel", "fc1": "FLASHCOMM1 (TP AG/RS + EP AG x2/RS per layer)",
		"cumsum": "MoE AI_CPU Cumsum after MoeInitRoutingCustom", "profiler-steps": "emit ProfilerStep#N events (Step Id column)",
		"sampler-cumsum": "sampler top-p Cumsum (AI core, not MoE)", "event-waits": "EVENT_RECORD/EVENT_WAIT tasks",
		"aiv": "AIV-mode TP collectives (allreduceAivKernel rows)", "comm-json": "write communication.json",
		"device-meta-first": "write device process/thread metadata before the device slices, as real torch_npu traces do (default: after, the harder case)",
	}
	for i := range bools {
		bools[i].val = fs.Bool(bools[i].name, false, usage[bools[i].name]+" (use -NAME=false to turn off)")
	}
	fs.Usage = func() {
		fmt.Fprintf(stderr, `Usage: tracegen -scenario NAME -o DIR [overrides]
       tracegen -list

Writes synthetic torch_npu profiler output for vLLM-Ascend Qwen3-MoE decode:
one <worker>_<pid>_<timestamp>_ascend_pt folder per rank (profiler_info_N.json,
profiler_metadata.json, ASCEND_PROFILER_OUTPUT/{trace_view.json,
kernel_details.csv, step_trace_time.csv, communication.json}),
DIR/npuprof_truth.json with the exact ground truth of every metric and, with
-hot-experts, a MindIE expert-load dump in DIR/expert_hotspot.
-layout msprof_text writes the same run as msprof PROF_* folders
(mindstudio_profiler_output/msprof_*.json, op_summary_*.csv, task_time_*.csv,
...); -layout torch_npu_db as ascend_pytorch_profiler_{rank}.db + analysis.db.
Output is deterministic for a given scenario and seed. Flags other than
-scenario, -o, -list, -rank and -q override the scenario's value only when
given.

Flags:
`)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return 0
		}
		return 2
	}
	if *list {
		tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "NAME\tRANKS\tLAYERS\tSTEPS\tBATCH\tEP\tFC1\tCUMSUM\tPSTEPS\tSAMPLER\tHOT\tAIV\tHOT EXPERTS")
		for _, s := range tracegen.Scenarios() {
			hotS := "-"
			if s.HotRank >= 0 {
				hotS = fmt.Sprintf("%d x%g", s.HotRank, s.SkewFactor)
			}
			hotE := "-"
			if s.HotExperts > 0 {
				hotE = fmt.Sprintf("%d x%g", s.HotExperts, s.HotExpertFactor)
			}
			fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%v\t%v\t%v\t%v\t%v\t%s\t%v\t%s\n", s.Name, s.Ranks, s.Layers, s.Steps, s.Batch,
				s.ExpertParallel, s.FlashComm1, s.Cumsum, s.ProfilerSteps, s.SamplerCumsum, hotS, s.AivComm, hotE)
		}
		tw.Flush()
		return 0
	}
	if *out == "" {
		fmt.Fprintln(stderr, "tracegen: -o DIR is required")
		fs.Usage()
		return 2
	}
	s, ok := tracegen.Lookup(*scenario)
	if !ok {
		fmt.Fprintf(stderr, "tracegen: unknown scenario %q (known: %s)\n", *scenario, strings.Join(tracegen.ScenarioNames(), ", "))
		return 2
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if set["ranks"] {
		s.Ranks = *ranks
	}
	if set["layers"] {
		s.Layers = *layers
	}
	if set["steps"] {
		s.Steps = *steps
	}
	if set["batch"] {
		s.Batch = *batch
	}
	if set["seed"] {
		s.Seed = *seed
	}
	if set["hot-rank"] {
		s.HotRank = *hot
	}
	if set["skew"] {
		s.SkewFactor = *skew
	}
	if set["slow-rank"] {
		s.SlowRank = *slow
		if !set["slow-factor"] && s.SlowFactor == 0 {
			s.SlowFactor = 1.5
		}
	}
	if set["slow-factor"] {
		s.SlowFactor = *slowF
	}
	if set["msprof-slice"] {
		s.MsprofSlice = *slice
	}
	if set["hot-experts"] {
		s.HotExperts = *hotExperts
		if s.HotExpertFactor == 0 && !set["hot-expert-factor"] {
			s.HotExpertFactor = 8
		}
	}
	if set["hot-expert-factor"] {
		s.HotExpertFactor = *hotFactor
	}
	lay, err := tracegen.ParseLayout(*layout)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 2
	}
	for _, b := range bools {
		if set[b.name] {
			*b.dst(&s) = *b.val
		}
	}
	if set["size"] {
		sized, err := tracegen.SizedScenario(s, *size)
		if err != nil {
			fmt.Fprintln(stderr, err)
			return 2
		}
		s = sized
	}
	if err := s.Validate(); err != nil {
		fmt.Fprintln(stderr, err)
		return 2
	}
	if *rank >= 0 {
		if lay != tracegen.LayoutTorchNPUText {
			fmt.Fprintln(stderr, "tracegen: -rank writes the torch_npu_text layout only")
			return 2
		}
		rt, err := tracegen.GenerateRank(*out, s, *rank)
		if err != nil {
			fmt.Fprintln(stderr, err)
			return 1
		}
		if !*quiet {
			fmt.Fprint(stdout, rt.String())
		}
		return 0
	}
	t, err := tracegen.GenerateLayout(*out, s, lay)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	if !*quiet {
		fmt.Fprintf(stdout, "scenario %s: %d ranks, %d layers, %d steps -> %s\n", s.Name, s.Ranks, s.Layers, s.Steps, *out)
		for _, r := range t.Ranks {
			fmt.Fprint(stdout, r.String())
		}
	}
	return 0
}
