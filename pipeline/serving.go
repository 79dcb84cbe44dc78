package pipeline

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/npuprof/npuprof/analysis"
	"github.com/npuprof/npuprof/internal/errkind"
	"github.com/npuprof/npuprof/parser/vllmserve"
)

// ServingOptions name the serving-context inputs: vLLM's server log
// (--vllm-log; else, unless NoAuto, a *.log with vLLM statistics lines in
// the profile folder) and `vllm bench serve` results (--vllm-bench).
type ServingOptions struct {
	Log, Bench string
	NoAuto     bool
}

// LoadServing reads the serving context for a profile at path and attaches
// it to res (nil when there is nothing to read). Auto-detection notes which
// log it used.
func LoadServing(res *analysis.Result, path string, o ServingOptions) error {
	logPath := o.Log
	if logPath == "" && !o.NoAuto {
		dir := path
		if st, err := os.Stat(path); err == nil && !st.IsDir() {
			dir = ""
		}
		if dir != "" {
			found := vllmserve.FindLog(dir)
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
	var l *vllmserve.Log
	var b *vllmserve.Bench
	if logPath != "" {
		f, err := os.Open(logPath)
		if err != nil {
			return errkind.Errorf(errkind.Usage, "--vllm-log: %v", err)
		}
		l, err = vllmserve.ReadLog(f, logPath)
		f.Close()
		if err != nil {
			return errkind.Errorf(errkind.Usage, "--vllm-log: %v", err)
		}
	}
	if o.Bench != "" {
		var err error
		b, err = vllmserve.ReadBenchFile(o.Bench)
		if err != nil {
			return errkind.Errorf(errkind.Usage, "--vllm-bench: %v", err)
		}
	}
	if l == nil && b == nil {
		return nil
	}
	res.Serving = vllmserve.Build(l, b)
	return nil
}
