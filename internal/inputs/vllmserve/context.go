package vllmserve

import (
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/npuprof/npuprof/internal/errkind"
	"github.com/npuprof/npuprof/internal/infile"
	"github.com/npuprof/npuprof/internal/parser/model"
)

// Context is the serving context the command hands to the analysis
// result; model.Serving documents each serving.* metric.
type Context = model.Serving

// Build assembles the context from a log and/or a bench result (either
// may be nil).
func Build(l *Log, b *Bench) *Context {
	c := &Context{Metrics: map[string]float64{}, Unavailable: map[string]string{}, Sources: map[string]string{}, Files: []string{}}
	if l != nil {
		c.Files = append(c.Files, l.Name)
		fromLog(c, l)
	}
	if b != nil {
		c.Files = append(c.Files, b.Name)
		for k, v := range b.Metrics {
			c.Metrics[k] = v
			c.Sources[k] = b.Name + ": vllm bench serve result"
		}
	}
	if _, ok := c.Metrics["serving.output_tps"]; !ok {
		if v, ok := c.Metrics["serving.generation_tps"]; ok {
			c.Metrics["serving.output_tps"] = v
			c.Sources["serving.output_tps"] = c.Sources["serving.generation_tps"]
		}
	}
	if _, ok := c.Metrics["serving.concurrency"]; !ok && l != nil {
		if v, ok := logConcurrency(c, l); ok {
			c.Metrics["serving.concurrency"] = v
			c.Sources["serving.concurrency"] = l.Name + ": median running requests over the statistics lines with work (no bench concurrency)"
		}
	}
	for _, k := range []string{"serving.concurrency", "serving.output_tps", "serving.prefix_cache_hit_rate", "serving.mm_cache_hit_rate"} {
		if _, ok := c.Metrics[k]; ok {
			continue
		}
		if _, ok := c.Unavailable[k]; ok {
			continue
		}
		switch {
		case l == nil && b == nil:
			c.Unavailable[k] = "no vLLM log or bench result"
		case l != nil && len(l.Samples) == 0:
			c.Unavailable[k] = l.Name + ": no vLLM statistics line (\"Avg prompt throughput: ...\")"
		default:
			c.Unavailable[k] = "not in the vLLM log or bench result"
		}
	}
	return c
}

func perEngine(l *Log) (map[string][]Sample, []string) {
	by := map[string][]Sample{}
	for _, s := range l.Samples {
		if s.Active() {
			by[s.Engine] = append(by[s.Engine], s)
		}
	}
	// An aggregated logger already sums the engines: use it alone.
	var agg []string
	for e := range by {
		if strings.HasPrefix(e, "aggregated") {
			agg = append(agg, e)
		}
	}
	if len(agg) > 0 {
		keep := map[string][]Sample{}
		for _, e := range agg {
			keep[e] = by[e]
		}
		by = keep
	}
	var names []string
	for e := range by {
		names = append(names, e)
	}
	sort.Strings(names)
	return by, names
}

// fromLog sets the serving metrics a vLLM server log gives.
func fromLog(c *Context, l *Log) {
	src := func(what string) string { return fmt.Sprintf("%s: %s", l.Name, what) }
	c.Metrics["serving.log.samples"] = float64(len(l.Samples))
	c.Metrics["serving.log.malformed"] = float64(l.Malformed)
	c.Sources["serving.log.samples"] = src("vLLM statistics lines")
	c.Sources["serving.log.malformed"] = src("statistics lines skipped (a field did not parse)")
	c.Formats = l.Formats()
	c.MalformedLines = l.MalformedAt
	c.Versions, c.VersionSources = l.Versions, l.VersionSources
	by, engines := perEngine(l)
	if len(engines) == 0 {
		why := l.Name + ": no vLLM statistics line with work (\"Avg prompt throughput: ...\" with a throughput above 0)"
		for _, k := range []string{"serving.prompt_tps", "serving.generation_tps", "serving.running", "serving.waiting", "serving.kv_cache_usage"} {
			c.Unavailable[k] = why
		}
	} else {
		logMeans(c, by, engines, src)
	}
	busy, why := busyEngines(by, engines)
	if len(busy) > 0 {
		perEngineRate(c, by, busy, why, src)
	}
	cacheRates(c, l, by, busy, src, why)
}

