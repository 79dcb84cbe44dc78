package facts

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/npuprof/npuprof/internal/analysis"
	"github.com/npuprof/npuprof/internal/results"
	"github.com/npuprof/npuprof/internal/rules/rulefmt"
	"github.com/npuprof/npuprof/internal/vllmconf"
)

// Set holds the facts of one evaluation: from the profile, then the
// deployment script, then --fact overrides (later sources win).
type Set struct {
	facts map[string]results.FactValue
	env   map[string]results.FactValue
	// warnings: values of the deployment script left unknown, and
	// conflicts with the profile (in order).
	warnings  []string
	conflicts []results.Conflict
}

// Warnings returns why values of the deployment script were ignored (an
// unknown cudagraph_mode), each naming the file and line; those facts are
// unknown.
func (f *Set) Warnings() []string { return f.warnings }

// NewSet returns an empty set.
func NewSet() *Set {
	return &Set{facts: map[string]results.FactValue{}, env: map[string]results.FactValue{}}
}

// Set records a fact after checking its name and type against the catalog.
// Names "env.NAME" record environment variables.
func (f *Set) Set(name string, v any, source string) error {
	if env, ok := strings.CutPrefix(name, "env."); ok {
		s, isStr := v.(string)
		if !isStr {
			return fmt.Errorf("fact %s: expected text", name)
		}
		f.env[env] = results.FactValue{Name: name, Value: s, Source: source}
		return nil
	}
	d, ok := rulefmt.LookupFact(name)
	if !ok {
		return fmt.Errorf("unknown fact %q (closest: %s)", name, strings.Join(rulefmt.Closest(name, rulefmt.FactNames(), 3), ", "))
	}
	okType := false
	switch d.Type {
	case rulefmt.FactInt:
		_, okType = v.(int)
	case rulefmt.FactBool:
		_, okType = v.(bool)
	case rulefmt.FactString:
		_, okType = v.(string)
	case rulefmt.FactInts:
		_, okType = v.([]int)
	case rulefmt.FactFloat:
		_, okType = v.(float64)
	}
	if !okType {
		return fmt.Errorf("fact %s: expected %s, got %v (%T)", name, d.Type, v, v)
	}
	f.facts[name] = results.FactValue{Name: name, Value: v, Source: source}
	return nil
}

// SetString parses a --fact key=value override.
func (f *Set) SetString(kv, source string) error {
	name, raw, ok := strings.Cut(kv, "=")
	if !ok || name == "" {
		return fmt.Errorf("--fact %q: expected NAME=VALUE (e.g. concurrency=25)", kv)
	}
	if strings.HasPrefix(name, "env.") {
		return f.Set(name, raw, source)
	}
	d, known := rulefmt.LookupFact(name)
	if !known {
		return fmt.Errorf("--fact %s: unknown fact (closest: %s)", name, strings.Join(rulefmt.Closest(name, rulefmt.FactNames(), 3), ", "))
	}
	var v any
	var err error
	switch d.Type {
	case rulefmt.FactInt:
		v, err = strconv.Atoi(raw)
	case rulefmt.FactBool:
		v, err = strconv.ParseBool(raw)
	case rulefmt.FactString:
		v = raw
	case rulefmt.FactFloat:
		v, err = strconv.ParseFloat(raw, 64)
	case rulefmt.FactInts:
		var l []int
		for _, p := range strings.FieldsFunc(strings.Trim(raw, "[]"), func(r rune) bool { return r == ',' || r == ' ' }) {
			n, e := strconv.Atoi(p)
			if e != nil {
				err = e
				break
			}
			l = append(l, n)
		}
		v = l
	}
	if err != nil {
		return fmt.Errorf("--fact %s=%s: expected %s", name, raw, d.Type)
	}
	// Every numeric fact is a size, a count or a rate: a negative value,
	// NaN or ±Inf (which ParseFloat accepts) is a typo, and NaN or Inf
	// would also make the JSON document unwritable.
	if bad := negativeOrNotFinite(v); bad {
		return fmt.Errorf("--fact %s=%s: expected a finite %s >= 0", name, raw, d.Type)
	}
	// string facts with a documented form: refused here rather than
	// failing the rules that read them (exit 3)
	switch name {
	case "vllm_ascend_version":
		if _, err := rulefmt.ParseVersion(raw); err != nil {
			return fmt.Errorf("--fact %s=%s: %v", name, raw, err)
		}
	case "phase":
		if raw != "decode" && raw != "prefill" {
			return fmt.Errorf("--fact %s=%s: expected decode or prefill", name, raw)
		}
	case "moe.dispatcher":
		if raw != analysis.DispatcherAllGather && raw != analysis.DispatcherMC2 && raw != analysis.DispatcherFusedMC2 && raw != analysis.DispatcherAllToAll {
			return fmt.Errorf("--fact %s=%s: expected allgather, mc2, fused_mc2 or alltoall", name, raw)
		}
	case "workload":
		if raw != analysis.WorkloadVLLM && raw != analysis.WorkloadTraining && raw != analysis.WorkloadUnknown {
			return fmt.Errorf("--fact %s=%s: expected vllm, training or unknown", name, raw)
		}
	case "cudagraph_mode":
		m, ok := vllmconf.CUDAGraphMode(raw)
		if !ok {
			return fmt.Errorf("--fact %s=%s: %s", name, raw, invalidFactText(name, raw))
		}
		v = m // vLLM reads the name in any case; rules compare upper case
	}
	return f.Set(name, v, source)
}

