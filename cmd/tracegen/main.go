// Command tracegen writes synthetic torch_npu profiler output (one
// *_ascend_pt folder per rank, vLLM-Ascend Qwen3-MoE decode) plus the exact
// ground truth in npuprof_truth.json.
//
//	tracegen -scenario ep-fc1-cumsum -o DIR [-ranks 8 -layers 8 -steps 4 -seed 1 ...]
//	tracegen -service a3-90 [-spelling datetime] -o DIR
//	tracegen -list
package main

import (
	"cmp"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/npuprof/npuprof/internal/tracegen"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// options are the parsed command line.
type options struct {
	scenario, out, layout string
	service, spelling     string
	list, quiet           bool
	rank                  int
	size                  int64
	overrides             []override
}

// override is a flag that replaces a scenario field only when given on the
// command line (the scenario's own value is used otherwise).
type override struct {
	name  string
	apply func(*tracegen.Scenario)
}

// overrideVar records the override of field by the flag holding val.
func overrideVar[T any](o *options, name string, val *T, field func(*tracegen.Scenario) *T) {
	o.overrides = append(o.overrides, override{name, func(s *tracegen.Scenario) { *field(s) = *val }})
}

func run(args []string, stdout, stderr io.Writer) int {
	fs, o := newFlags(stderr)
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return 0
		}
		return 2
	}
	if o.list {
		listScenarios(stdout)
		return 0
	}
	if o.out == "" {
		fmt.Fprintln(stderr, "tracegen: -o DIR is required")
		fs.Usage()
		return 2
	}
	if o.service != "" {
		return o.generateService(stdout, stderr)
	}
	s, lay, err := o.resolve(fs)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 2
	}
	return o.generate(s, lay, stdout, stderr)
}

