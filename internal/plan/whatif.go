package plan

import (
	"fmt"
	"maps"
	"math"
	"slices"

	"github.com/npuprof/npuprof/internal/analysis"
	"github.com/npuprof/npuprof/internal/analysis/eplb"
	"github.com/npuprof/npuprof/internal/analysis/replay"
	"github.com/npuprof/npuprof/internal/results"
	"github.com/npuprof/npuprof/internal/rules"
)

// The target-concurrency what-if (docs/rules.md, "The target-concurrency
// what-if"): a capture taken at a smaller batch than the deployment serves
// (one request in flight where the field runs 90) judges EPLB and the
// other batch-bound fixes where they do not pay. AddWhatIf rebatches the
// decode steps to the target batch, predicts there the metrics the replay
// can time (the step, each rank's GroupedMatmul, the EP skew), evaluates
// the rules again on them and says which verdicts and gains change.

// minGainPct is the step-time change, in percent, below which a fix
// gains nothing.
const minGainPct = 1.0

// cacheRules are judged on vLLM's cache hit rates, which no replay of the
// decode changes: the what-if lists them with what it cannot say.
var cacheRules = []string{"prefix-cache", "mm-cache", "service-cache-hit"}

// AddWhatIf gives the plan its what-if at the concurrency fact (--fact
// concurrency=N, or vLLM's bench or log) when one replica's decode batch
// there is larger than the capture's; set and in are the rules and the
// input rep was evaluated with. Nothing without a plan or a larger
// target; a target the replay cannot reach is a warning.
func AddWhatIf(res *analysis.Result, set *rules.Set, in *rules.Input, rep *rules.Report) {
	if rep.Plan == nil || in.Facts == nil {
		return
	}
	fv, ok := in.Facts.Get("concurrency")
	n, isNum := number(fv.Value)
	if !ok || !isNum || n < 1 {
		return
	}
	b := newBuilder(res, rep)
	if b.tl == nil {
		return
	}
	t := target{concurrency: int(n), source: fv.Source, replicas: 1, observed: int(b.tl.DecodeBatch())}
	if v, ok := factNumber(in.Facts, "dp"); ok && v >= 1 {
		t.replicas = int(v)
	} else if v, ok := factNumber(in.Facts, "serving.engines"); ok && v >= 1 {
		t.replicas = int(v)
	}
	t.batch = (t.concurrency + t.replicas - 1) / t.replicas
	if v, ok := factNumber(in.Facts, "max_num_seqs"); ok && v >= 1 && int(v) < t.batch {
		t.batch, t.capped = int(v), true
	}
	if t.observed <= 0 {
		rep.Warnings = append(rep.Warnings, fmt.Sprintf("no what-if at concurrency %d: the capture's decode batch is unknown (no attention kernel with an input shape)", t.concurrency))
		return
	}
	if t.batch <= t.observed {
		if t.capped {
			rep.Warnings = append(rep.Warnings, fmt.Sprintf("no what-if at concurrency %d: --max-num-seqs %d caps a decode step at %d requests, and the capture ran batch %d", t.concurrency, t.batch, t.batch, t.observed))
		}
		return
	}
	w, err := b.whatIf(res, set, in, rep, t)
	if err != nil {
		rep.Warnings = append(rep.Warnings, fmt.Sprintf("no what-if at concurrency %d: %v", t.concurrency, err))
		return
	}
	rep.Plan.WhatIf = w
}

// target is the what-if's concurrency and the batch it gives one replica.
type target struct {
	concurrency, replicas, batch, observed int
	capped                                 bool
	source                                 string
}

