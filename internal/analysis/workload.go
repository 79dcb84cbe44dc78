package analysis

import (
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/npuprof/npuprof/internal/parser/model"
)

// Workload kinds (the JSON document's context.workload, fact.workload).
const (
	WorkloadVLLM     = "vllm"
	WorkloadTraining = "training"
	WorkloadUnknown  = "unknown"
)

// Step phases (ranks[].steps[].phase).
const (
	PhaseDecode  = "decode"
	PhasePrefill = "prefill"
	PhaseMixed   = "mixed"
)

// DecodeMaxTokens is the largest attention batch (tokens) read as a decode
// batch; larger ones are prefill (fact.phase uses the same bound).
const DecodeMaxTokens = 1024

// Clue is one sign of a workload kind found in a rank's profile.
type Clue struct {
	Kind    string // vllm or training
	What    string // what was looked for, e.g. "backward ops"
	Example string // one name that matched
	Count   int    // how many ops (or variables) matched
}

func (c Clue) String() string {
	if c.Count > 1 {
		return fmt.Sprintf("%s: %s (%d)", c.What, c.Example, c.Count)
	}
	return fmt.Sprintf("%s: %s", c.What, c.Example)
}

// WorkloadResult is what one rank's profile says about the workload, and
// each ProfilerStep's phase.
type WorkloadResult struct {
	Clues []Clue
	// StepPhase is each step's phase by step id (decode, prefill, mixed);
	// a step without attention kernels is absent.
	StepPhase map[int]string
}

// workloadMatchers look for signs of a workload in names: framework ops
// (and, for training, device op types). match is re on an ASCII name
// (without the regexp engine: it runs on every distinct name of every
// rank); a name with other bytes goes through re itself (Unicode case
// folding).
var workloadMatchers = []workloadMatcher{
	{WorkloadVLLM, "vLLM-Ascend custom ops", lazyRegexp(`^_C_ascend::`),
		func(n string) bool { return strings.HasPrefix(n, "_C_ascend::") }, false},
	{WorkloadVLLM, "vllm in framework op names", lazyRegexp(`(?i)vllm`),
		func(n string) bool { return containsASCIIFold(n, "vllm") }, false},
	{WorkloadTraining, "autograd backward ops", lazyRegexp(`^autograd::engine::evaluate_function|Backward[0-9]*$`),
		func(n string) bool {
			return strings.HasPrefix(n, "autograd::engine::evaluate_function") ||
				strings.HasSuffix(strings.TrimRight(n, "0123456789"), "Backward")
		}, false},
	{WorkloadTraining, "optimizer ops", lazyRegexp(`^Optimizer\.(step|zero_grad)|torch/optim/`),
		func(n string) bool {
			return strings.HasPrefix(n, "Optimizer.step") || strings.HasPrefix(n, "Optimizer.zero_grad") ||
				strings.Contains(n, "torch/optim/")
		}, false},
	{WorkloadTraining, "gradient reduction (DDP)", lazyRegexp(`reducer::|ddp\.reducer`),
		func(n string) bool { return strings.Contains(n, "reducer::") || strings.Contains(n, "ddp.reducer") }, false},
	{WorkloadTraining, "Megatron/MindSpeed names", lazyRegexp(`(?i)megatron|mindspeed`),
		func(n string) bool { return containsASCIIFold(n, "megatron") || containsASCIIFold(n, "mindspeed") }, false},
	{WorkloadTraining, "gradient kernels", lazyRegexp(`Backprop|Grad(V[0-9]+)?$|GradWith`),
		func(n string) bool {
			if strings.Contains(n, "Backprop") || strings.Contains(n, "GradWith") || strings.HasSuffix(n, "Grad") {
				return true
			}
			t := strings.TrimRight(n, "0123456789")
			return len(t) < len(n) && strings.HasSuffix(t, "GradV")
		}, true},
}

// workloadMatcher is one sign of a workload in names.
type workloadMatcher struct {
	kind, what string
	re         func() *regexp.Regexp // compiled on first use
	match      func(string) bool
	device     bool // match device op types instead of framework ops
}

// matches reports whether name n is a sign of m.
func (m *workloadMatcher) matches(n string) bool {
	for i := 0; i < len(n); i++ {
		if n[i] >= 0x80 {
			return m.re().MatchString(n)
		}
	}
	return m.match(n)
}

// lazyRegexp is the regexp of expr, compiled on first use (the names
// are almost always ASCII: most runs never use it).
// kept: lazyre.New's body; analysis imports only the model (docs/architecture.md).
func lazyRegexp(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}

