package analysis

import (
	"encoding/json"
	"strings"
)

// VersionFacts name the stack versions read from a profile: the facts
// vllm_ascend_version, vllm_version, cann_version and torch_npu_version.
var VersionFacts = []string{"vllm_ascend_version", "vllm_version", "cann_version", "torch_npu_version"}

// metadataVersions reads stack versions a job wrote into
// profiler_metadata.json with torch_npu's add_metadata (keys such as
// "vllm_ascend_version", "vLLM-Ascend version", "cann.version"; the value
// a JSON string), by fact name.
func metadataVersions(md map[string]string) map[string]string {
	out := map[string]string{}
	for k, raw := range md {
		name := strings.NewReplacer("-", "_", ".", "_", " ", "_").Replace(strings.ToLower(strings.TrimSpace(k)))
		for _, f := range VersionFacts {
			if name != f {
				continue
			}
			var v string
			if json.Unmarshal([]byte(raw), &v) != nil {
				v = raw // add_metadata stores text as written
			}
			if v = strings.TrimSpace(v); v != "" && len(v) <= 64 {
				out[f] = v
			}
		}
	}
	return out
}