// whatIf rebatches b's timeline to t's batch, evaluates the rules on the
// metrics predicted there and compares each rule with rep's verdict.
func (b *builder) whatIf(res *analysis.Result, set *rules.Set, in *rules.Input, rep *rules.Report, t target) (*results.WhatIf, error) {
	rb := replay.Rebatch{To: int32(t.batch), WithinRanks: true}
	p, tlN, err := replay.Predict(b.tl, []replay.Transform{rb})
	if err != nil {
		return nil, err
	}
	ratio := p.AfterNs / p.BeforeNs
	baseN := *b.base * ratio
	if !possible(baseN) {
		return nil, fmt.Errorf("the replay gave no possible step time at batch %d (%g -> %g ns)", t.batch, p.BeforeNs, p.AfterNs)
	}
	resN, metrics := atTarget(res, b.tl, tlN, ratio, t.batch)
	inN := &rules.Input{Result: resN, Facts: in.Facts, Lang: in.Lang}
	repN := rules.Evaluate(set, inN)

	w := &results.WhatIf{Concurrency: t.concurrency, Source: t.source, Replicas: t.replicas, Batch: t.batch,
		BatchObserved: t.observed, StepTimeUs: results.BeforeAfter{Before: round1(*b.base / 1000), After: round1(baseN / 1000)},
		Metrics: metrics, Findings: []results.WhatIfFinding{}}
	// tokens per second: the batch over the step time
	w.ThroughputChangePct = round2((float64(t.batch)/baseN/(float64(t.observed) / *b.base) - 1) * 100)
	share := fmt.Sprintf("%d concurrent requests over %d replica(s): %d per replica's decode step", t.concurrency, t.replicas, t.batch)
	if t.capped {
		share += " (at most --max-num-seqs)"
	}
	w.Basis = fmt.Sprintf("%s; %s; the rules judged on the replayed step, GroupedMatmul time and tokens and EP skew, every other metric as measured", share, p.Basis)

	bN := &builder{rep: repN, tl: tlN, base: &baseN, byRule: map[string]*rules.Fired{}}
	for i := range repN.Findings {
		bN.byRule[repN.Findings[i].Rule] = &repN.Findings[i]
	}
	now := map[string]*rules.Fired{}
	for i := range rep.Findings {
		now[rep.Findings[i].Rule] = &rep.Findings[i]
	}
	for _, o := range rep.Outcomes {
		f0, f1 := now[o.Rule], bN.byRule[o.Rule]
		if f0 == nil && f1 == nil {
			continue
		}
		wf := results.WhatIfFinding{Rule: o.Rule, FiredNow: f0 != nil, FiredAtTarget: f1 != nil}
		fix := f1
		if fix == nil {
			fix = f0
		}
		wf.StepTimeChangePctNow = replayedChange(b, fix)
		wf.StepTimeChangePctTarget = replayedChange(bN, fix)
		if wf.Note = whatIfNote(wf, t); wf.Note != "" {
			w.Findings = append(w.Findings, wf)
		}
		if f0 != nil && !gains(wf.StepTimeChangePctNow) && gains(wf.StepTimeChangePctTarget) {
			// the finding itself says it gains nothing now, but would
			f0.Revisit = wf.Note
		}
	}
	return w, nil
}

// replayedChange is the step-time change (percent) of f's fix, with the
// fixes it requires, replayed on on's timeline; nil when it has no
// replayable transform or the replay gives no possible step.
func replayedChange(on *builder, f *rules.Fired) *float64 {
	ts, _, err := on.transforms(f, map[string]bool{})
	if err != nil || len(ts) == 0 {
		return nil
	}
	p, err := replay.PredictStep(on.tl, ts)
	if err != nil {
		return nil
	}
	pr := on.prediction(*on.base, p.BeforeNs, p.AfterNs, p.UpperBound, "")
	if pr == nil {
		return nil
	}
	return &pr.StepTimeChangePct
}