// negativeOrNotFinite reports a numeric fact value below 0, NaN or ±Inf.
func negativeOrNotFinite(v any) bool {
	switch x := v.(type) {
	case int:
		return x < 0
	case float64:
		return x < 0 || math.IsNaN(x) || math.IsInf(x, 0)
	case []int:
		for _, n := range x {
			if n < 0 {
				return true
			}
		}
	}
	return false
}

// Get returns a fact.
func (f *Set) Get(name string) (results.FactValue, bool) {
	v, ok := f.facts[name]
	return v, ok
}

// Env returns an environment variable and whether it was seen.
func (f *Set) Env(name string) (string, bool) {
	v, ok := f.env[name]
	if !ok {
		return "", false
	}
	return v.Value.(string), true
}

// HasEnv reports whether any environment variable is known.
func (f *Set) HasEnv() bool { return len(f.env) > 0 }

// List returns every fact, sorted by name (env.* last).
func (f *Set) List() []results.FactValue {
	var out []results.FactValue
	for _, v := range f.facts {
		out = append(out, v)
	}
	slices.SortFunc(out, byName)
	var env []results.FactValue
	for _, v := range f.env {
		env = append(env, v)
	}
	slices.SortFunc(env, byName)
	return append(out, env...)
}

func byName(a, b results.FactValue) int { return cmp.Compare(a.Name, b.Name) }

// Deployment is what the deployment script (--deploy) says, as data: its
// facts, each with its file:line, and apart those whose value vLLM would
// refuse (an unknown cudagraph_mode: Value is the text as written), which
// are warned about and left unknown. cmd reads it with package deploy.
type Deployment struct {
	Path    string
	Facts   []results.FactValue
	Invalid []results.FactValue
}

// NewDeployment makes the Deployment of a script from its facts and its
// invalid ones (deploy.Script.FactsChecked: its Fact has FactValue's
// fields).
func NewDeployment[F ~struct {
	Name   string
	Value  any
	Source string
}](path string, facts, invalid []F) *Deployment {
	d := &Deployment{Path: path}
	for _, f := range facts {
		d.Facts = append(d.Facts, results.FactValue(f))
	}
	for _, f := range invalid {
		d.Invalid = append(d.Invalid, results.FactValue(f))
	}
	return d
}

// Build assembles the facts: inferred from the profile, then the
// deployment script (nil: none), then --fact overrides.
func Build(res *analysis.Result, script *Deployment, overrides []string) (*Set, error) {
	fs := NewSet()
	for _, v := range Infer(res) {
		if err := fs.Set(v.Name, v.Value, v.Source); err != nil {
			return nil, fmt.Errorf("internal error: inferred %v", err)
		}
	}
	if script != nil {
		for _, v := range script.Facts {
			if err := fs.setGiven(v.Name, v.Value, v.Source); err != nil {
				return nil, fmt.Errorf("%s: %v", script.Path, err)
			}
		}
		// a user's script is not refused: the value is ignored with a
		// warning, and the fact stays unknown (a profile cannot say it)
		for _, v := range script.Invalid {
			if v.Name == vllmconf.ConfigKeyFact {
				fs.warnings = append(fs.warnings, fmt.Sprintf("%s: %v", v.Source, v.Value))
				continue
			}
			fs.warnings = append(fs.warnings, fmt.Sprintf("%s: %s", v.Source, invalidFactText(v.Name, fmt.Sprint(v.Value))+"; the fact is left unknown"))
		}
	}
	for _, kv := range overrides {
		if err := fs.setOverride(kv); err != nil {
			return nil, err
		}
	}
	fs.captureConflicts(res)
	return fs, nil
}

