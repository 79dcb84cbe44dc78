package rulefmt

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/npuprof/npuprof/internal/lazyre"
)

// parseRange parses a version range: space-separated constraints such as
// ">=v0.13.0rc2 <v0.25.1rc1".
func parseRange(s string) ([][2]string, error) {
	var out [][2]string
	for _, part := range strings.Fields(s) {
		op := ""
		for _, o := range []string{">=", "<=", "==", ">", "<"} {
			if strings.HasPrefix(part, o) {
				op = o
				break
			}
		}
		if op == "" {
			return nil, fmt.Errorf("%q: expected a constraint like >=v0.13.0rc2", part)
		}
		v := strings.TrimPrefix(part, op)
		if _, err := ParseVersion(v); err != nil {
			return nil, err
		}
		out = append(out, [2]string{op, v})
	}
	return out, nil
}

var reVersion = lazyre.New(`^v?(\d+)\.(\d+)(?:\.(\d+))?(?:rc(\d+))?$`)

// ParseVersion turns v0.13.0rc2 into comparable numbers; a release sorts
// after its release candidates.
func ParseVersion(v string) ([4]int, error) {
	m := reVersion().FindStringSubmatch(strings.TrimSpace(v))
	if m == nil {
		return [4]int{}, fmt.Errorf("version %q: expected vMAJOR.MINOR.PATCH[rcN]", v)
	}
	var out [4]int
	for i := 1; i <= 3; i++ {
		out[i-1], _ = strconv.Atoi(m[i])
	}
	out[3] = 1 << 20
	if m[4] != "" {
		out[3], _ = strconv.Atoi(m[4])
	}
	return out, nil
}

// CompareVersions returns -1, 0 or 1.
func CompareVersions(a, b string) (int, error) {
	x, err := ParseVersion(a)
	if err != nil {
		return 0, err
	}
	y, err := ParseVersion(b)
	if err != nil {
		return 0, err
	}
	for i := range x {
		if x[i] != y[i] {
			if x[i] < y[i] {
				return -1, nil
			}
			return 1, nil
		}
	}
	return 0, nil
}

// InRange reports whether version v satisfies every constraint of rng.
func InRange(v, rng string) (bool, error) {
	cons, err := parseRange(rng)
	if err != nil {
		return false, err
	}
	for _, c := range cons {
		cmp, err := CompareVersions(v, c[1])
		if err != nil {
			return false, err
		}
		ok := map[string]bool{">=": cmp >= 0, "<=": cmp <= 0, "==": cmp == 0, ">": cmp > 0, "<": cmp < 0}[c[0]]
		if !ok {
			return false, nil
		}
	}
	return true, nil
}

// VersionTableFile is where the table lives in the source tree.
const VersionTableFile = "internal/rules/builtin/versions/vllm-ascend.yaml"

// Release is one vLLM-Ascend release of the version table. In expressions
// (release("v0.13.0rc2")) its fields are version, date, vllm, cann, torch,
// torch_npu, triton_ascend, source and changes.
type Release struct {
	Version  string `yaml:"version" expr:"version" json:"version"`
	Date     string `yaml:"date" expr:"date" json:"date"`
	VLLM     string `yaml:"vllm" expr:"vllm" json:"vllm"`
	CANN     string `yaml:"cann" expr:"cann" json:"cann"`
	Torch    string `yaml:"torch" expr:"torch" json:"torch"`
	TorchNPU string `yaml:"torch_npu" expr:"torch_npu" json:"torch_npu"`
	// TritonAscend is the triton-ascend the release's matrix lists ("" when
	// it lists none).
	TritonAscend string   `yaml:"triton_ascend" expr:"triton_ascend" json:"triton_ascend,omitempty"`
	Source       string   `yaml:"source" expr:"source" json:"source"`
	Changes      []Change `yaml:"changes" expr:"changes" json:"changes,omitempty"`
}

// Change is a pull request of vLLM-Ascend that a release brought, with the
// path it touches: the MoE dispatchers (or "any"), the model families (or
// "any"), the kernels, the metrics it would shrink and the
// --additional-config key it needs on.
type Change struct {
	PR          int      `yaml:"pr" expr:"pr" json:"pr"`
	What        string   `yaml:"what" expr:"what" json:"what"`
	Dispatchers []string `yaml:"dispatchers" expr:"dispatchers" json:"dispatchers"`
	Models      []string `yaml:"models" expr:"models" json:"models"`
	Kernels     []string `yaml:"kernels" expr:"kernels" json:"kernels"`
	Shrinks     []string `yaml:"shrinks" expr:"shrinks" json:"shrinks,omitempty"`
	NeedsOn     string   `yaml:"needs_on" expr:"needs_on" json:"needs_on,omitempty"`
	Source      string   `yaml:"source" expr:"source" json:"source"`
}

// ChangeDispatchers are the values a change's dispatchers take.
var ChangeDispatchers = []string{"any", "allgather", "mc2", "fused_mc2", "alltoall"}