// containsASCIIFold reports whether the ASCII text s contains the
// lower-case ASCII word sub, ignoring case.
func containsASCIIFold(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		j := 0
		for j < len(sub) && s[i+j]|0x20 == sub[j] {
			j++
		}
		if j == len(sub) {
			return true
		}
	}
	return false
}

// reVLLMWorker matches the rank folder name of a vLLM worker
// (dp0_pp0_tp3_dcp0_ep0_rank3_<pid>_<ts>_ascend_pt).
var reVLLMWorker = lazyRegexp(`(^|_)dp[0-9]+_pp[0-9]+_tp[0-9]+_.*rank[0-9]+_`)

// WorkloadPass finds what kind of job was profiled (vLLM serving,
// training) from the profile alone, and each step's phase.
var WorkloadPass = &Pass{
	Name: "workload",
	Doc: `workload signs and step phases

A rank shows vLLM serving through vLLM-Ascend's custom op namespace
(_C_ascend::) or "vllm" in framework op names, VLLM_* variables in
profiler_metadata.json and a vLLM worker's folder name; training through
autograd backward ops, optimizer ops, DDP gradient reduction,
Megatron/MindSpeed names, gradient kernels (Backprop, *Grad), MindSpeed's
distributed_args in profiler_metadata.json and Megatron's group names (mp,
mp_exp, tp_exp, dp_cp, ...) in parallel_group_info. A step's
phase comes from the leading dimension of its attention kernels' first
input: at most 1024 tokens decode, more prefill, both mixed.`,
	Requires: []*Pass{TimelinePass, StepsPass},
	Run: func(ctx *Context) (any, error) {
		r := ctx.Rank
		res := &WorkloadResult{StepPhase: map[int]string{}}
		counts := make([]int32, r.Syms.Len()+1) // one buffer for both walks
		res.Clues = append(res.Clues, nameClues(r, false, counts)...)
		clear(counts)
		res.Clues = append(res.Clues, nameClues(r, true, counts)...)
		res.Clues = append(res.Clues, envClues(r)...)
		res.Clues = append(res.Clues, metadataClues(r)...)
		if base := filepath.Base(r.Path); reVLLMWorker().MatchString(base) {
			res.Clues = append(res.Clues, Clue{Kind: WorkloadVLLM, What: "vLLM worker folder name", Example: base, Count: 1})
		}
		tl := TimelineOf(ctx)
		steps := StepsOf(ctx)
		if tl != nil && tl.HaveCompute {
			stepPhases(r, tl, steps, res.StepPhase)
		}
		return res, nil
	},
}

// WorkloadOf is the rank's signs of a workload kind and its steps'
// phases (see Workload for the whole profile).
var WorkloadOf = RankResultOf[*WorkloadResult](WorkloadPass)

// nameClues counts distinct framework op names (or device op types) that
// match each matcher, once per name symbol.
func nameClues(r *model.Rank, device bool, counts []int32) []Clue {
	if device {
		// by extras first: a task's op type is its extras'
		byExtra := make([]int32, r.Extras.Len())
		for i := range r.Tasks {
			if x := r.Tasks[i].Extra.Index(); x < len(byExtra) {
				byExtra[x]++
			}
		}
		for x, n := range byExtra {
			if s := int(r.Extras.Get(model.Extra(x)).OpType); n > 0 && s < len(counts) {
				counts[s] += n
			}
		}
	} else {
		r.CountOpNames(counts)
	}
	var out []Clue
	for mi := range workloadMatchers {
		m := &workloadMatchers[mi]
		if m.device != device {
			continue
		}
		c := Clue{Kind: m.kind, What: m.what}
		best := 0
		for s, k := range counts {
			if k == 0 || s == 0 {
				continue
			}
			n := r.Str(model.Sym(s))
			if n == "" || !m.matches(n) {
				continue
			}
			c.Count += int(k)
			// the most frequent name is the example (ties: the first by name)
			if int(k) > best || int(k) == best && n < c.Example {
				best, c.Example = int(k), n
			}
		}
		if c.Count > 0 {
			out = append(out, c)
		}
	}
	return out
}

// envClues: VLLM_* variables in profiler_metadata.json ENV_VARIABLES.
func envClues(r *model.Rank) []Clue {
	var names []string
	for k := range r.Env {
		if strings.HasPrefix(k, "VLLM_") {
			names = append(names, k)
		}
	}
	if len(names) == 0 {
		return nil
	}
	sort.Strings(names)
	return []Clue{{Kind: WorkloadVLLM, What: "VLLM_* variables in profiler_metadata.json", Example: names[0], Count: len(names)}}
}

