package rules

import (
	_ "embed"
	"fmt"
	"slices"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"
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
		v, err := parseVersion(r.Version)
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
	return fmt.Sprintf(st.msg(msgAnd), part("CANN", "cann_version", cur.CANN, t.CANN), part("torch_npu", "torch_npu_version", cur.TorchNPU, t.TorchNPU)), nil
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
			parts = append(parts, fmt.Sprintf("#%d %s", c.PR, c.What))
		}
	}
	if len(parts) == 0 {
		return st.msg(msgNoChanges), nil
	}
	return strings.Join(parts, st.msg(msgListSep)), nil
}
