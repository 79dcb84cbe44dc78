package main

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/pflag"

	"github.com/npuprof/npuprof/analysis"
	"github.com/npuprof/npuprof/parser/vllmlog"
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

// loadServing reads the serving context for a profile at path and attaches
// it to res (nil when there is nothing to read). Auto-detection notes which
// log it used.
func loadServing(res *analysis.Result, path string, o servingOptions) error {
	logPath := o.VLLMLog
	if logPath == "" && !o.NoAuto {
		dir := path
		if st, err := os.Stat(path); err == nil && !st.IsDir() {
			dir = ""
		}
		if dir != "" {
			found := vllmlog.FindLog(dir)
			if len(found) > 0 {
				logPath = found[0]
				note := "vLLM log found in the profile folder: " + filepath.ToSlash(logPath)
				if len(found) > 1 {
					note += " (also found, not read: " + strings.Join(found[1:], ", ") + "; pick one with --vllm-log)"
				}
				res.Notes = append(res.Notes, note)
			}
		}
	}
	var l *vllmlog.Log
	var b *vllmlog.Bench
	if logPath != "" {
		f, err := os.Open(logPath)
		if err != nil {
			return usageErr("--vllm-log: %v", err)
		}
		l, err = vllmlog.ReadLog(f, logPath)
		f.Close()
		if err != nil {
			return usageErr("--vllm-log: %v", err)
		}
	}
	if o.VLLMBench != "" {
		var err error
		b, err = vllmlog.ReadBenchFile(o.VLLMBench)
		if err != nil {
			return usageErr("--vllm-bench: %v", err)
		}
	}
	if l == nil && b == nil {
		return nil
	}
	res.Serving = vllmlog.Build(l, b)
	return nil
}
