// Package vllmserve reads the serving context of a vLLM (vLLM-Ascend) run that
// a profile does not hold: the engine's periodic statistics lines in the
// server log, and the result of `vllm bench serve` (its printed summary or
// its --save-result JSON). The numbers become serving.* facts: shown in the
// summaries, written to the JSON document's "serving" object, compared by
// `npuprof diff` and read by rules.
//
// Statistics line formats, as written by vLLM's LoggingStatLogger (the
// message after vLLM's own prefix "INFO 11-30 00:12:34 [loggers.py:123] ",
// itself possibly after "(APIServer pid=N) "; vLLM-Ascend reuses vLLM's
// loggers):
//
//   - V0 engine, vllm/engine/metrics.py LoggingStatLogger.log:
//     "Avg prompt throughput: %.1f tokens/s, Avg generation throughput: %.1f tokens/s,
//     Running: %d reqs, Swapped: %d reqs, Pending: %d reqs, GPU KV cache usage: %.1f%%,
//     CPU KV cache usage: %.1f%%." and, on its own line when prefix caching is on,
//     "Prefix cache hit rate: GPU: %.2f%%, CPU: %.2f%%".
//   - early V1 engine (vLLM 0.7/0.8), vllm/v1/metrics/loggers.py: the same
//     without the "Engine %03d: " prefix, at first ending at "Waiting: %d reqs "
//     (no KV cache usage), then with "GPU KV cache usage" and "Prefix cache hit
//     rate" appended.
//   - V1 engine, vllm/v1/metrics/loggers.py LoggingStatLogger.log (one format
//     string; read at vllm-project/vllm 005a810):
//     "Engine %03d: Avg prompt throughput: %.1f tokens/s, Avg generation throughput: %.1f tokens/s,
//     Running: %d reqs, Waiting: %d reqs, GPU KV cache usage: %.1f%%, Prefix cache hit rate: %.1f%%".
//   - V1 engine, later vllm/v1/metrics/loggers.py (log_parts joined with ", ",
//     prefix "Engine %03d: " or, with AggregatedLoggingStatLogger,
//     "%d Engines Aggregated: "): the same four first parts, then optional
//     "Preemptions: %d", then "GPU KV cache usage: %.1f%%", "Prefix cache hit
//     rate: %.1f%%", then optional "Corrupted: %d reqs", "External prefix cache
//     hit rate: %.1f%%", "MM cache hit rate: %.1f%%" (the multimodal cache).
//
// A line is a statistics line when it holds "Avg prompt throughput:" (or the
// V0 "Prefix cache hit rate: GPU:" line); one whose fields do not parse is
// skipped and counted as malformed. Every other line (requests, warnings,
// tracebacks, other processes' output) is ignored.
package vllmserve

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/npuprof/npuprof/internal/lazyre"
	"github.com/npuprof/npuprof/internal/vllmconf"
)

// Format names of the statistics lines.
const (
	FormatV0      = "v0"       // vllm/engine/metrics.py
	FormatV1      = "v1"       // vllm/v1/metrics/loggers.py, one format string
	FormatV1Parts = "v1-parts" // vllm/v1/metrics/loggers.py, log_parts (Preemptions/MM cache/aggregated)
)

// Sample is one statistics line.
type Sample struct {
	Line   int    // 1-based line number in the file
	Engine string // "000", "aggregated(2)", "" (V0)
	Format string
	// Throughputs in tokens/s.
	PromptTPS, GenerationTPS float64
	Running, Waiting         int
	// Ratios 0..1; NaN when the line does not carry them.
	KVCacheUsage, PrefixHitRate, MMHitRate float64
}

// Active reports whether the engine did work in the interval.
func (s Sample) Active() bool { return s.PromptTPS > 0 || s.GenerationTPS > 0 }