// busyEngines are the engines that served requests: mean Running of at
// least one half over their statistics lines with work (an idle
// data-parallel engine runs dummy steps, and its lines show what finished
// before, at Running 0); every engine when none did. why says which.
func busyEngines(by map[string][]Sample, engines []string) ([]string, string) {
	var busy, idle []string
	for _, e := range engines {
		var r float64
		for _, s := range by[e] {
			r += float64(s.Running)
		}
		if r/float64(len(by[e])) >= 0.5 {
			busy = append(busy, e)
		} else {
			idle = append(idle, e)
		}
	}
	if len(busy) == 0 || len(idle) == 0 {
		return engines, fmt.Sprintf("%d engine(s)", len(engines))
	}
	return busy, "busy engine(s) " + strings.Join(busy, ", ") + " (mean Running >= 0.5; idle: " + strings.Join(idle, ", ") + ")"
}

// perEngineRate sets the generation throughput of one busy engine: the
// rate a request sees, beside serving.generation_tps, the server's total.
func perEngineRate(c *Context, by map[string][]Sample, busy []string, why string, src func(string) string) {
	var g float64
	for _, e := range busy {
		var x float64
		for _, s := range by[e] {
			x += s.GenerationTPS
		}
		g += x / float64(len(by[e]))
	}
	c.Metrics["serving.engine.generation_tps"] = g / float64(len(busy))
	c.Sources["serving.engine.generation_tps"] = src("mean Avg generation throughput per engine, " + why)
	c.Metrics["serving.busy_engines"] = float64(len(busy))
	c.Sources["serving.busy_engines"] = src(why)
}

// logMeans sets the means over the intervals of the engines' throughputs,
// requests and KV cache usage, summed over the engines.
func logMeans(c *Context, by map[string][]Sample, engines []string, src func(string) string) {
	var prompt, gen, run, wait, kv float64
	kvN := 0
	maxRun := map[int]float64{}
	for _, e := range engines {
		ss := by[e]
		var p, g, r, w, k float64
		kn := 0
		for i, s := range ss {
			p += s.PromptTPS
			g += s.GenerationTPS
			r += float64(s.Running)
			w += float64(s.Waiting)
			maxRun[i] += float64(s.Running)
			if !math.IsNaN(s.KVCacheUsage) {
				k += s.KVCacheUsage
				kn++
			}
		}
		n := float64(len(ss))
		prompt += p / n
		gen += g / n
		run += r / n
		wait += w / n
		if kn > 0 {
			kv += k / float64(kn)
			kvN++
		}
	}
	set := func(k string, v float64, how string) {
		c.Metrics[k] = v
		c.Sources[k] = src(how)
	}
	eng := fmt.Sprintf("%d engine(s)", len(engines))
	nEng := 0
	for _, e := range engines {
		var n int
		if _, err := fmt.Sscanf(e, "aggregated(%d)", &n); err == nil && n > 0 {
			nEng += n
		} else {
			nEng++
		}
	}
	c.Metrics["serving.engines"] = float64(nEng)
	c.Sources["serving.engines"] = src("engines with statistics lines (Engine NNN, or N Engines Aggregated)")
	set("serving.prompt_tps", prompt, "mean Avg prompt throughput, "+eng)
	set("serving.generation_tps", gen, "mean Avg generation throughput, "+eng)
	set("serving.running", run, "mean Running reqs, "+eng)
	set("serving.waiting", wait, "mean Waiting (V0: Pending) reqs, "+eng)
	mr := 0.0
	for _, v := range maxRun {
		mr = max(mr, v)
	}
	set("serving.running.max", mr, "largest Running reqs, "+eng)
	if kvN > 0 {
		set("serving.kv_cache_usage", kv/float64(kvN), "mean GPU KV cache usage")
	} else {
		c.Unavailable["serving.kv_cache_usage"] = src("no KV cache usage in the statistics lines")
	}
}

