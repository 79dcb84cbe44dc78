package main

import (
	"github.com/spf13/pflag"

	"github.com/npuprof/npuprof/internal/inputs/vllmserve"
)

// servingOptions are the serving-context flags shared by analyze, report,
// check and diff.
type servingOptions struct {
	VLLMLog   string
	VLLMBench string
	NoAuto    bool
}

func (o *servingOptions) addFlags(f *pflag.FlagSet) {
	f.StringVar(&o.VLLMLog, "vllm-log", "", "read the serving context (throughput, running/waiting requests, KV-cache usage, prefix- and multimodal-cache hit rates) from vLLM's server log `FILE`; by default a *.log holding vLLM statistics lines in the profile folder (or one level down) is used")
	f.StringVar(&o.VLLMBench, "vllm-bench", "", "read the results of vllm bench serve from `FILE` (its printed summary or --save-result JSON): concurrency, output throughput, TTFT, TPOT")
	f.BoolVar(&o.NoAuto, "no-vllm-log", false, "do not look for a vLLM log in the profile folder")
}

// options are the serving inputs of a run.
func (o servingOptions) options() vllmserve.Inputs {
	return vllmserve.Inputs{Log: o.VLLMLog, Bench: o.VLLMBench, NoAuto: o.NoAuto}
}
