// Package analysis runs npuprof's analysis passes over the normalized model
// (package model) and collects typed results and named metrics.
//
// A Pass is a value: a name, a one-line doc, the passes it requires, and a
// Run function that reads only the rank's model and its prerequisites'
// results. The runner validates the graph, runs passes in dependency order,
// turns a panic into an error naming the pass, and skips dependents of a
// failed pass with the reason. What a pass cannot measure goes into
// Unavailable with the reason; it is never reported as 0.
package analysis

import (
	"fmt"
	"reflect"
	"runtime"
	"runtime/debug"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/npuprof/npuprof/internal/parser/model"
)

// PassOf is one unit of analysis over what a context of type C holds: a
// rank's model (Pass, context *Context) or every rank's results
// (ClusterPass, context *ClusterContext). Both kinds run through the same
// runner: Validate, dependency order, per-pass timing, a panic turned into
// an error naming the pass, dependents of a failed pass skipped naming it.
type PassOf[C any] struct {
	// Name is an identifier (lower case, '_' allowed).
	Name string
	// Doc: first line is a short lower-case title.
	Doc string
	// Requires lists passes whose results Run reads.
	Requires []*PassOf[C]
	// ResultType is the type Run returns (checked by the runner). The
	// pass's accessor (RankResultOf, ClusterResultOf) sets it from its type
	// parameter.
	ResultType reflect.Type
	// Run computes the result. It may record metrics through ctx.
	Run func(ctx C) (any, error)
	// Metrics declares every metric Run may set (see Metric).
	Metrics []Metric
}

// Pass is one unit of analysis over one rank.
type Pass = PassOf[*Context]

// Context is what a pass sees for one rank.
type Context struct {
	Rank     *model.Rank
	ResultOf map[*Pass]any
	pass     *Pass // the pass running (UnavailableAll)
	metrics  *Metrics
	// from is the file the metrics set next come from (see From)
	from string
}

// Metrics collects a rank's named metrics.
type Metrics struct {
	Values      map[string]float64
	Unavailable map[string]string
	// Sources maps each metric to the input file it was computed from.
	Sources map[string]string
	// RanksUsed maps each cluster metric to the ranks it was computed
	// from (ClusterResult.RanksUsed).
	RanksUsed map[string][]int
	// Warnings are what the passes found wrong with the input (two files
	// that disagree), after the readers' own warnings in RankResult.
	Warnings []model.Warning
}

func newMetrics() *Metrics {
	return &Metrics{Values: map[string]float64{}, Unavailable: map[string]string{}, Sources: map[string]string{}, RanksUsed: map[string][]int{}}
}

// From names the input file the metrics set next are computed from
// (RankResult.Sources); a metric set before any From call gets the rank's
// device-task source (the timeline, else kernel_details.csv).
func (c *Context) From(file string) { c.from = file }

func (c *Context) set(name string, v float64) {
	c.metrics.Values[name] = v
	if c.from != "" {
		c.metrics.Sources[name] = c.from
	}
}

// Warn records a problem the pass found in the input file.
func (c *Context) Warn(file, msg string) {
	c.metrics.Warnings = append(c.metrics.Warnings, model.Warning{File: file, Message: msg})
}

// SetUs records a time metric given in ns, reported in µs.
func (c *Context) SetUs(name string, ns int64) { c.set(name, float64(ns)/1000) }

// SetCount records a count metric.
func (c *Context) SetCount(name string, n int) { c.set(name, float64(n)) }

// Set records a dimensionless metric.
func (c *Context) Set(name string, v float64) { c.set(name, v) }

// Unavailable records why the named metrics could not be measured.
func (c *Context) Unavailable(why string, names ...string) {
	for _, n := range names {
		c.metrics.Unavailable[n] = why
	}
}

// UnavailableAll records why none of the metrics the running pass declares
// (but the families, whose members are named at run time) was measured.
func (c *Context) UnavailableAll(why string) {
	for _, m := range c.pass.Metrics {
		if !strings.Contains(m.Name, "<") {
			c.metrics.Unavailable[m.Name] = why
		}
	}
}

// PassError is a pass that failed or was skipped because a prerequisite
// failed: model.PassError, which the results document carries as is, under
// its own name here so that the saved state's types keep theirs.
type PassError model.PassError

func (e PassError) Error() string { return model.PassError(e).Error() }

var reName = lazyRegexp(`^[a-z][a-z0-9_]*$`)