// whatIfNote says what changes for one rule at the target, "" when
// nothing does (the same verdict, and a gain within a point of now's).
// A change of verdict is its own message after the gain's ("...; the
// rule fires at batch 1 and is clear at 90"), so that each has one phrase
// in a language's table, whether the other is there or not.
func whatIfNote(wf results.WhatIfFinding, t target) string {
	at := fmt.Sprintf("batch %d", t.observed)
	revisit := fmt.Sprintf("%d concurrent requests", t.concurrency)
	verdict := func(fired bool) string {
		if fired {
			return "fires"
		}
		return "is clear"
	}
	change := ""
	if wf.FiredNow != wf.FiredAtTarget {
		change = fmt.Sprintf("the rule %s at %s and %s at %d", verdict(wf.FiredNow), at, verdict(wf.FiredAtTarget), t.concurrency)
	}
	withChange := func(note string) string {
		if change == "" {
			return note
		}
		return note + "; " + change
	}
	c0, c1 := wf.StepTimeChangePctNow, wf.StepTimeChangePctTarget
	if c0 == nil && c1 == nil && change != "" && !slices.Contains(cacheRules, wf.Rule) {
		return fmt.Sprintf("the rule %s at %s and %s at %s (its fix is not replayed: no step-time change to compare)", verdict(wf.FiredNow), at, verdict(wf.FiredAtTarget), revisit)
	}
	if slices.Contains(cacheRules, wf.Rule) && c0 == nil && c1 == nil {
		return withChange(fmt.Sprintf("judged on vLLM's cache hit rates, which the replay does not change: its gain is in prefill, which the what-if does not replay; measure the hit rate again at %s", revisit))
	}
	gain := gains
	pct := func(c *float64) string {
		if c == nil {
			return "not replayed"
		}
		return fmt.Sprintf("%+.2f%% step time", *c)
	}
	switch {
	case !gain(c0) && gain(c1):
		return withChange(fmt.Sprintf("no gain at %s (%s): revisit at %s, where its fix is predicted at %s", at, pct(c0), revisit, pct(c1)))
	case gain(c0) && !gain(c1):
		return withChange(fmt.Sprintf("gains at %s (%s) but not at %s (%s)", at, pct(c0), revisit, pct(c1)))
	case gain(c0) && gain(c1) && math.Abs(*c1-*c0) >= minGainPct, change != "":
		return withChange(fmt.Sprintf("%s at %s, %s at %s", pct(c0), at, pct(c1), revisit))
	}
	return ""
}

// gains reports whether a step-time change (percent) is a gain: at least
// minGainPct faster.
func gains(c *float64) bool { return c != nil && *c <= -minGainPct }

