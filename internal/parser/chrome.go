package parser

import (
	"strings"

	"github.com/npuprof/npuprof/internal/parser/model"
)

// isChromeTrace reports whether a file name is torch.profiler's Chrome
// trace as tensorboard_trace_handler names it ({worker}.{time_ns}.pt.trace.json),
// plain or compressed.
func isChromeTrace(base string) bool {
	for _, s := range []string{"", ".gz", ".zst", ".xz"} {
		if strings.HasSuffix(base, ".pt.trace.json"+s) {
			return true
		}
	}
	return false
}

// chromeSource is the rank a Chrome trace file is: the file alone (its
// header's distributedInfo gives the rank).
func chromeSource(path string) Source {
	return Source{Root: path, Format: model.FormatTorchNPUChrome, TraceFile: path, RankHint: -1}
}
