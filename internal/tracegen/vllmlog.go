package tracegen

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// VLLMLogFile is the server log Generate writes beside the ranks when
// Scenario.VLLMLog is set.
const VLLMLogFile = "vllm_serve.log"

// engineStats is what one engine's statistics lines report.
type engineStats struct {
	running          int
	genTPS           float64
	prefixPct, mmPct float64
	kvPct            float64
}

// vllmLogEngines are the second field report's engines: the busy engine
// 000 serves the one request (about 18 tokens/s, hit rates 89.5% and
// 90.3%); the idle engines 001-003 run dummy steps and their lines show
// what finished before (Running 0, their own hit rates 81.8% and 75.4%).
// The server's total is 21.5 tokens/s.
var vllmLogEngines = []engineStats{
	{running: 1, genTPS: 18.0, prefixPct: 89.5, mmPct: 90.3, kvPct: 0.4},
	{running: 0, genTPS: 1.2, prefixPct: 81.8, mmPct: 75.4},
	{running: 0, genTPS: 1.2, prefixPct: 81.8, mmPct: 75.4},
	{running: 0, genTPS: 1.1, prefixPct: 81.8, mmPct: 75.4},
}

// vllmLogIntervals is how many statistics intervals the log holds.
const vllmLogIntervals = 5

// writeVLLMLog writes vLLM's periodic statistics lines (V1 log_parts
// format, with the multimodal cache) for one engine per data-parallel
// replica, the last engine logging last in each interval.
func writeVLLMLog(dir string, s Scenario, tr *Truth) error {
	engines := slices.Clone(vllmLogEngines[:min(len(vllmLogEngines), s.Ranks/s.tpSize())])
	if busy, ok := tr.BusyStepUs(); ok && s.VLLMLogRefStepUs > 0 {
		engines[0].genTPS = math.Round(engines[0].genTPS*s.VLLMLogRefStepUs/busy*10) / 10
	}
	var b strings.Builder
	t := time.Unix(0, baseEpochNs).UTC()
	fmt.Fprintf(&b, "INFO %s [api_server.py:1351] vLLM API server version 0.13.0\n", t.Format("01-02 15:04:05"))
	for k := 0; k < vllmLogIntervals; k++ {
		at := t.Add(time.Duration(10*(k+1)) * time.Second).Format("01-02 15:04:05")
		for i, e := range engines {
			fmt.Fprintf(&b, "(APIServer pid=4012) INFO %s [loggers.py:123] Engine %03d: Avg prompt throughput: 0.0 tokens/s, "+
				"Avg generation throughput: %.1f tokens/s, Running: %d reqs, Waiting: 0 reqs, GPU KV cache usage: %.1f%%, "+
				"Prefix cache hit rate: %.1f%%, MM cache hit rate: %.1f%%\n", at, i, e.genTPS, e.running, e.kvPct, e.prefixPct, e.mmPct)
		}
	}
	return os.WriteFile(filepath.Join(dir, VLLMLogFile), []byte(b.String()), 0o644)
}

// BusyStepUs is the busy engine's decode step on the device (the mean over
// its ranks' ProfilerStep#N of computing + communication not overlapped +
// free, µs): the first engine's, ranks 0..TP-1. False without steps.
func (t *Truth) BusyStepUs() (float64, bool) {
	sum, n := 0.0, 0
	for _, r := range t.Ranks {
		if r.Rank >= t.Scenario.tpSize() {
			continue
		}
		for _, st := range r.Steps {
			sum += st.ComputingUs + st.CommunicationNotOverlappedUs + st.FreeUs
			n++
		}
	}
	if n == 0 {
		return 0, false
	}
	return sum / float64(n), true
}