// atTarget returns a copy of res whose metrics the replay times differ:
// each rank's decode step scaled by the replay's step ratio, its
// GroupedMatmul time and tokens by its own replayed ratio, the decode
// batch set to batch and the EP skew recomputed over each ep group from
// those. It returns, too, the cluster metrics it set.
func atTarget(res *analysis.Result, tl, tlN *replay.Timeline, ratio float64, batch int) (*analysis.Result, map[string]float64) {
	before, after := tl.ExpertLoads(), tlN.ExpertLoads()
	load := map[int][2]replay.ExpertLoad{}
	for i, l := range tl.Ranks {
		load[l.Rank] = [2]replay.ExpertLoad{before[i], after[i]}
	}
	out := *res
	out.Ranks = make([]*analysis.RankResult, len(res.Ranks))
	byRank := map[int]*analysis.RankResult{}
	for i, rr := range res.Ranks {
		c := *rr
		c.Metrics = maps.Clone(rr.Metrics)
		scale := func(name string, r float64) {
			if v, ok := c.Metrics[name]; ok && possible(r) {
				c.Metrics[name] = v * r
			}
		}
		scale(analysis.MetricDecodeStepUs, ratio)
		if _, ok := c.Metrics[analysis.MetricDecodeBatchObserved]; ok {
			c.Metrics[analysis.MetricDecodeBatchObserved] = float64(batch)
		}
		if ld, ok := load[rr.Rank]; ok {
			if ld[0].Ns > 0 {
				r := float64(ld[1].Ns) / float64(ld[0].Ns)
				scale(analysis.MetricMoEGMMUs, r)
				scale(analysis.MetricMoEGMMLayerUs, r)
			}
			if ld[0].Tokens > 0 {
				scale(analysis.MetricMoEGMMTokens, float64(ld[1].Tokens)/float64(ld[0].Tokens))
				c.Metrics[analysis.MetricMoEGMMTokens] = math.Round(c.Metrics[analysis.MetricMoEGMMTokens])
			}
		}
		out.Ranks[i], byRank[rr.Rank] = &c, &c
	}
	metrics := map[string]float64{}
	if res.Cluster == nil {
		return &out, metrics
	}
	cl := *res.Cluster
	cl.Metrics = maps.Clone(res.Cluster.Metrics)
	out.Cluster = &cl
	x := analysis.ExpertsOf(res.Cluster)
	if x == nil || x.EP == nil || len(x.EP.Groups) == 0 {
		return &out, metrics
	}
	worst, worstRatio := -1, 0.0
	for gi, g := range x.EP.Groups {
		if r, ok := eplb.MaxOverMean(rankValues(byRank, g.Ranks, analysis.MetricMoEGMMUs)); ok && r > worstRatio {
			worst, worstRatio = gi, r
		}
	}
	if worst < 0 {
		return &out, metrics
	}
	g := x.EP.Groups[worst]
	times := rankValues(byRank, g.Ranks, analysis.MetricMoEGMMUs)
	set := func(name string, v float64) {
		if _, ok := cl.Metrics[name]; ok {
			cl.Metrics[name], metrics[name] = v, v
		}
	}
	set(analysis.MetricSkewGMMMaxOverMean, worstRatio)
	hot := 0
	for i := range times {
		if times[i] > times[hot] {
			hot = i
		}
	}
	set(analysis.MetricSkewGMMMaxRank, float64(g.Ranks[hot]))
	if r, ok := eplb.MaxOverMean(rankValues(byRank, g.Ranks, analysis.MetricMoEGMMTokens)); ok {
		set(analysis.MetricSkewGMMTokensMaxOverMean, r)
	}
	// the time lost to the imbalance scales with the hot rank's excess
	// over the group's mean
	orig := rankValues(rankMap(res.Ranks), g.Ranks, analysis.MetricMoEGMMUs)
	if e0, e1 := excess(orig), excess(times); e0 > 0 && e1 >= 0 {
		if v, ok := cl.Metrics[analysis.MetricSkewGMMLostUs]; ok {
			set(analysis.MetricSkewGMMLostUs, v*e1/e0)
		}
	}
	return &out, metrics
}

// rankValues returns the named metric of each of ranks that measured it.
func rankValues(by map[int]*analysis.RankResult, ranks []int, name string) []float64 {
	var v []float64
	for _, r := range ranks {
		if rr := by[r]; rr != nil {
			if x, ok := rr.Metrics[name]; ok {
				v = append(v, x)
			}
		}
	}
	return v
}

func rankMap(rs []*analysis.RankResult) map[int]*analysis.RankResult {
	m := make(map[int]*analysis.RankResult, len(rs))
	for _, rr := range rs {
		m[rr.Rank] = rr
	}
	return m
}

// excess is the largest value minus the mean, 0 without values.
func excess(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	var s, m float64
	for _, x := range v {
		s, m = s+x, max(m, x)
	}
	return m - s/float64(len(v))
}

// number returns v as a float64 when it is a number.
func number(v any) (float64, bool) {
	switch x := v.(type) {
	case int:
		return float64(x), true
	case int64:
		return float64(x), true
	case float64:
		return x, !math.IsNaN(x) && !math.IsInf(x, 0)
	}
	return 0, false
}

// factNumber is the named fact as a number.
func factNumber(f *rules.FactSet, name string) (float64, bool) {
	v, ok := f.Get(name)
	if !ok {
		return 0, false
	}
	return number(v.Value)
}