// Validate checks names, docs, Run functions, duplicates and cycles.
func Validate[C any](passes []*PassOf[C]) error {
	seen := map[string]*PassOf[C]{}
	var visit func(p *PassOf[C], stack []*PassOf[C]) error
	state := map[*PassOf[C]]int{}
	visit = func(p *PassOf[C], stack []*PassOf[C]) error {
		switch state[p] {
		case 1:
			names := make([]string, 0, len(stack)+1)
			for _, s := range stack {
				names = append(names, s.Name)
			}
			return fmt.Errorf("cycle in Requires: %s -> %s", strings.Join(names, " -> "), p.Name)
		case 2:
			return nil
		}
		if !reName().MatchString(p.Name) {
			return fmt.Errorf("pass name %q is not an identifier", p.Name)
		}
		if strings.TrimSpace(p.Doc) == "" {
			return fmt.Errorf("pass %s has no Doc", p.Name)
		}
		if p.Run == nil {
			return fmt.Errorf("pass %s has no Run", p.Name)
		}
		if q, ok := seen[p.Name]; ok && q != p {
			return fmt.Errorf("duplicate pass name %s", p.Name)
		}
		seen[p.Name] = p
		state[p] = 1
		for _, r := range p.Requires {
			if err := visit(r, append(stack, p)); err != nil {
				return err
			}
		}
		state[p] = 2
		return nil
	}
	for _, p := range passes {
		if err := visit(p, nil); err != nil {
			return err
		}
	}
	return nil
}

// order returns passes and their prerequisites in dependency order.
func order[C any](passes []*PassOf[C]) []*PassOf[C] {
	var out []*PassOf[C]
	done := map[*PassOf[C]]bool{}
	var add func(p *PassOf[C])
	add = func(p *PassOf[C]) {
		if done[p] {
			return
		}
		done[p] = true
		for _, r := range p.Requires {
			add(r)
		}
		out = append(out, p)
	}
	for _, p := range passes {
		add(p)
	}
	return out
}

// PassTiming is how long a pass took on a rank (for --debug).
type PassTiming struct {
	Pass     string
	Rank     int
	Duration time.Duration
}

// PassWorkers is how many passes of one rank may run at once (0:
// GOMAXPROCS). Passes only read the model and their requirements' results,
// so a pass starts as soon as everything it requires is done; results,
// metrics, errors and timings are then merged in the sequential order, so
// the outcome does not depend on it.
var PassWorkers = 0

// outcome is what one pass left.
type outcome struct {
	res    any
	err    string // failure, or why it was not run
	ran    bool
	m      *Metrics
	timing PassTiming
}

// runner runs a graph of passes of context type C.
type runner[C any] struct {
	rank    int  // the rank errors and timings name (-1: the cluster)
	kind    Kind // of the metrics the passes set (strictMetrics)
	workers int  // passes at once (<= 0: GOMAXPROCS)
	// newCtx is pass p's context: its prerequisites' results and the
	// metrics it records.
	newCtx func(p *PassOf[C], resultOf map[*PassOf[C]]any, m *Metrics) C
	// source is the file a metric set without Context.From comes from
	// ("" for cluster metrics)
	source string
}

// run runs passes (and what they require). A pass starts as soon as what it
// requires is done; one whose prerequisite failed is not run, and its error
// names the prerequisites. Results, metrics, errors and timings are merged
// in dependency order, so the outcome does not depend on the scheduling.
func (rn runner[C]) run(passes []*PassOf[C]) (resultList[*PassOf[C]], *Metrics, []PassError, []PassTiming) {
	ord := order(passes)
	out := make(map[*PassOf[C]]*outcome, len(ord))
	done := make(map[*PassOf[C]]chan struct{}, len(ord))
	for _, p := range ord {
		out[p] = &outcome{}
		done[p] = make(chan struct{})
	}
	deps := transitive(ord)
	workers := rn.workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	sem := make(chan struct{}, workers)
	run := func(p *PassOf[C]) {
		defer close(done[p])
		o := out[p]
		var missing []string
		for _, req := range p.Requires {
			<-done[req]
			if out[req].err != "" {
				missing = append(missing, req.Name)
			}
		}
		if len(missing) > 0 {
			o.err = "not run: prerequisite failed: " + strings.Join(missing, ", ")
			return
		}
		// everything it requires, directly or not, and nothing else
		resultOf := map[*PassOf[C]]any{}
		for _, d := range deps[p] {
			<-done[d]
			if out[d].err == "" {
				resultOf[d] = out[d].res
			}
		}
		o.m = newMetrics()
		ctx := rn.newCtx(p, resultOf, o.m)
		sem <- struct{}{}
		t0 := time.Now()
		res, err := safeRun(p, ctx)
		o.timing = PassTiming{Pass: p.Name, Rank: rn.rank, Duration: time.Since(t0)}
		<-sem
		o.ran = true
		if err == nil && p.ResultType != nil && res != nil && reflect.TypeOf(res) != p.ResultType {
			err = fmt.Errorf("internal error: result of type %T, want %v", res, p.ResultType)
		}
		if err != nil {
			o.err = err.Error()
			return
		}
		o.res = res
	}
	if workers == 1 {
		for _, p := range ord {
			run(p)
		}
	} else {
		var wg sync.WaitGroup
		for _, p := range ord {
			wg.Add(1)
			go func() {
				defer wg.Done()
				run(p)
			}()
		}
		wg.Wait()
	}
	return rn.merge(ord, out)
}