// Log is what a server log holds.
type Log struct {
	Name    string
	Samples []Sample
	// V0PrefixHitRate are the V0 "Prefix cache hit rate: GPU: x%" values (ratios).
	V0PrefixHitRate []float64
	// Lines is the number of lines read; Malformed the statistics lines
	// skipped because a field did not parse (MalformedAt: their line numbers,
	// the first 20).
	Lines       int
	Malformed   int
	MalformedAt []int
	// Versions are the stack versions the log states, the first line of
	// each (vllmconf.VersionsIn: vLLM's start-up lines, pip lines), by
	// fact name, with "line N (how)" in VersionSources.
	Versions, VersionSources map[string]string
	pipShow                  string
}

var (
	reMarker   = "Avg prompt throughput:"
	reV0Prefix = lazyre.New(`Prefix cache hit rate: GPU: ([0-9.]+)%, CPU: ([0-9.]+)%`)
	reEngine   = lazyre.New(`(?:Engine (\d+)|(\d+) Engines Aggregated): Avg prompt throughput:`)
	rePrompt   = lazyre.New(`Avg prompt throughput: ([0-9.]+) tokens/s`)
	reGen      = lazyre.New(`Avg generation throughput: ([0-9.]+) tokens/s`)
	reRunning  = lazyre.New(`Running: (\d+) reqs`)
	reWaiting  = lazyre.New(`(?:Waiting|Pending): (\d+) reqs`)
	reSwapped  = lazyre.New(`Swapped: \d+ reqs`)
	reKV       = lazyre.New(`(?:GPU )?KV cache usage: ([0-9.]+)%`)
	rePrefix   = lazyre.New(`Prefix cache hit rate: ([0-9.]+)%`)
	reMM       = lazyre.New(`MM cache hit rate: ([0-9.]+)%`)
	rePreempt  = lazyre.New(`Preemptions: \d+|Corrupted: \d+ reqs|External prefix cache hit rate|MM cache hit rate`)
)

// maxLine bounds one log line (tracebacks and request dumps can be long;
// longer lines are skipped, never fatal).
const maxLine = 4 << 20

// ReadLog reads a vLLM server log.
func ReadLog(r io.Reader, name string) (*Log, error) {
	l := &Log{Name: name}
	br := bufio.NewReaderSize(r, 1<<16)
	for {
		line, err := readLine(br)
		if len(line) > 0 || err == nil {
			l.Lines++
			l.parse(line)
		}
		if err == io.EOF {
			return l, nil
		}
		if err != nil {
			return l, fmt.Errorf("%s: line %d: %w", name, l.Lines+1, err)
		}
	}
}

// readLine returns one line without its end; lines longer than maxLine are
// truncated (the rest is discarded).
func readLine(br *bufio.Reader) (string, error) {
	var b strings.Builder
	for {
		frag, isPrefix, err := br.ReadLine()
		if b.Len() < maxLine {
			b.Write(frag[:min(len(frag), maxLine-b.Len())])
		}
		if err != nil {
			return b.String(), err
		}
		if !isPrefix {
			return b.String(), nil
		}
	}
}

func (l *Log) malformed() {
	l.Malformed++
	if len(l.MalformedAt) < 20 {
		l.MalformedAt = append(l.MalformedAt, l.Lines)
	}
}

func atof(s string) (float64, bool) {
	v, err := strconv.ParseFloat(s, 64)
	return v, err == nil && !math.IsNaN(v) && !math.IsInf(v, 0)
}

// versionHints are the words every line VersionsIn reads holds one of.
var versionHints = []string{"version", "Version", "engine (v", "==", "vllm", "torch", "cann", "toolkit"}

