package facts

import (
	"fmt"
	"slices"
	"strings"

	"github.com/npuprof/npuprof/internal/analysis"
	"github.com/npuprof/npuprof/internal/results"
	"github.com/npuprof/npuprof/internal/rules/rulefmt"
)

// observedFacts are the facts the profile measures (what ran): where the
// deployment script or --fact says otherwise, the profile's value stays and
// the disagreement is a conflict warning.
var observedFacts = []string{"tp", "dp", "ep", "expert_parallel", "flashcomm1",
	"vllm_ascend_version", "vllm_version", "cann_version", "torch_npu_version"}

// observedSource reports a fact source that read what ran: the profile, or
// the running server's own log.
func observedSource(src string) bool {
	return strings.HasPrefix(src, "profile:") || strings.HasPrefix(src, "vLLM:")
}

// conflictText is a conflict as a warning.
func conflictText(c results.Conflict) string {
	return fmt.Sprintf("conflict: %s is %s in the profile (%s) but %s in %s; the rules use %s, what ran",
		c.Fact, rulefmt.Format(c.Profile), c.ProfileSource, rulefmt.Format(c.Given), c.GivenSource, rulefmt.Format(c.Used))
}

// Conflicts are the facts the deployment script or --fact gave that the
// profile contradicts (in the order found).
func (f *Set) Conflicts() []results.Conflict { return f.conflicts }

// setGiven records a fact from the script or --fact, unless the profile
// (or vLLM's own log) measured it with another value: then the profile's
// value stays and the conflict is recorded (and warned about).
func (f *Set) setGiven(name string, v any, source string) error {
	if prev, ok := f.facts[name]; ok && observedSource(prev.Source) && slices.Contains(observedFacts, name) && rulefmt.Format(prev.Value) != rulefmt.Format(v) {
		c := results.Conflict{Fact: name, Profile: prev.Value, ProfileSource: prev.Source, Given: v, GivenSource: source, Used: prev.Value}
		f.conflicts = append(f.conflicts, c)
		f.warnings = append(f.warnings, conflictText(c))
		return nil
	}
	return f.Set(name, v, source)
}

// captureConflicts warns when the decode steps replayed graphs of a batch
// the given capture sizes do not list.
func (f *Set) captureConflicts(res *analysis.Result) {
	cs, ok := f.facts["capture_sizes"]
	if !ok || res == nil {
		return
	}
	sizes, _ := cs.Value.([]int)
	for _, rr := range res.Ranks {
		b, okB := rr.Metrics[analysis.MetricDecodeBatchObserved]
		g, okG := rr.Metrics[analysis.MetricGraphKernelsShare]
		if !okB || !okG || g < 0.5 || slices.Contains(sizes, int(b)) {
			continue
		}
		c := results.Conflict{Fact: "capture_sizes", Profile: int(b), ProfileSource: fmt.Sprintf("profile: rank %d replayed decode graphs of batch %g", rr.Rank, b),
			Given: sizes, GivenSource: cs.Source}
		f.conflicts = append(f.conflicts, c)
		f.warnings = append(f.warnings, fmt.Sprintf("conflict: capture_sizes %s (%s) does not list the decode batch %g the profile replayed from a graph (rank %d); the rules use the profile's decode batch",
			rulefmt.Format(sizes), cs.Source, b, rr.Rank))
		return
	}
}

// setOverride records a --fact NAME=VALUE through setGiven: it wins over
// the script, not over what the profile measured (a conflict, warned).
func (f *Set) setOverride(kv string) error {
	tmp := NewSet()
	if err := tmp.SetString(kv, "--fact "+kv); err != nil {
		return err
	}
	for k, v := range tmp.env {
		f.env[k] = v
	}
	for _, v := range tmp.facts {
		if err := f.setGiven(v.Name, v.Value, v.Source); err != nil {
			return err
		}
	}
	return nil
}
