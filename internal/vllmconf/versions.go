package vllmconf

import (
	"regexp"
	"strings"

	"github.com/npuprof/npuprof/internal/lazyre"
)

// Version is a stack version a line of text states: Fact is
// vllm_ascend_version, vllm_version, cann_version or torch_npu_version;
// How says what in the line said it.
type Version struct {
	Fact, Value, How string
}

// reVer is a version as pip and image tags write it: 0.13.0rc2,
// v0.13.0, 2.8.0.post1, 2.7.1.dev20250724, 8.3.RC2.
const reVer = `v?\d+\.\d+(?:\.\d+)?(?:\.?(?:rc|RC)\d+)?(?:\.post\d+)?(?:\.dev\d+)?`

var (
	// pip install NAME==V, pip freeze's NAME==V (also in a comment)
	rePipPin = lazyre.New(`(?i)(?:^|[\s"'#,;(])(vllm[-_]ascend|vllm|torch[-_]npu)\s*==\s*(` + reVer + `)`)
	// pip list's "NAME   V" (a line of its own, possibly a comment)
	rePipList = lazyre.New(`(?i)^\s*#?\s*(vllm[-_]ascend|vllm|torch[-_]npu)\s+(` + reVer + `)\s*$`)
	// pip show's "Name: x" is followed by "Version: y": see VersionsIn
	// image tags: quay.io/ascend/vllm-ascend:v0.13.0rc1, ascendai/cann:8.3.rc2-910b-...
	reImageVLLMAscend = lazyre.New(`(?i)vllm-ascend:(` + reVer + `)`)
	reImageCANN       = lazyre.New(`(?i)/cann:(\d+\.\d+\.(?:rc\d+|\d+))`)
	// CANN toolkit packages and install paths: Ascend-cann-toolkit_8.3.RC2_linux-aarch64.run,
	// /usr/local/Ascend/ascend-toolkit/8.3.RC2/
	reToolkit = lazyre.New(`(?i)(?:cann-toolkit_|ascend-toolkit/)(\d+\.\d+\.(?:rc\d+|\d+))`)
	// vLLM's start-up lines: "vLLM API server version 0.13.0"
	// (entrypoints/openai/api_server.py) and "Initializing a V1 LLM engine
	// (v0.13.0) with config" (v1/engine/core.py)
	reVLLMServer = lazyre.New(`vLLM API server version (` + reVer + `)`)
	reVLLMEngine = lazyre.New(`Initializing a V\d LLM engine \((` + reVer + `)\)`)
)

// packageFact is the fact a pip package name sets.
func packageFact(name string) string {
	switch strings.ReplaceAll(strings.ToLower(name), "_", "-") {
	case "vllm-ascend":
		return "vllm_ascend_version"
	case "vllm":
		return "vllm_version"
	case "torch-npu":
		return "torch_npu_version"
	}
	return ""
}

// NormalizeVersion writes a version the way the facts hold it: vLLM-Ascend
// and vLLM with a leading v (v0.13.0rc2), CANN with upper-case RC
// (8.3.RC2), torch_npu as pip writes it.
func NormalizeVersion(fact, v string) string {
	v = strings.TrimSpace(v)
	switch fact {
	case "vllm_ascend_version", "vllm_version":
		if !strings.HasPrefix(v, "v") {
			v = "v" + v
		}
	case "cann_version":
		v = strings.NewReplacer("rc", "RC", "Rc", "RC", "rC", "RC").Replace(v)
	}
	return v
}

// VersionsIn returns the versions one line states (pip pins, pip list
// rows, image tags, CANN toolkit names, vLLM's start-up lines). prevName
// is the package of the previous line's pip show "Name: x" ("" if none):
// a "Version: y" line then states its version; the second result is the
// package this line names that way, for the next call.
func VersionsIn(line, prevName string) ([]Version, string) {
	var out []Version
	addAll := func(re *regexp.Regexp, fact, how string) {
		for _, m := range re.FindAllStringSubmatch(line, -1) {
			out = append(out, Version{fact, NormalizeVersion(fact, m[1]), how})
		}
	}
	for _, m := range rePipPin().FindAllStringSubmatch(line, -1) {
		f := packageFact(m[1])
		out = append(out, Version{f, NormalizeVersion(f, m[2]), m[1] + "==" + m[2]})
	}
	if m := rePipList().FindStringSubmatch(line); m != nil {
		f := packageFact(m[1])
		out = append(out, Version{f, NormalizeVersion(f, m[2]), "pip list: " + m[1] + " " + m[2]})
	}
	addAll(reImageVLLMAscend(), "vllm_ascend_version", "image tag")
	addAll(reImageCANN(), "cann_version", "image tag")
	addAll(reToolkit(), "cann_version", "CANN toolkit")
	addAll(reVLLMServer(), "vllm_version", "vLLM API server version")
	addAll(reVLLMEngine(), "vllm_version", "vLLM engine start-up line")
	t := strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(line), "#"))
	if name, ok := strings.CutPrefix(t, "Name: "); ok {
		return out, packageFact(strings.TrimSpace(name))
	}
	if v, ok := strings.CutPrefix(t, "Version: "); ok && prevName != "" {
		out = append(out, Version{prevName, NormalizeVersion(prevName, v), "pip show"})
	}
	return out, ""
}