// megatronGroups are parallel_group_info group names only Megatron and
// MindSpeed create (vLLM's are world, tp, pp, dp, ep, dcp, pcp and
// vLLM-Ascend's mc2, dynamic_eplb, p_tp_N).
var megatronGroups = map[string]bool{"mp": true, "mp_exp": true, "tp_exp": true, "dp_cp": true, "exp": true, "tp_dp_cp": true, "tp_dp": true, "tp_cp": true}

// metadataClues: MindSpeed's distributed_args in profiler_metadata.json
// (its add_metadata of the Megatron parallel sizes), and Megatron's group
// names in parallel_group_info.
func metadataClues(r *model.Rank) []Clue {
	var out []Clue
	if _, ok := r.Metadata["distributed_args"]; ok {
		out = append(out, Clue{Kind: WorkloadTraining, What: "MindSpeed distributed_args in profiler_metadata.json", Example: "distributed_args", Count: 1})
	}
	var names []string
	for _, g := range r.Groups {
		if megatronGroups[g.Name] && !slices.Contains(names, g.Name) {
			names = append(names, g.Name)
		}
	}
	if len(names) > 0 {
		sort.Strings(names)
		out = append(out, Clue{Kind: WorkloadTraining, What: "Megatron group names in parallel_group_info", Example: names[0], Count: len(names)})
	}
	return out
}

// stepPhases sets each step's phase from its attention kernels' batch.
func stepPhases(r *model.Rank, tl *Timeline, steps []StepBreakdown, out map[int]string) {
	if len(steps) == 0 {
		return
	}
	isAttention := newNameOpMemo(r, isDecodeAttention)
	shapes := &shapeMemo{r: r}
	type seen struct{ decode, prefill bool }
	by := make([]seen, len(steps))
	for _, i := range tl.ComputeTasks {
		t := &r.Tasks[i]
		if !isAttention.get(t) {
			continue
		}
		n, ok := shapes.firstDim(r.InputShapes(t))
		if !ok || n <= 0 {
			continue
		}
		k := sort.Search(len(steps), func(k int) bool { return steps[k].DeviceEnd >= t.Start })
		if k == len(steps) || t.Start < steps[k].DeviceStart {
			continue
		}
		if n <= DecodeMaxTokens {
			by[k].decode = true
		} else {
			by[k].prefill = true
		}
	}
	for k, s := range by {
		switch {
		case s.decode && s.prefill:
			out[steps[k].Step] = PhaseMixed
		case s.decode:
			out[steps[k].Step] = PhaseDecode
		case s.prefill:
			out[steps[k].Step] = PhasePrefill
		}
	}
}

// WorkloadSummary is the workload of a whole profile, with its evidence.
type WorkloadSummary struct {
	Kind     string
	Evidence []string
}

// Workload combines the ranks' clues: vllm when only vLLM signs were found,
// training when only training signs were, else unknown (no sign, or signs
// of both, which the evidence then lists).
func Workload(res *Result) WorkloadSummary {
	type key struct{ kind, what string }
	agg := map[key]*Clue{}
	var order []key
	for _, rr := range res.Ranks {
		if WorkloadOf(rr) == nil {
			continue
		}
		for _, c := range WorkloadOf(rr).Clues {
			k := key{c.Kind, c.What}
			if a := agg[k]; a != nil {
				a.Count += c.Count
				continue
			}
			cc := c
			agg[k] = &cc
			order = append(order, k)
		}
	}
	sort.SliceStable(order, func(i, j int) bool {
		if order[i].kind != order[j].kind {
			return order[i].kind < order[j].kind
		}
		return order[i].what < order[j].what
	})
	kinds := map[string]bool{}
	out := WorkloadSummary{Kind: WorkloadUnknown, Evidence: []string{}}
	for _, k := range order {
		kinds[k.kind] = true
		out.Evidence = append(out.Evidence, k.kind+": "+agg[k].String())
	}
	switch {
	case kinds[WorkloadVLLM] && !kinds[WorkloadTraining]:
		out.Kind = WorkloadVLLM
	case kinds[WorkloadTraining] && !kinds[WorkloadVLLM]:
		out.Kind = WorkloadTraining
	case len(kinds) == 0:
		out.Evidence = append(out.Evidence, "no sign of vLLM serving or of training in op names, environment variables or folder names")
	}
	return out
}