// Infer derives what the profile itself says about the deployment:
// group sizes from parallel_group_info, expert parallel from the ep group,
// FLASHCOMM1 from the collectives of one MoE layer, the phase from the
// decode batch, and environment variables from profiler_metadata.json.
func Infer(res *analysis.Result) []results.FactValue {
	var out []results.FactValue
	if res == nil {
		return out
	}
	out = append(out, fact("ranks", len(res.Ranks), "profile: ranks analyzed"))
	sizes := map[string]int{}
	haveGroups := false
	for _, rr := range res.Ranks {
		for _, g := range rr.Groups {
			haveGroups = true
			if n := len(g.GlobalRanks); n > sizes[g.Name] {
				sizes[g.Name] = n
			}
		}
	}
	if haveGroups {
		for _, g := range []string{"tp", "dp", "ep"} {
			if n, ok := sizes[g]; ok {
				out = append(out, fact(g, n, fmt.Sprintf("profile: parallel_group_info group %s has %d ranks", g, n)))
			}
		}
		if _, ok := sizes["ep"]; !ok {
			out = append(out, fact("expert_parallel", false, "profile: parallel_group_info has no ep group"))
		}
	}
	out = append(out, expertParallelFact(res)...)
	// FLASHCOMM1 from the collective pattern of one MoE layer (first rank
	// that has one): reduce-scatters and no all-reduce.
	for _, rr := range res.Ranks {
		m := rr.Metrics
		if _, ok := m[analysis.MetricHCCLPerLayerCount]; !ok {
			continue
		}
		rs, ar, ag := m[analysis.FamilyHCCLPerLayerTypeCount.Of("reducescatter")], m[analysis.FamilyHCCLPerLayerTypeCount.Of("allreduce")], m[analysis.FamilyHCCLPerLayerTypeCount.Of("allgather")]
		src := fmt.Sprintf("profile: rank %d runs %g all-gather, %g reduce-scatter, %g all-reduce per MoE layer", rr.Rank, ag, rs, ar)
		out = append(out, fact("flashcomm1", rs > 0 && ar == 0, src))
		break
	}
	for _, rr := range res.Ranks {
		if b, ok := rr.Metrics[analysis.MetricDecodeBatchObserved]; ok {
			if b <= 1024 {
				out = append(out, fact("phase", "decode", fmt.Sprintf("profile: rank %d attention batch %g tokens", rr.Rank, b)))
			} else {
				out = append(out, fact("phase", "prefill", fmt.Sprintf("profile: rank %d attention batch %g tokens", rr.Rank, b)))
			}
			break
		}
	}
	if w := analysis.Workload(res); len(res.Ranks) > 0 {
		out = append(out, fact("workload", w.Kind, "profile: "+strings.Join(w.Evidence, "; ")))
	}
	out = append(out, dispatcherFact(res)...)
	out = append(out, servingFacts(res)...)
	out = append(out, versionFacts(res)...)
	for _, rr := range res.Ranks {
		if len(rr.Env) == 0 {
			continue
		}
		keys := slices.Sorted(maps.Keys(rr.Env))
		for _, k := range keys {
			out = append(out, fact("env."+k, rr.Env[k], fmt.Sprintf("profile: rank %d profiler_metadata.json ENV_VARIABLES", rr.Rank)))
		}
		break
	}
	return out
}

// dispatcherFact is moe.dispatcher: the MoE dispatcher path of the first
// rank that has MoE layers, read from the kernels that open them.
// expertParallelFact is expert_parallel where the profile shows it
// running: the MC2 or all-to-all dispatcher (which exchange tokens between
// EP ranks, and exist only with expert parallel), or collectives on the ep
// group. An ep group alone says nothing: vLLM creates one for every MoE
// model, expert parallel or not. Without either sign the fact is left to
// the script or --fact (a capture with the AllGather dispatcher and no ep
// collectives may run either way).
func expertParallelFact(res *analysis.Result) []results.FactValue {
	for _, rr := range res.Ranks {
		if m := analysis.MoEOf(rr); m != nil && (m.Dispatcher == analysis.DispatcherMC2 || m.Dispatcher == analysis.DispatcherFusedMC2 || m.Dispatcher == analysis.DispatcherAllToAll) {
			return []results.FactValue{fact("expert_parallel", true, fmt.Sprintf("profile: rank %d runs the %s dispatcher (tokens exchanged between EP ranks: %s)", rr.Rank, m.Dispatcher, m.DispatcherEvidence))}
		}
	}
	for _, rr := range res.Ranks {
		if n := rr.Metrics[analysis.FamilyHCCLGroupCount.Of("ep")]; n > 0 {
			return []results.FactValue{fact("expert_parallel", true, fmt.Sprintf("profile: rank %d runs %g collectives on the ep group", rr.Rank, n))}
		}
	}
	return nil
}