// newFlags defines the flags, with their help.
func newFlags(stderr io.Writer) (*flag.FlagSet, *options) {
	fs := flag.NewFlagSet("tracegen", flag.ContinueOnError)
	fs.SetOutput(stderr)
	o := &options{}
	fs.StringVar(&o.scenario, "scenario", "ep-fc1-cumsum", "built-in scenario to start from (see -list)")
	fs.StringVar(&o.out, "o", "", "output directory (required unless -list)")
	fs.BoolVar(&o.list, "list", false, "list the built-in scenarios and exit")
	fs.IntVar(&o.rank, "rank", -1, "write only this rank's folder (no npuprof_truth.json)")
	fs.BoolVar(&o.quiet, "q", false, "do not print the ground truth summary")
	fs.StringVar(&o.layout, "layout", "torch_npu_text", "output layout: torch_npu_text (*_ascend_pt text export), msprof_text (PROF_* folders), torch_npu_db (*_ascend_pt with ascend_pytorch_profiler_{rank}.db)")
	fs.StringVar(&o.service, "service", "", "write this serving run's MS Service Profiler parse output (request.csv, batch.csv, kvcache.csv, forward.csv) instead of a device capture (see -list)")
	fs.StringVar(&o.spelling, "spelling", tracegen.ServiceDatetime, "with -service: the column spelling, one of "+strings.Join(tracegen.ServiceSpellings, ", "))
	fs.Int64Var(&o.size, "size", 0, "choose -steps so that one rank's trace_view.json is about this many bytes")
	type sc = tracegen.Scenario
	overrideVar(o, "ranks", fs.Int("ranks", 0, "number of ranks"), func(s *sc) *int { return &s.Ranks })
	overrideVar(o, "layers", fs.Int("layers", 0, "MoE layers per decode step"), func(s *sc) *int { return &s.Layers })
	overrideVar(o, "steps", fs.Int("steps", 0, "decode steps"), func(s *sc) *int { return &s.Steps })
	overrideVar(o, "batch", fs.Int("batch", 0, "decode batch (tokens per step)"), func(s *sc) *int { return &s.Batch })
	overrideVar(o, "seed", fs.Int64("seed", 0, "random seed"), func(s *sc) *int64 { return &s.Seed })
	overrideVar(o, "hot-rank", fs.Int("hot-rank", -1, "slow rank, -1 for none"), func(s *sc) *int { return &s.HotRank })
	overrideVar(o, "skew", fs.Float64("skew", 0, "GroupedMatmul slow-down factor of the hot rank"), func(s *sc) *float64 { return &s.SkewFactor })
	overrideVar(o, "slow-rank", fs.Int("slow-rank", -1, "rank whose every compute kernel is -slow-factor times longer, -1 for none"), func(s *sc) *int { return &s.SlowRank })
	overrideVar(o, "slow-factor", fs.Float64("slow-factor", 0, "compute slow-down factor of -slow-rank"), func(s *sc) *float64 { return &s.SlowFactor })
	overrideVar(o, "msprof-slice", fs.Int("msprof-slice", 0, "msprof_text layout: events per msprof_slice_* file (0: one msprof_*.json)"), func(s *sc) *int { return &s.MsprofSlice })
	overrideVar(o, "hot-experts", fs.Int("hot-experts", 0, "hot experts per MoE layer (EP only; writes a MindIE expert-load dump in DIR/expert_hotspot)"), func(s *sc) *int { return &s.HotExperts })
	overrideVar(o, "hot-expert-factor", fs.Float64("hot-expert-factor", 0, "routing weight multiplier of the hot experts"), func(s *sc) *float64 { return &s.HotExpertFactor })
	for _, b := range []struct {
		name, usage string
		field       func(*sc) *bool
	}{
		{"ep", "expert parallel", func(s *sc) *bool { return &s.ExpertParallel }},
		{"fc1", "FLASHCOMM1 (TP AG/RS + EP AG x2/RS per layer)", func(s *sc) *bool { return &s.FlashComm1 }},
		{"cumsum", "MoE AI_CPU Cumsum after MoeInitRoutingCustom", func(s *sc) *bool { return &s.Cumsum }},
		{"profiler-steps", "emit ProfilerStep#N events (Step Id column)", func(s *sc) *bool { return &s.ProfilerSteps }},
		{"sampler-cumsum", "sampler top-p Cumsum (AI core, not MoE)", func(s *sc) *bool { return &s.SamplerCumsum }},
		{"event-waits", "EVENT_RECORD/EVENT_WAIT tasks", func(s *sc) *bool { return &s.EventWaits }},
		{"aiv", "AIV-mode TP collectives (allreduceAivKernel rows)", func(s *sc) *bool { return &s.AivComm }},
		{"comm-json", "write communication.json", func(s *sc) *bool { return &s.CommJSON }},
		{"device-meta-first", "write device process/thread metadata before the device slices, as real torch_npu traces do (default: after, the harder case)", func(s *sc) *bool { return &s.DeviceMetaFirst }},
	} {
		overrideVar(o, b.name, fs.Bool(b.name, false, b.usage+" (use -NAME=false to turn off)"), b.field)
	}
	fs.Usage = func() {
		fmt.Fprint(stderr, usageText)
		fs.PrintDefaults()
	}
	return fs, o
}

const usageText = `Usage: tracegen -scenario NAME -o DIR [overrides]
       tracegen -service NAME [-spelling S] -o DIR
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
-service writes a serving run's MS Service Profiler parse output instead
(DIR/npuprof_service_truth.json holds the exact service.* metrics).
Output is deterministic for a given scenario and seed. Flags other than
-scenario, -o, -list, -rank and -q override the scenario's value only when
given.

Examples:
  tracegen -list
  tracegen -scenario ep-fc1-cumsum -o /tmp/ep8 && npuprof analyze /tmp/ep8
  tracegen -scenario hot-rank -ranks 16 -steps 11 -layout msprof_text -o /tmp/hot16 -q

Exit codes:
  0  written (or -list, -h)
  1  the output could not be written
  2  usage error (unknown flag or scenario, -o missing, a value out of range)

Flags:
`

// listScenarios prints the table of built-in scenarios.
func listScenarios(stdout io.Writer) {
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
	fmt.Fprintln(stdout, "\nThe field reports' captures and the before/after pairs of single fixes (-scenario NAME too):")
	tw = tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tRANKS\tTP\tBATCH\tVLLM-ASCEND\tWHAT")
	for _, e := range tracegen.Captures() {
		s := e.Scenario
		v := cmp.Or(s.VLLMAscendVersion, "-")
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%s\t%s\n", s.Name, s.Ranks, s.TPSize(), s.Batch, v, e.What)
	}
	tw.Flush()
	fmt.Fprintln(stdout, "\nThe field systems' serving runs (-service NAME, MS Service Profiler's parse output):")
	tw = tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tREQUESTS\tCONCURRENCY\tDP\tBUSY DP\tCACHE HITS\tPREEMPTIONS")
	for _, s := range tracegen.ServiceScenarios() {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%v\t%d\n", s.Name, s.Requests, s.Concurrency, s.DP, s.Busy, s.CacheHit, s.Preemptions)
	}
	tw.Flush()
}