// versions records the stack versions a line states (first of each).
func (l *Log) versions(line string) {
	if l.pipShow == "" && !slices.ContainsFunc(versionHints, func(h string) bool { return strings.Contains(line, h) }) {
		return
	}
	var vs []vllmconf.Version
	vs, l.pipShow = vllmconf.VersionsIn(line, l.pipShow)
	for _, v := range vs {
		if _, seen := l.Versions[v.Fact]; seen {
			continue
		}
		if l.Versions == nil {
			l.Versions, l.VersionSources = map[string]string{}, map[string]string{}
		}
		l.Versions[v.Fact] = v.Value
		l.VersionSources[v.Fact] = fmt.Sprintf("%s:%d (%s)", l.Name, l.Lines, v.How)
	}
}

func (l *Log) parse(line string) {
	l.versions(line)
	if !strings.Contains(line, reMarker) {
		if strings.Contains(line, "Prefix cache hit rate: GPU:") {
			m := reV0Prefix().FindStringSubmatch(line)
			if m == nil {
				l.malformed()
				return
			}
			v, ok := atof(m[1])
			if !ok {
				l.malformed()
				return
			}
			l.V0PrefixHitRate = append(l.V0PrefixHitRate, v/100)
		}
		return
	}
	msg := line[strings.Index(line, reMarker):]
	s := Sample{Line: l.Lines, KVCacheUsage: math.NaN(), PrefixHitRate: math.NaN(), MMHitRate: math.NaN()}
	if m := reEngine().FindStringSubmatch(line); m != nil {
		if m[1] != "" {
			s.Engine = m[1]
		} else {
			s.Engine = "aggregated(" + m[2] + ")"
		}
	}
	p, g, ru, wa := rePrompt().FindStringSubmatch(msg), reGen().FindStringSubmatch(msg), reRunning().FindStringSubmatch(msg), reWaiting().FindStringSubmatch(msg)
	if p == nil || g == nil || ru == nil || wa == nil {
		l.malformed()
		return
	}
	var ok1, ok2 bool
	s.PromptTPS, ok1 = atof(p[1])
	s.GenerationTPS, ok2 = atof(g[1])
	r, e1 := strconv.Atoi(ru[1])
	w, e2 := strconv.Atoi(wa[1])
	if !ok1 || !ok2 || e1 != nil || e2 != nil {
		l.malformed()
		return
	}
	s.Running, s.Waiting = r, w
	opt := func(re *regexp.Regexp) (float64, bool) {
		m := re.FindStringSubmatch(msg)
		if m == nil {
			return math.NaN(), true
		}
		v, ok := atof(m[len(m)-1])
		return v / 100, ok
	}
	var ok bool
	if s.KVCacheUsage, ok = opt(reKV()); !ok {
		l.malformed()
		return
	}
	if s.PrefixHitRate, ok = opt(rePrefix()); !ok {
		l.malformed()
		return
	}
	if s.MMHitRate, ok = opt(reMM()); !ok {
		l.malformed()
		return
	}
	switch {
	case reSwapped().MatchString(msg):
		s.Format = FormatV0
	case s.Engine != "" && (strings.HasPrefix(s.Engine, "aggregated") || rePreempt().MatchString(msg)):
		s.Format = FormatV1Parts
	default:
		s.Format = FormatV1
	}
	l.Samples = append(l.Samples, s)
}

// Formats lists the statistics-line formats seen, sorted.
func (l *Log) Formats() []string {
	seen := map[string]bool{}
	for _, s := range l.Samples {
		seen[s.Format] = true
	}
	var out []string
	for f := range seen {
		out = append(out, f)
	}
	sort.Strings(out)
	return out
}

// detectLimit bounds how much of a *.log auto-detection reads: the first
// statistics line comes right after start-up, far earlier than this.
const detectLimit = 64 << 20

// IsVLLMLog reports whether a log holds a vLLM statistics line in its first
// 64 MB.
func IsVLLMLog(r io.Reader) bool {
	br := bufio.NewReaderSize(io.LimitReader(r, detectLimit), 1<<16)
	for {
		line, err := readLine(br)
		if strings.Contains(line, reMarker) {
			return true
		}
		if err != nil {
			return false
		}
	}
}