func dispatcherFact(res *analysis.Result) []results.FactValue {
	for _, rr := range res.Ranks {
		if m := analysis.MoEOf(rr); m != nil && m.Dispatcher != "" {
			return []results.FactValue{fact("moe.dispatcher", m.Dispatcher, fmt.Sprintf("profile: rank %d: %s", rr.Rank, m.DispatcherEvidence))}
		}
	}
	return nil
}

// servingFacts are the serving.* facts of the serving context (vLLM's log,
// vllm bench serve), and the concurrency they imply: running requests
// stand for the concurrency when nothing else says it (a deployment script
// or --fact, read later, win).
func servingFacts(res *analysis.Result) []results.FactValue {
	s := res.Serving
	if s == nil {
		return nil
	}
	var out []results.FactValue
	for _, d := range rulefmt.Facts {
		if !strings.HasPrefix(d.Name, "serving.") {
			continue
		}
		if v, ok := s.Metrics[d.Name]; ok {
			out = append(out, fact(d.Name, v, "vLLM: "+s.Sources[d.Name]))
		}
	}
	if v, ok := s.Metrics["serving.concurrency"]; ok && v >= 1 {
		out = append(out, fact("concurrency", int(math.Round(v)), fmt.Sprintf("vLLM: serving.concurrency %g rounded (%s)", v, s.Sources["serving.concurrency"])))
	}
	return out
}

// invalidFactText says why a fact value is refused and names the closest
// valid value (only cudagraph_mode has a closed set of values).
func invalidFactText(name, raw string) string {
	closest := rulefmt.Closest(strings.ToUpper(strings.TrimSpace(raw)), vllmconf.CUDAGraphModes, 1)
	return fmt.Sprintf("%s %q is not a vLLM CUDAGraphMode (%s); closest: %s", name, raw, strings.Join(vllmconf.CUDAGraphModes, ", "), closest[0])
}

// versionFacts are the stack versions the profile states: profiler_info's
// cann_version and torch_npu_version, then what the job wrote into
// profiler_metadata.json, then the start-up lines of vLLM's log (first
// rank that has each; ranks that differ are named in the source).
func versionFacts(res *analysis.Result) []results.FactValue {
	var out []results.FactValue
	for _, name := range analysis.VersionFacts {
		val, src := "", ""
		var others []string
		for _, rr := range res.Ranks {
			v, s := "", ""
			switch {
			case name == "cann_version" && rr.CANN != "":
				v, s = rr.CANN, fmt.Sprintf("profile: rank %d profiler_info", rr.Rank)
			case name == "torch_npu_version" && rr.TorchNPU != "":
				v, s = rr.TorchNPU, fmt.Sprintf("profile: rank %d profiler_info", rr.Rank)
			case rr.MetaVersions[name] != "":
				v, s = vllmconf.NormalizeVersion(name, rr.MetaVersions[name]), fmt.Sprintf("profile: rank %d profiler_metadata.json %s", rr.Rank, name)
			}
			switch {
			case v == "":
			case val == "":
				val, src = v, s
			case v != val && !slices.Contains(others, v):
				others = append(others, fmt.Sprintf("rank %d has %s", rr.Rank, v))
			}
		}
		if val == "" && res.Serving != nil {
			if v, ok := res.Serving.Versions[name]; ok {
				val, src = v, "vLLM: "+res.Serving.VersionSources[name]
			}
		}
		if name == "vllm_ascend_version" && val != "" {
			if _, err := rulefmt.ParseVersion(val); err != nil {
				continue // not a version the rules can compare
			}
		}
		if val != "" {
			if len(others) > 0 {
				src += " (" + strings.Join(others, ", ") + ")"
			}
			out = append(out, fact(name, val, src))
		}
	}
	return out
}

// fact is one fact, its value and where it came from.
func fact(name string, value any, source string) results.FactValue {
	return results.FactValue{Name: name, Value: value, Source: source}
}
