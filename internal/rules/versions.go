package rules

import (
	_ "embed"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"

	"github.com/npuprof/npuprof/internal/lang"
	"github.com/npuprof/npuprof/internal/rules/rulefmt"
	"github.com/npuprof/npuprof/internal/units"
)

// The version table: vLLM-Ascend releases with the vLLM, CANN, PyTorch and
// torch_npu each is built and tested with, and the changes rules name
// (builtin/versions/vllm-ascend.yaml; each line cites its source).
//
//go:embed builtin/versions/vllm-ascend.yaml
var versionTableYAML []byte

var versionTable = sync.OnceValues(func() ([]Release, error) { return parseVersionTable(versionTableYAML) })

// parseVersionTable reads the table: every release has a version that
// parses, its CANN and torch_npu, and a source the file's sources name
// (a source key is replaced by its text); releases sort by version.
func parseVersionTable(data []byte) ([]Release, error) {
	var t struct {
		Sources  map[string]string `yaml:"sources"`
		Releases []Release         `yaml:"releases"`
	}
	if err := yaml.Unmarshal(data, &t); err != nil {
		return nil, fmt.Errorf("%s: %v", VersionTableFile, err)
	}
	seen := map[[4]int]string{}
	for i := range t.Releases {
		r := &t.Releases[i]
		v, err := ParseVersion(r.Version)
		if err != nil {
			return nil, fmt.Errorf("%s: release %d: %v", VersionTableFile, i+1, err)
		}
		if prev, dup := seen[v]; dup {
			return nil, fmt.Errorf("%s: %s listed twice (as %s)", VersionTableFile, r.Version, prev)
		}
		seen[v] = r.Version
		if r.CANN == "" || r.TorchNPU == "" || r.VLLM == "" {
			return nil, fmt.Errorf("%s: %s: vllm, cann and torch_npu are required", VersionTableFile, r.Version)
		}
		src, ok := t.Sources[r.Source]
		if !ok {
			return nil, fmt.Errorf("%s: %s: source %q is not one of the file's sources", VersionTableFile, r.Version, r.Source)
		}
		r.Source = src
		for j := range r.Changes {
			c := &r.Changes[j]
			if c.PR <= 0 || c.What == "" {
				return nil, fmt.Errorf("%s: %s: change %d: pr and what are required", VersionTableFile, r.Version, j+1)
			}
			if len(c.Dispatchers) == 0 || len(c.Models) == 0 || len(c.Kernels) == 0 {
				return nil, fmt.Errorf("%s: %s: #%d: dispatchers, models and kernels are required (any for every dispatcher or model)", VersionTableFile, r.Version, c.PR)
			}
			for _, d := range c.Dispatchers {
				if !slices.Contains(rulefmt.ChangeDispatchers, d) {
					return nil, fmt.Errorf("%s: %s: #%d: dispatcher %q is not one of %s", VersionTableFile, r.Version, c.PR, d, strings.Join(rulefmt.ChangeDispatchers, ", "))
				}
			}
			for _, m := range c.Shrinks {
				if _, ok := LookupMetric(m); !ok {
					return nil, fmt.Errorf("%s: %s: #%d: shrinks names %q, not a metric", VersionTableFile, r.Version, c.PR, m)
				}
			}
			if c.Source, ok = t.Sources[c.Source]; !ok {
				return nil, fmt.Errorf("%s: %s: #%d: its source is not one of the file's sources", VersionTableFile, r.Version, c.PR)
			}
		}
	}
	slices.SortFunc(t.Releases, func(a, b Release) int { c, _ := CompareVersions(a.Version, b.Version); return c })
	return t.Releases, nil
}

// Releases returns the version table, oldest release first.
func Releases() []Release {
	t, err := versionTable()
	if err != nil {
		panic(err) // the embedded table is checked by the tests
	}
	return t
}