// cacheRates sets the prefix and multimodal cache hit rates: each busy
// engine's last one (never an idle engine's), averaged over them.
func cacheRates(c *Context, l *Log, by map[string][]Sample, engines []string, src func(string) string, which string) {
	last := func(get func(Sample) float64) (float64, int) {
		var sum float64
		n := 0
		for _, e := range engines {
			ss := by[e]
			for i := len(ss) - 1; i >= 0; i-- {
				if v := get(ss[i]); !math.IsNaN(v) {
					sum += v
					n++
					break
				}
			}
		}
		if n == 0 {
			return math.NaN(), 0
		}
		return sum / float64(n), n
	}
	if v, n := last(func(s Sample) float64 { return s.PrefixHitRate }); n > 0 {
		c.Metrics["serving.prefix_cache_hit_rate"] = v
		c.Sources["serving.prefix_cache_hit_rate"] = src("last Prefix cache hit rate, " + which)
	} else if k := len(l.V0PrefixHitRate); k > 0 {
		c.Metrics["serving.prefix_cache_hit_rate"] = l.V0PrefixHitRate[k-1]
		c.Sources["serving.prefix_cache_hit_rate"] = src("last V0 Prefix cache hit rate: GPU")
	} else if len(l.Samples) > 0 {
		c.Unavailable["serving.prefix_cache_hit_rate"] = src("the statistics lines carry no prefix cache hit rate (V0 without prefix caching)")
	}
	if v, n := last(func(s Sample) float64 { return s.MMHitRate }); n > 0 {
		c.Metrics["serving.mm_cache_hit_rate"] = v
		c.Sources["serving.mm_cache_hit_rate"] = src("last MM cache hit rate, " + which)
	} else if len(l.Samples) > 0 {
		c.Unavailable["serving.mm_cache_hit_rate"] = src("no \"MM cache hit rate\" in the statistics lines (text-only model, or a vLLM without the multimodal cache)")
	}
}

// logConcurrency is the median of running requests (summed over engines
// per interval index) over the intervals with work.
func logConcurrency(c *Context, l *Log) (float64, bool) {
	by, engines := perEngine(l)
	sum := map[int]float64{}
	n := 0
	for _, e := range engines {
		for i, s := range by[e] {
			sum[i] += float64(s.Running)
			n = max(n, i+1)
		}
	}
	if n == 0 {
		return 0, false
	}
	vals := make([]float64, 0, n)
	for i := 0; i < n; i++ {
		vals = append(vals, sum[i])
	}
	sort.Float64s(vals)
	if n%2 == 1 {
		return vals[n/2], true
	}
	return (vals[n/2-1] + vals[n/2]) / 2, true
}

// FindLog returns the vLLM server logs (*.log holding a statistics line)
// directly in dir or one level down, sorted. Unreadable files are skipped.
func FindLog(dir string) []string {
	out, _ := findLog(dir)
	return out
}

// findLog is FindLog, with the refusal of a *.log that is not a regular
// file (a FIFO, a device, a socket) or whose links lead outside dir:
// reading it could wait for ever or quote a file outside the profile.
func findLog(dir string) ([]string, error) {
	st, err := os.Stat(dir)
	if err != nil || !st.IsDir() {
		return nil, nil
	}
	var out []string
	var refused error
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		depth := strings.Count(rel, string(filepath.Separator))
		if d.IsDir() {
			if p != dir && depth >= 1 {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(d.Name(), ".log") {
			return nil
		}
		f, err := infile.Open(p, infile.ServerLog, infile.Opts{Root: dir})
		if err != nil {
			if errkind.Of(err) == errkind.Usage && refused == nil {
				refused = err
			}
			return nil
		}
		defer f.Close()
		if IsVLLMLog(f) {
			out = append(out, p)
		}
		return nil
	})
	sort.Strings(out)
	return out, refused
}

// ReadLogFile reads a log file named on the command line.
func ReadLogFile(path string) (*Log, error) { return readFile(path, "", infile.ServerLog, ReadLog) }

// ReadBenchFile reads a bench result file.
func ReadBenchFile(path string) (*Bench, error) {
	return readFile(path, "", infile.BenchResult, ReadBench)
}

// readFile opens path (found in root, "" for a file the user named) under
// the rule of internal/infile and reads it with read.
func readFile[T any](path, root string, k infile.Kind, read func(io.Reader, string) (T, error)) (T, error) {
	f, err := infile.Open(path, k, infile.Opts{Root: root})
	if err != nil {
		var zero T
		return zero, err
	}
	v, err := read(f, path)
	if cerr := f.Close(); err == nil && cerr != nil {
		var zero T
		return zero, cerr
	}
	return v, err
}