// resultList is the passes' results a finished rank (or the cluster)
// keeps, in the order they ran: a slice, not a map (a map of ~30 passes
// was ~0.9 KiB a rank); a lookup walks it.
type resultList[P comparable] []passResult[P]

type passResult[P comparable] struct {
	pass P
	res  any
}

// of is p's result, nil when p did not run or failed.
func (l resultList[P]) of(p P) any {
	for _, e := range l {
		if e.pass == p {
			return e.res
		}
	}
	return nil
}

// merge collects the outcomes in ord's order.
func (rn runner[C]) merge(ord []*PassOf[C], out map[*PassOf[C]]*outcome) (resultList[*PassOf[C]], *Metrics, []PassError, []PassTiming) {
	results := make(resultList[*PassOf[C]], 0, len(ord))
	// sized once: growing the merged maps pass by pass allocates about
	// as much again in tables left behind
	nv, nu := 0, 0
	for _, p := range ord {
		if o := out[p]; o.ran {
			nv += len(o.m.Values)
			nu += len(o.m.Unavailable)
		}
	}
	metrics := &Metrics{Values: make(map[string]float64, nv), Unavailable: make(map[string]string, nu),
		Sources: make(map[string]string, nv), RanksUsed: map[string][]int{}}
	var errs []PassError
	timings := make([]PassTiming, 0, len(ord))
	def := rn.source
	for _, p := range ord {
		o := out[p]
		if o.ran {
			timings = append(timings, o.timing)
			if strictMetrics {
				errs = append(errs, undeclared(p.Name, rn.kind, rn.rank, o.m.Values, o.m.Unavailable)...)
			}
			for k, v := range o.m.Values {
				metrics.Values[k] = v
				if src, ok := o.m.Sources[k]; ok {
					metrics.Sources[k] = src
				} else if def != "" {
					metrics.Sources[k] = def
				}
			}
			for k, v := range o.m.Unavailable {
				metrics.Unavailable[k] = v
			}
			metrics.Warnings = append(metrics.Warnings, o.m.Warnings...)
			for k, v := range o.m.RanksUsed {
				metrics.RanksUsed[k] = v
			}
		}
		if o.err != "" {
			errs = append(errs, PassError{Pass: p.Name, Rank: rn.rank, Message: o.err})
			continue
		}
		results = append(results, passResult[*PassOf[C]]{p, o.res})
	}
	return results, metrics, errs, timings
}

// runRank runs passes (and what they require) on one rank.
func runRank(r *model.Rank, passes []*Pass) (resultList[*Pass], *Metrics, []PassError, []PassTiming) {
	rn := runner[*Context]{rank: r.Rank, kind: RankMetric, workers: PassWorkers, source: taskSource(r),
		newCtx: func(p *Pass, resultOf map[*Pass]any, m *Metrics) *Context {
			return &Context{Rank: r, ResultOf: resultOf, pass: p, metrics: m}
		}}
	return rn.run(passes)
}

// taskSource is the file a rank's device tasks came from: the timeline,
// else kernel_details.csv (op_summary), "" when neither was read.
func taskSource(r *model.Rank) string {
	switch {
	case r.Have.Timeline:
		return r.Have.TimelineFile
	case r.Have.KernelDetails:
		return r.Have.KernelFile
	}
	return ""
}

// transitive returns, for every pass, everything it requires directly or
// through other passes, in ord's order.
func transitive[C any](ord []*PassOf[C]) map[*PassOf[C]][]*PassOf[C] {
	pos := make(map[*PassOf[C]]int, len(ord))
	for i, p := range ord {
		pos[p] = i
	}
	all := make(map[*PassOf[C]]map[*PassOf[C]]bool, len(ord))
	out := make(map[*PassOf[C]][]*PassOf[C], len(ord))
	for _, p := range ord {
		set := map[*PassOf[C]]bool{}
		for _, r := range p.Requires {
			set[r] = true
			for d := range all[r] {
				set[d] = true
			}
		}
		all[p] = set
		list := make([]*PassOf[C], 0, len(set))
		for d := range set {
			list = append(list, d)
		}
		sort.Slice(list, func(i, j int) bool { return pos[list[i]] < pos[list[j]] })
		out[p] = list
	}
	return out
}

func safeRun[C any](p *PassOf[C], ctx C) (res any, err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("internal error: panic: %v\n%s", v, firstLines(string(debug.Stack()), 12))
		}
	}()
	return p.Run(ctx)
}

func firstLines(s string, n int) string {
	lines := strings.SplitN(s, "\n", n+1)
	if len(lines) > n {
		lines = lines[:n]
	}
	return strings.Join(lines, "\n")
}