// LookupRelease returns the table's line for vLLM-Ascend version v
// (v0.13.0rc2 or 0.13.0rc2).
func LookupRelease(v string) (Release, bool) {
	for _, r := range Releases() {
		if c, err := CompareVersions(r.Version, v); err == nil && c == 0 {
			return r, true
		}
	}
	return Release{}, false
}

// release is release(v) in expressions.
func (st *state) release(v string) (Release, error) {
	r, ok := LookupRelease(v)
	if !ok {
		return Release{}, st.unavailable("vLLM-Ascend %s is not in the version table (%s)", v, VersionTableFile)
	}
	return r, nil
}

// stackUpgrade is stack_upgrade(to): the CANN and torch_npu that go with
// release to, each from what runs now when that is known, e.g. "CANN
// 8.3.RC2 → 8.5.0 and torch_npu 2.8.0 → 2.8.0.post1". What runs now is the
// cann_version and torch_npu_version facts (the profile's
// profiler_info_*.json first), else the running vLLM-Ascend's line of the
// table.
func (st *state) stackUpgrade(to string) (string, error) {
	t, err := st.release(to)
	if err != nil {
		return "", err
	}
	var cur Release
	if v, ok := st.in.Facts.Get("vllm_ascend_version"); ok {
		cur, _ = LookupRelease(v.Value.(string))
	}
	part := func(name, fact, from, want string) string {
		if v, ok := st.in.Facts.Get(fact); ok {
			from = v.Value.(string)
		}
		switch {
		case from == "":
			return name + " " + want
		case strings.EqualFold(from, want):
			return fmt.Sprintf(st.msg(msgAlready), name, want)
		}
		return name + " " + from + " → " + want
	}
	cann, npu := part("CANN", "cann_version", cur.CANN, t.CANN), part("torch_npu", "torch_npu_version", cur.TorchNPU, t.TorchNPU)
	if t.TritonAscend == "" {
		return fmt.Sprintf(st.msg(msgAnd), cann, npu), nil
	}
	// what runs now is not in any fact: the running release's line
	tri := "triton-ascend " + t.TritonAscend
	if cur.TritonAscend != "" {
		tri = part("triton-ascend", "", cur.TritonAscend, t.TritonAscend)
	}
	return fmt.Sprintf(st.msg(msgAnd3), cann, npu, tri), nil
}

// changesIn lists the table's changes of the releases after from up to to.
func (st *state) changesIn(from, to string) ([]rulefmt.Change, error) {
	if _, err := st.release(to); err != nil {
		return nil, err
	}
	var out []rulefmt.Change
	for _, r := range Releases() {
		after, err := CompareVersions(r.Version, from)
		if err != nil {
			return nil, err
		}
		upTo, _ := CompareVersions(r.Version, to)
		if after > 0 && upTo <= 0 {
			out = append(out, r.Changes...)
		}
	}
	return out, nil
}

// changeFit is whether change c meets the profile: its dispatcher is the
// one that ran (moe.dispatcher), its model family the served model's, and
// what it shrinks is measured above 0 somewhere (or not measured at all);
// else why not. shrunk is the measured evidence, as "name value".
func (st *state) changeFit(c rulefmt.Change) (fits bool, why string, shrunk []string) {
	if d, ok := st.in.Facts.Get("moe.dispatcher"); ok && !slices.Contains(c.Dispatchers, "any") && !slices.Contains(c.Dispatchers, d.Value.(string)) {
		return false, fmt.Sprintf(st.msg(msgChangeDispatcher), strings.Join(c.Dispatchers, "/"), d.Value), nil
	}
	if m, ok := st.in.Facts.Get("model"); ok && !slices.Contains(c.Models, "any") {
		name := strings.ToLower(m.Value.(string))
		if !slices.ContainsFunc(c.Models, func(f string) bool { return strings.Contains(name, f) }) {
			return false, fmt.Sprintf(st.msg(msgChangeModel), strings.Join(c.Models, "/"), m.Value), nil
		}
	}
	measured := 0
	for _, n := range c.Shrinks {
		probe := &state{in: st.in, used: st.used, phase: st.phase}
		v, err := probe.agg(n, mean)
		if err != nil {
			continue
		}
		measured++
		st.agg(n, mean) //nolint:errcheck // recorded as an input: it was measured
		if v > 0 {
			s := n + " " + formatMetric(n, v)
			if strings.HasPrefix(n, "ledger.") {
				s += st.msg(msgPerStepSuffix)
			}
			shrunk = append(shrunk, s)
		}
	}
	if measured > 0 && len(shrunk) == 0 {
		return false, fmt.Sprintf(st.msg(msgChangeNothing), strings.Join(c.Shrinks, ", ")), nil
	}
	return true, "", shrunk
}

