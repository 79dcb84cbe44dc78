package vllmserve

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/npuprof/npuprof/internal/errkind"
	"github.com/npuprof/npuprof/internal/infile"
)

// Inputs name the serving-context inputs of a profile: vLLM's server log
// (--vllm-log; else, unless NoAuto, a *.log with vLLM statistics lines in
// the profile folder) and `vllm bench serve` results (--vllm-bench).
type Inputs struct {
	Log, Bench string
	NoAuto     bool
}

// ForProfile reads the serving context of the profile at path from in:
// nil when there is nothing to read. The note says which log it found in
// the profile folder ("" when it looked for none or found none); an input
// it cannot read is a usage error naming its flag.
func ForProfile(path string, in Inputs) (c *Context, note string, err error) {
	logPath, root := in.Log, ""
	if logPath == "" && !in.NoAuto {
		if st, err := os.Stat(path); err == nil && st.IsDir() {
			found, err := findLog(path)
			if err != nil {
				return nil, "", err
			}
			if len(found) > 0 {
				root = path
				logPath = found[0]
				note = "vLLM log found in the profile folder: " + filepath.ToSlash(logPath)
				if len(found) > 1 {
					note += " (also found, not read: " + strings.Join(found[1:], ", ") + "; pick one with --vllm-log)"
				}
			}
		}
	}
	var l *Log
	var b *Bench
	if logPath != "" {
		if l, err = readFile(logPath, root, infile.ServerLog, ReadLog); err != nil {
			return nil, note, errkind.Errorf(errkind.Usage, "--vllm-log: %v", err)
		}
	}
	if in.Bench != "" {
		if b, err = ReadBenchFile(in.Bench); err != nil {
			return nil, note, errkind.Errorf(errkind.Usage, "--vllm-bench: %v", err)
		}
	}
	if l == nil && b == nil {
		return nil, note, nil
	}
	return Build(l, b), note, nil
}
