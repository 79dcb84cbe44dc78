// Package vllmconf holds what vLLM's configuration accepts, for the
// packages that read a deployment (deploy) and check facts about it
// (rules) without depending on each other.
package vllmconf

import "strings"

// CUDAGraphModes are the values of vLLM's compilation_config
// cudagraph_mode (the CUDAGraphMode enum of vllm/config/compilation.py,
// which vLLM-Ascend uses for ACL graphs). vLLM reads the name
// case-insensitively (CUDAGraphMode[value.upper()]).
var CUDAGraphModes = []string{"NONE", "PIECEWISE", "FULL", "FULL_DECODE_ONLY", "FULL_AND_PIECEWISE"}

// CUDAGraphMode returns the CUDAGraphMode name v spells (any case, as vLLM
// reads it) and whether it is one.
func CUDAGraphMode(v string) (string, bool) {
	u := strings.ToUpper(strings.TrimSpace(v))
	for _, m := range CUDAGraphModes {
		if u == m {
			return m, true
		}
	}
	return v, false
}