// formatMetric writes v in n's unit: a duration for µs metrics.
func formatMetric(n string, v float64) string {
	if strings.HasSuffix(n, "_us") {
		return units.Dur(v)
	}
	return strconv.FormatFloat(v, 'g', 4, 64)
}

// changesFor is changes_for(from, to): the changes after from up to to
// that meet the profile, each with the kernels it touches, the evidence it
// would shrink and the key it needs on, as text.
func (st *state) changesFor(from, to string) (string, error) {
	fit, _, err := st.changeTexts(from, to)
	if err != nil {
		return "", err
	}
	if len(fit) == 0 {
		return st.msg(msgNoChangesFit), nil
	}
	return strings.Join(fit, st.msg(msgListSep)), nil
}

// changesNotFor is changes_not_for(from, to): the changes after from up to
// to that the profile does not run into, each with why, as text ("" when
// none).
func (st *state) changesNotFor(from, to string) (string, error) {
	_, notFit, err := st.changeTexts(from, to)
	return strings.Join(notFit, st.msg(msgListSep)), err
}

// changeTexts are the changes after from up to to as changes_for and
// changes_not_for name them: those that meet the profile and those that
// do not.
func (st *state) changeTexts(from, to string) (fit, notFit []string, err error) {
	cs, err := st.changesIn(from, to)
	if err != nil {
		return nil, nil, err
	}
	for _, c := range cs {
		fits, why, shrunk := st.changeFit(c)
		if !fits {
			notFit = append(notFit, fmt.Sprintf("#%d (%s)", c.PR, why))
			continue
		}
		kernels := make([]string, len(c.Kernels))
		for i, k := range c.Kernels {
			kernels[i] = lang.Translate(st.in.Lang, k) // a kernel's name stays; a description is translated
		}
		p := fmt.Sprintf("#%d %s ("+st.msg(msgChangeKernels), c.PR, lang.Translate(st.in.Lang, c.What), strings.Join(kernels, ", "))
		if len(shrunk) > 0 {
			p += fmt.Sprintf(st.msg(msgChangeShrinks), strings.Join(shrunk, ", "))
		}
		if c.NeedsOn != "" {
			p += fmt.Sprintf(st.msg(msgChangeNeedsOn), c.NeedsOn)
		}
		fit = append(fit, p+")")
	}
	return fit, notFit, nil
}

// changesSince is changes_since(from, to): the changes the table lists for
// the releases after from up to to, as "#5848 FLASHCOMM1 for Qwen3-VL;
// ...".
func (st *state) changesSince(from, to string) (string, error) {
	if _, err := st.release(to); err != nil {
		return "", err
	}
	var parts []string
	for _, r := range Releases() {
		after, err := CompareVersions(r.Version, from)
		if err != nil {
			return "", err
		}
		upTo, _ := CompareVersions(r.Version, to)
		if after <= 0 || upTo > 0 {
			continue
		}
		for _, c := range r.Changes {
			parts = append(parts, fmt.Sprintf("#%d %s", c.PR, lang.Translate(st.in.Lang, c.What)))
		}
	}
	if len(parts) == 0 {
		return st.msg(msgNoChanges), nil
	}
	return strings.Join(parts, st.msg(msgListSep)), nil
}