// generateService writes -service's folder and its truth.
func (o *options) generateService(stdout, stderr io.Writer) int {
	var sc tracegen.ServiceScenario
	var names []string
	for _, s := range tracegen.ServiceScenarios() {
		names = append(names, s.Name)
		if s.Name == o.service {
			sc = s
		}
	}
	if sc.Name == "" {
		fmt.Fprintf(stderr, "tracegen: unknown service run %q (known: %s)\n", o.service, strings.Join(names, ", "))
		return 2
	}
	if !slices.Contains(tracegen.ServiceSpellings, o.spelling) {
		fmt.Fprintf(stderr, "tracegen: unknown -spelling %q (known: %s)\n", o.spelling, strings.Join(tracegen.ServiceSpellings, ", "))
		return 2
	}
	if o.out == "" {
		fmt.Fprintln(stderr, "tracegen: -o DIR is required")
		return 2
	}
	tr, err := tracegen.GenerateService(o.out, sc, o.spelling)
	if err == nil {
		var b []byte
		if b, err = json.MarshalIndent(tr, "", "  "); err == nil {
			err = os.WriteFile(filepath.Join(o.out, "npuprof_service_truth.json"), append(b, '\n'), 0o644)
		}
	}
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	if !o.quiet {
		fmt.Fprintf(stdout, "service run %s (%s spelling): %d requests -> %s\n", sc.Name, o.spelling, sc.Requests, o.out)
	}
	return 0
}

// resolve builds the scenario to write: the named one with the given
// overrides applied, sized by -size, validated.
func (o *options) resolve(fs *flag.FlagSet) (tracegen.Scenario, tracegen.Layout, error) {
	s, ok := tracegen.Lookup(o.scenario)
	if !ok {
		return s, "", fmt.Errorf("tracegen: unknown scenario %q (known: %s)", o.scenario, strings.Join(tracegen.ScenarioNames(), ", "))
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	for _, ov := range o.overrides {
		if set[ov.name] {
			ov.apply(&s)
		}
	}
	// A slow rank or hot experts given without their factor get a default.
	if set["slow-rank"] && !set["slow-factor"] && s.SlowFactor == 0 {
		s.SlowFactor = 1.5
	}
	if set["hot-experts"] && !set["hot-expert-factor"] && s.HotExpertFactor == 0 {
		s.HotExpertFactor = 8
	}
	lay, err := tracegen.ParseLayout(o.layout)
	if err != nil {
		return s, lay, err
	}
	if set["size"] {
		if s, err = tracegen.SizedScenario(s, o.size); err != nil {
			return s, lay, err
		}
	}
	if err := s.Validate(); err != nil {
		return s, lay, err
	}
	if o.rank >= 0 && lay != tracegen.LayoutTorchNPUText {
		return s, lay, fmt.Errorf("tracegen: -rank writes the torch_npu_text layout only")
	}
	return s, lay, nil
}

// generate writes the scenario (one rank with -rank) and prints the ground
// truth summary unless -q.
func (o *options) generate(s tracegen.Scenario, lay tracegen.Layout, stdout, stderr io.Writer) int {
	if o.rank >= 0 {
		rt, err := tracegen.GenerateRank(o.out, s, o.rank)
		if err != nil {
			fmt.Fprintln(stderr, err)
			return 1
		}
		if !o.quiet {
			fmt.Fprint(stdout, rt.String())
		}
		return 0
	}
	t, err := tracegen.GenerateLayout(o.out, s, lay)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	if !o.quiet {
		fmt.Fprintf(stdout, "scenario %s: %d ranks, %d layers, %d steps -> %s\n", s.Name, s.Ranks, s.Layers, s.Steps, o.out)
		for _, r := range t.Ranks {
			fmt.Fprint(stdout, r.String())
		}
	}
	return 0
}
