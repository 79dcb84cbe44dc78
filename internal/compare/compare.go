// Package compare is npuprof's one comparison engine: it takes two analysis
// documents (npuprof.analysis/v1, from a profile just analyzed or a saved
// `analyze --format json`) and measures what changed between them: every
// metric per rank and over the ranks, the per-step time, the collectives by
// type and group that appeared or disappeared, the kernels whose time per
// step changed most, the findings resolved or new (each resolved finding's
// predicted saving against the measured one) and the serving context.
// `npuprof diff` renders its Result; `npuprof check --baseline` reads it.
//
// The engine reads documents only, never profiles or models, so a saved
// JSON document and a fresh analysis compare the same way. It only
// computes: the diff's text, JSON and HTML writers are in package render.
package compare

import (
	"cmp"
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/npuprof/npuprof/internal/results"
	"github.com/npuprof/npuprof/internal/results/diff"
	"github.com/npuprof/npuprof/internal/results/metric"
)

// Options tune a comparison.
type Options struct {
	// Kernels is how many kernels to list, largest absolute change first
	// (0: DefaultKernels).
	Kernels int
}

// DefaultKernels is the default length of the kernel list.
const DefaultKernels = 15

func ptr(v float64) *float64 { return &v }

// deref is *p, 0 when p is nil (for ordering only: never shown).
func deref(p *float64) float64 {
	if p == nil {
		return 0
	}
	return *p
}

func pctOf(delta, before float64) *float64 {
	if before == 0 || math.IsNaN(before) {
		return nil
	}
	return ptr(delta / math.Abs(before) * 100)
}

// usChange is before and after (µs) with their change.
func usChange(before, after float64) diff.UsChange {
	return diff.UsChange{BeforeUs: before, AfterUs: after, DeltaUs: after - before, Pct: pctOf(after-before, before)}
}

// Compare compares before with after.
func Compare(before, after *results.Document, opts Options) *diff.Result {
	if opts.Kernels <= 0 {
		opts.Kernels = DefaultKernels
	}
	r := &diff.Result{Schema: diff.Schema, Before: side(before), After: side(after), Overall: []diff.MetricDelta{}, Ranks: []diff.RankDelta{},
		Collectives: []diff.CollectiveDelta{}, Kernels: []diff.KernelDelta{}, Findings: []diff.FindingDelta{}, Unavailable: map[string]string{}}
	r.Before.Partial, r.After.Partial = partialRanksOf(before), partialRanksOf(after)
	bp, ap := buildPartial(before, diff.SideBefore), buildPartial(after, diff.SideAfter)
	r.Overall = metricDeltas(meanMetrics(before), meanMetrics(after), unavailableOf(before), unavailableOf(after))
	for i := range r.Overall {
		m := &r.Overall[i]
		m.Partial = diff.JoinRefs(bp.mean(before, m.Metric), ap.mean(after, m.Metric))
	}
	if r.Before.Steps > 0 && r.After.Steps > 0 && r.Before.Steps != r.After.Steps {
		r.Notes = append(r.Notes, fmt.Sprintf("the captures have different step counts (%d before, %d after): metric totals cover different lengths; the step time, per-step collective counts, kernels and measured savings are normalized per step", r.Before.Steps, r.After.Steps))
	}
	compareRanks(r, before, after, bp, ap)
	compareSteps(r, before, after, bp, ap)
	compareCollectives(r, before, after, bp, ap)
	compareKernels(r, before, after, opts.Kernels, bp, ap)
	compareFindings(r, before, after, bp, ap)
	compareStepTime(r, before, after)
	compareLedger(r, before, after)
	comparePredictions(r, before, after)
	compareServing(r, before, after)
	compareService(r, before, after)
	return r
}

func side(d *results.Document) diff.Side {
	s := diff.Side{Path: d.Input.Path, Kind: d.Input.Kind, Ranks: append([]int{}, d.Input.Ranks...)}
	s.Steps, s.StepsFrom = stepCount(d)
	return s
}

// stepCount is the steps per rank: the most common number of
// ProfilerStep#N rows, else the mean of decode.steps.count.
func stepCount(d *results.Document) (int, string) {
	counts := map[int]int{}
	for _, rk := range d.Ranks {
		if len(rk.Steps) > 0 {
			counts[len(rk.Steps)]++
		}
	}
	best, bestN := 0, 0
	for c, n := range counts {
		if n > bestN || (n == bestN && c > best) {
			best, bestN = c, n
		}
	}
	if best > 0 {
		return best, "ProfilerStep#N"
	}
	if m, ok := meanMetrics(d)[metric.MetricDecodeStepsCount]; ok && m > 0 {
		return int(math.Round(m)), metric.MetricDecodeStepsCount
	}
	return 0, ""
}

// meanMetrics is each metric's mean over the ranks that measured it, plus
// the cross-rank metrics (cluster.metrics: skew.*, collectives.*, ...)
// under their own names.
func meanMetrics(d *results.Document) map[string]float64 {
	sum := map[string]float64{}
	n := map[string]int{}
	for _, rk := range d.Ranks {
		for k, v := range rk.Metrics {
			sum[k] += v
			n[k]++
		}
	}
	for k := range sum {
		sum[k] /= float64(n[k])
	}
	if d.Cluster != nil {
		for k, v := range d.Cluster.Metrics {
			sum[k] = v
		}
	}
	return sum
}

// Baseline reduces a saved document to what budgets (check --baseline)
// compare with: the same per-metric means the overall comparison uses.
// A metric whose value read a rank cut short carries those ranks
// (PartialRanks, the same ranks the diff marks), so a budget or
// baseline_metric() that reads it says so.
func Baseline(d *results.Document, path string) *results.Baseline {
	b := &results.Baseline{Path: path, Metrics: meanMetrics(d)}
	pi := buildPartial(d, diff.SideBefore)
	if len(pi.ranks) == 0 {
		return b
	}
	b.PartialRanks, b.PartialReason = map[string][]int{}, map[int]string{}
	for m := range b.Metrics {
		for _, p := range pi.mean(d, m) {
			b.PartialRanks[m] = append(b.PartialRanks[m], p.Rank)
		}
	}
	for _, rk := range d.Ranks {
		if pi.metrics[rk.Rank] != nil {
			b.PartialReason[rk.Rank] = rk.PartialReason
		}
	}
	return b
}

// MeanMetrics is each per-rank metric's mean over the ranks that measured
// it, plus the cross-rank metrics under their own names: the numbers the
// overall comparison and baseline budgets read.
func MeanMetrics(d *results.Document) map[string]float64 { return meanMetrics(d) }

// unavailableOf is, per metric, the first reason a rank (or the cluster
// analysis) gave.
func unavailableOf(d *results.Document) map[string]string {
	out := map[string]string{}
	if d.Cluster != nil {
		for k, v := range d.Cluster.Unavailable {
			out[k] = v
		}
	}
	for _, rk := range d.Ranks {
		for k, v := range rk.Unavailable {
			if _, ok := out[k]; !ok {
				out[k] = v
			}
		}
	}
	return out
}

func metricDeltas(b, a map[string]float64, bMiss, aMiss map[string]string) []diff.MetricDelta {
	names := map[string]bool{}
	for k := range b {
		names[k] = true
	}
	for k := range a {
		names[k] = true
	}
	out := make([]diff.MetricDelta, 0, len(names))
	for k := range names {
		m := diff.MetricDelta{Metric: k}
		bv, bok := b[k]
		av, aok := a[k]
		if bok {
			m.Before = ptr(bv)
		} else {
			m.BeforeMissing = missing(bMiss, k)
		}
		if aok {
			m.After = ptr(av)
		} else {
			m.AfterMissing = missing(aMiss, k)
		}
		if bok && aok {
			m.Delta = ptr(av - bv)
			m.Pct = pctOf(av-bv, bv)
		}
		out = append(out, m)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Metric < out[j].Metric })
	return out
}

// missing finds the reason a metric is absent: its own entry, or a family
// entry ("hccl.group.*").
func missing(m map[string]string, k string) string {
	if r, ok := m[k]; ok {
		return r
	}
	for pat, r := range m {
		if p, ok := strings.CutSuffix(pat, "*"); ok && strings.HasPrefix(k, p) {
			return r
		}
	}
	return "not in this document"
}

func compareRanks(r *diff.Result, before, after *results.Document, bp, ap *partialIndex) {
	am := map[int]*results.RankDoc{}
	for i := range after.Ranks {
		am[after.Ranks[i].Rank] = &after.Ranks[i]
	}
	seen := map[int]bool{}
	var onlyBefore, onlyAfter []string
	for i := range before.Ranks {
		b := &before.Ranks[i]
		a, ok := am[b.Rank]
		if !ok {
			onlyBefore = append(onlyBefore, fmt.Sprint(b.Rank))
			continue
		}
		seen[b.Rank] = true
		ms := metricDeltas(b.Metrics, a.Metrics, b.Unavailable, a.Unavailable)
		for i := range ms {
			ms[i].Partial = diff.JoinRefs(bp.rank(b.Rank, ms[i].Metric), ap.rank(b.Rank, ms[i].Metric))
		}
		r.Ranks = append(r.Ranks, diff.RankDelta{Rank: b.Rank, Metrics: ms})
	}
	for _, a := range after.Ranks {
		if !seen[a.Rank] {
			onlyAfter = append(onlyAfter, fmt.Sprint(a.Rank))
		}
	}
	sort.Slice(r.Ranks, func(i, j int) bool { return r.Ranks[i].Rank < r.Ranks[j].Rank })
	if len(onlyBefore) > 0 {
		r.Notes = append(r.Notes, "rank(s) "+strings.Join(onlyBefore, ", ")+" only before: in the overall means, not in the per-rank comparison")
	}
	if len(onlyAfter) > 0 {
		r.Notes = append(r.Notes, "rank(s) "+strings.Join(onlyAfter, ", ")+" only after: in the overall means, not in the per-rank comparison")
	}
}

// stepMeans is each quantity's mean over every step of every rank that
// measured it; when no rank has ProfilerStep#N rows, the window quantities
// divided by decode.steps.count (from is then "decode.steps.count").
// missing says why a quantity measured on no rank is absent; partial names
// the ranks left out of a quantity's mean, and why; cut names the ranks
// whose steps (or metric) went into a quantity from a file cut short.
func stepMeans(d *results.Document, pi *partialIndex) (out map[string]float64, from string, missing, partial map[string]string, cut map[string][]diff.PartialRef) {
	out, missing, partial, cut = map[string]float64{}, map[string]string{}, map[string]string{}, map[string][]diff.PartialRef{}
	n := map[string]int{}
	used := map[string]map[int]bool{}
	steps := 0
	type gap struct {
		ranks []string
		why   string
	}
	gaps := map[string]*gap{}
	for _, rk := range d.Ranks {
		for _, s := range rk.Steps {
			steps++
			for _, q := range diff.StepQuantities {
				v, ok := s.Value(q + "_us")
				if !ok {
					g := gaps[q]
					if g == nil {
						g = &gap{}
						gaps[q] = g
					}
					if r := fmt.Sprint(rk.Rank); len(g.ranks) == 0 || g.ranks[len(g.ranks)-1] != r {
						g.ranks = append(g.ranks, r)
					}
					if g.why == "" {
						g.why = rk.Unavailable["steps."+q+"_us"]
					}
					continue
				}
				out[q] += v
				n[q]++
				if used[q] == nil {
					used[q] = map[int]bool{}
				}
				used[q][rk.Rank] = true
			}
		}
	}
	if steps > 0 {
		for q := range out {
			out[q] /= float64(n[q])
		}
		for q, g := range gaps {
			why := g.why
			if why == "" {
				why = "not measured"
			}
			if n[q] == 0 {
				delete(out, q)
				missing[q] = fmt.Sprintf("not measured on any rank (rank %s: %s)", g.ranks[0], why)
			} else {
				partial[q] = fmt.Sprintf("mean over the ranks that measured it; not measured on rank(s) %s (%s)", strings.Join(g.ranks, ", "), why)
			}
		}
		for q := range out {
			if c := pi.of(used[q]); c != nil {
				cut[q] = c
			}
		}
		return out, "ProfilerStep#N", missing, partial, cut
	}
	count, from := stepCount(d)
	if count == 0 {
		return nil, "", nil, nil, nil
	}
	m := meanMetrics(d)
	metricOf := map[string]string{"window": metric.MetricDeviceWindowUs, "computing": metric.MetricComputingUs,
		"communication": metric.MetricCommunicationUs, "communication_not_overlapped": metric.MetricCommNotOverlappedUs,
		"free": metric.MetricFreeUs}
	for _, q := range diff.StepQuantities {
		if v, ok := m[metricOf[q]]; ok {
			out[q] = v / float64(count)
			if c := diff.JoinRefs(pi.mean(d, metricOf[q]), pi.mean(d, metric.MetricDecodeStepsCount)); c != nil {
				cut[q] = c
			}
			continue
		}
		why := "not measured on any rank"
		for _, rk := range d.Ranks {
			if w, ok := rk.Unavailable[metricOf[q]]; ok {
				why = fmt.Sprintf("%s on no rank (rank %d: %s)", metricOf[q], rk.Rank, w)
				break
			}
		}
		missing[q] = why
	}
	if len(out) == 0 {
		return nil, "", nil, nil, nil
	}
	return out, from, missing, partial, cut
}

func compareSteps(r *diff.Result, before, after *results.Document, bp, ap *partialIndex) {
	b, bFrom, bMiss, bPart, bCut := stepMeans(before, bp)
	a, aFrom, aMiss, aPart, aCut := stepMeans(after, ap)
	switch {
	case b == nil && a == nil:
		r.Unavailable["steps"] = "neither document has steps (no ProfilerStep#N and no decode.steps.count)"
		return
	case b == nil:
		r.Unavailable["steps"] = "the before document has no steps (no ProfilerStep#N and no decode.steps.count)"
		return
	case a == nil:
		r.Unavailable["steps"] = "the after document has no steps (no ProfilerStep#N and no decode.steps.count)"
		return
	}
	if bFrom != aFrom {
		r.Notes = append(r.Notes, fmt.Sprintf("per-step time: before from %s, after from %s", bFrom, aFrom))
	}
	for _, q := range diff.StepQuantities {
		bv, bok := b[q]
		av, aok := a[q]
		if !bok || !aok {
			var why []string
			if w, ok := bMiss[q]; ok {
				why = append(why, "before: "+w)
			}
			if w, ok := aMiss[q]; ok {
				why = append(why, "after: "+w)
			}
			if len(why) > 0 {
				r.Unavailable["steps."+q] = strings.Join(why, "; ")
			}
			continue
		}
		for _, side := range []struct {
			name string
			part map[string]string
		}{{"before", bPart}, {"after", aPart}} {
			if p, ok := side.part[q]; ok {
				r.Notes = append(r.Notes, fmt.Sprintf("per-step %s, %s side: %s", q, side.name, p))
			}
		}
		r.Steps = append(r.Steps, diff.StepDelta{Quantity: q, UsChange: usChange(bv, av),
			Partial: diff.JoinRefs(bCut[q], aCut[q])})
	}
}

type ctAcc struct {
	count, us float64
}

// collectivesOf is each (type, group)'s count and time, mean over ranks
// (a rank without that pair counts 0). ok is false when no rank carries
// the collectives list (an older document).
func collectivesOf(d *results.Document) (map[[2]string]ctAcc, map[int]bool, bool) {
	out := map[[2]string]ctAcc{}
	have := false
	n := 0
	used := map[int]bool{}
	for _, rk := range d.Ranks {
		if rk.Collectives == nil {
			if v, ok := rk.Metrics[metric.MetricHCCLTotalCount]; !ok || v != 0 {
				continue
			}
		}
		have = true
		n++
		used[rk.Rank] = true
		for _, c := range rk.Collectives {
			k := [2]string{c.Type, c.Group}
			a := out[k]
			a.count += float64(c.Count)
			a.us += c.TimeUs
			out[k] = a
		}
	}
	for k, a := range out {
		out[k] = ctAcc{a.count / float64(n), a.us / float64(n)}
	}
	return out, used, have
}

func status(before, after float64) string {
	switch {
	case before > 0 && after == 0:
		return diff.StatusGone
	case before == 0 && after > 0:
		return diff.StatusNew
	case before != after:
		return diff.StatusChanged
	}
	return diff.StatusSame
}

func compareCollectives(r *diff.Result, before, after *results.Document, bp, ap *partialIndex) {
	b, bUsed, bok := collectivesOf(before)
	a, aUsed, aok := collectivesOf(after)
	if !bok || !aok {
		r.Unavailable["collectives"] = "a document has no per-rank collectives list (saved by an older npuprof, or no HCCL data)"
		return
	}
	keys := map[[2]string]bool{}
	for k := range b {
		keys[k] = true
	}
	for k := range a {
		keys[k] = true
	}
	for k := range keys {
		c := diff.CollectiveDelta{Type: k[0], Group: k[1], BeforeCount: b[k].count, AfterCount: a[k].count, BeforeUs: b[k].us, AfterUs: a[k].us,
			Partial: diff.JoinRefs(bp.of(bUsed), ap.of(aUsed))}
		c.Status = status(c.BeforeCount, c.AfterCount)
		if c.Status == diff.StatusSame && c.BeforeUs != c.AfterUs {
			c.Status = diff.StatusChanged
		}
		if r.Before.Steps > 0 && r.After.Steps > 0 {
			c.BeforeCountPerStep = ptr(c.BeforeCount / float64(r.Before.Steps))
			c.AfterCountPerStep = ptr(c.AfterCount / float64(r.After.Steps))
		}
		r.Collectives = append(r.Collectives, c)
	}
	order := map[string]int{diff.StatusGone: 0, diff.StatusNew: 1, diff.StatusChanged: 2, diff.StatusSame: 3}
	sort.Slice(r.Collectives, func(i, j int) bool {
		x, y := r.Collectives[i], r.Collectives[j]
		if order[x.Status] != order[y.Status] {
			return order[x.Status] < order[y.Status]
		}
		dx, dy := math.Abs(x.AfterUs-x.BeforeUs), math.Abs(y.AfterUs-y.BeforeUs)
		if dx != dy {
			return dx > dy
		}
		if x.Type != y.Type {
			return x.Type < y.Type
		}
		return x.Group < y.Group
	})
}

type kAcc struct {
	name, op, core string
	us, count      float64
}

// kernelsOf is each kernel's total time and count per rank (mean over the
// ranks that carry a kernel list), divided by steps (when known).
func kernelsOf(d *results.Document, steps int) (map[[2]string]*kAcc, map[int]bool, bool) {
	out := map[[2]string]*kAcc{}
	n := 0
	used := map[int]bool{}
	for _, rk := range d.Ranks {
		if rk.Kernels == nil {
			continue
		}
		n++
		used[rk.Rank] = true
		for _, k := range rk.Kernels {
			key := [2]string{k.OpType, k.Name}
			a := out[key]
			if a == nil {
				a = &kAcc{name: k.Name, op: k.OpType, core: k.Core}
				out[key] = a
			}
			a.us += k.TotalUs
			a.count += float64(k.Count)
		}
	}
	div := float64(n) * float64(max(steps, 1))
	for _, a := range out {
		a.us /= div
		a.count /= div
	}
	return out, used, n > 0
}

func compareKernels(r *diff.Result, before, after *results.Document, limit int, bp, ap *partialIndex) {
	b, bUsed, bok := kernelsOf(before, r.Before.Steps)
	a, aUsed, aok := kernelsOf(after, r.After.Steps)
	cut := diff.JoinRefs(bp.of(bUsed), ap.of(aUsed))
	if !bok || !aok {
		r.Unavailable["kernels"] = "a document has no per-rank kernels list (saved by an older npuprof, or no compute kernels)"
		return
	}
	if r.Before.Steps == 0 || r.After.Steps == 0 {
		r.Unavailable["kernels.per_step"] = "a side's step count is unknown: kernel times are per rank over the whole capture, not per step"
	}
	keys := map[[2]string]bool{}
	for k := range b {
		keys[k] = true
	}
	for k := range a {
		keys[k] = true
	}
	var all []diff.KernelDelta
	for k := range keys {
		kd := diff.KernelDelta{OpType: k[0], Name: k[1], Partial: cut}
		if x := b[k]; x != nil {
			kd.BeforeUs, kd.BeforeCount, kd.Core = x.us, x.count, x.core
		}
		if x := a[k]; x != nil {
			kd.AfterUs, kd.AfterCount = x.us, x.count
			if kd.Core == "" {
				kd.Core = x.core
			}
		}
		kd.DeltaUs = kd.AfterUs - kd.BeforeUs
		kd.Pct = pctOf(kd.DeltaUs, kd.BeforeUs)
		kd.Status = status(kd.BeforeUs, kd.AfterUs)
		all = append(all, kd)
	}
	sort.Slice(all, func(i, j int) bool {
		x, y := math.Abs(all[i].DeltaUs), math.Abs(all[j].DeltaUs)
		if x != y {
			return x > y
		}
		if all[i].OpType != all[j].OpType {
			return all[i].OpType < all[j].OpType
		}
		return all[i].Name < all[j].Name
	})
	if len(all) > limit {
		all = all[:limit]
	}
	r.Kernels = all
}

// EffectMetrics names, per rule id, the per-rank metrics whose decrease
// (summed) is the measured effect of that rule's fix: the quantity its
// saving_us estimates. A rule not listed here is measured on the first
// evidence metric of its finding that is a total time (a name ending in
// time_us, not hccl.per_layer.*), else on device.window.time_us.
var EffectMetrics = map[string][]string{
	"moe-routing-cumsum":  {metric.MetricMoECumsumUs},
	"comm-ep-flashcomm":   {metric.MetricHCCLTotalUs},
	"graph-capture-sizes": {metric.MetricFreeUs},
	"host-bound-free":     {metric.MetricFreeUs},
	"event-wait-skew":     {metric.MetricEventWaitUs},
	// its bound: the main stream's waits for side-stream kernels, the
	// gating and the routing kernels
	"vllm-ascend-upgrade": {metric.MetricEventWaitMainStreamKernelUs, metric.MetricMoEGatingUs, metric.MetricMoERoutingUs},
}

// perLayer reports whether a metric is a mean per MoE layer
// (hccl.per_layer.time_us and its per-type family), not a total.
func perLayer(name string) bool {
	f := metric.FamilyHCCLPerLayerTypeUs
	return name == metric.MetricHCCLPerLayerUs || name == string(f) || f.Has(name)
}

func effectMetrics(rule string, ev []string) []string {
	if m, ok := EffectMetrics[rule]; ok {
		return m
	}
	for _, e := range ev {
		if strings.HasSuffix(e, "time_us") && !perLayer(e) {
			return []string{e}
		}
	}
	return []string{metric.MetricDeviceWindowUs}
}

func compareFindings(r *diff.Result, before, after *results.Document, bp, ap *partialIndex) {
	b, bOrder := findingsBy(before, diff.SideBefore)
	a, aOrder := findingsBy(after, diff.SideAfter)
	m := measurer{r: r, before: before, after: after, bp: bp, ap: ap, bm: meanMetrics(before), am: meanMetrics(after), scale: 1}
	if r.Before.Steps > 0 && r.After.Steps > 0 {
		m.scale = float64(r.Before.Steps) / float64(r.After.Steps)
		m.normalized = true
	}
	for _, rule := range bOrder {
		x := b[rule]
		f := diff.FindingDelta{Rule: rule, Title: x.title, Severity: x.sev, PredictedUs: x.saving, Status: diff.FindingPersists,
			SavingUncertain: x.uncertain}
		if y, ok := a[rule]; ok {
			f.Partial = diff.JoinRefs(x.partial, y.partial)
		} else {
			f.Status = diff.FindingResolved
			f.Partial = diff.JoinRefs(x.partial)
			f.StatusPartial = ap.all()
		}
		m.measure(&f, effectMetrics(rule, x.evidence))
		r.Findings = append(r.Findings, f)
	}
	for _, rule := range aOrder {
		if _, ok := b[rule]; ok {
			continue
		}
		x := a[rule]
		f := diff.FindingDelta{Rule: rule, Title: x.title, Severity: x.sev, PredictedUs: x.saving, Status: diff.FindingNew,
			MeasuredMetric:  strings.Join(effectMetrics(rule, x.evidence), " + "),
			MeasuredMissing: "new on the after side: no fix to measure",
			Partial:         diff.JoinRefs(x.partial), SavingUncertain: x.uncertain, StatusPartial: bp.all()}
		r.Findings = append(r.Findings, f)
	}
	order := map[string]int{diff.FindingResolved: 0, diff.FindingNew: 1, diff.FindingPersists: 2}
	sort.SliceStable(r.Findings, func(i, j int) bool {
		x, y := r.Findings[i], r.Findings[j]
		if order[x.Status] != order[y.Status] {
			return order[x.Status] < order[y.Status]
		}
		// no estimate orders as 0
		return cmp.Compare(deref(x.PredictedUs), deref(y.PredictedUs)) > 0
	})
	if len(before.Findings) == 0 && len(after.Findings) == 0 {
		r.Unavailable["findings"] = "neither document has findings (no rule fired, or the rules did not run)"
	}
}

// sideFinding is one rule's findings on one side, added up.
type sideFinding struct {
	title, sev string
	// saving is the sum of the findings' estimates; nil when none had one
	saving    *float64
	evidence  []string
	partial   []diff.PartialRef
	uncertain bool
}

// findingsBy adds up a document's findings by rule, in first-seen order.
func findingsBy(d *results.Document, side string) (map[string]*sideFinding, []string) {
	out := map[string]*sideFinding{}
	var order []string
	for _, f := range d.Findings {
		x := out[f.Rule]
		if x == nil {
			x = &sideFinding{title: f.Title, sev: f.Severity}
			out[f.Rule] = x
			order = append(order, f.Rule)
		}
		if v, ok := f.Saving(); ok {
			x.saving = ptr(deref(x.saving) + v)
		}
		for _, e := range f.Evidence {
			x.evidence = append(x.evidence, e.Metric)
		}
		for _, p := range f.Partial {
			if p.Baseline {
				// a rank of the document's own --baseline (a budget),
				// not of either side here; saving_uncertain still says it
				continue
			}
			x.partial = append(x.partial, diff.PartialRef{Side: side, Rank: p.Rank})
		}
		x.uncertain = x.uncertain || f.SavingUncertain
	}
	return out, order
}

// measurer measures a finding's effect: the decrease of the metrics its
// rule estimates, the after side scaled to the before side's step count.
type measurer struct {
	r             *diff.Result
	before, after *results.Document
	bp, ap        *partialIndex
	bm, am        map[string]float64
	scale         float64
	normalized    bool
}

// measure sets f's measured saving from metrics, or says why it cannot.
func (m *measurer) measure(f *diff.FindingDelta, metrics []string) {
	f.MeasuredMetric = strings.Join(metrics, " + ")
	var bv, av float64
	for _, k := range metrics {
		f.MeasuredPartial = diff.JoinRefs(f.MeasuredPartial, m.bp.mean(m.before, k), m.ap.mean(m.after, k))
	}
	for _, k := range metrics {
		x, ok := m.bm[k]
		if !ok {
			f.MeasuredMissing = k + " is not measured before"
			return
		}
		y, ok := m.am[k]
		if !ok {
			f.MeasuredMissing = k + " is not measured after"
			return
		}
		bv += x
		av += y
	}
	f.MeasuredUs = ptr(bv - av*m.scale)
	if !m.normalized && m.r.Before.Steps != m.r.After.Steps {
		f.MeasuredMissing = "step counts unknown: measured over the whole captures, not normalized per step"
	}
	if f.PredictedUs != nil && *f.PredictedUs != 0 {
		f.Ratio = ptr(*f.MeasuredUs / *f.PredictedUs)
	}
}

func compareServing(r *diff.Result, before, after *results.Document) {
	if before.Serving == nil && after.Serving == nil {
		return
	}
	var b, a map[string]float64
	var bMiss, aMiss map[string]string
	if before.Serving != nil {
		b, bMiss = before.Serving.Metrics, before.Serving.Unavailable
	} else {
		bMiss = map[string]string{"serving.*": "no vLLM log or bench result before"}
	}
	if after.Serving != nil {
		a, aMiss = after.Serving.Metrics, after.Serving.Unavailable
	} else {
		aMiss = map[string]string{"serving.*": "no vLLM log or bench result after"}
	}
	r.Serving = metricDeltas(b, a, bMiss, aMiss)
}

// compareService compares the two sides' service profiles (their
// service.* metrics; a side without one says so), nothing when neither
// has one.
func compareService(r *diff.Result, before, after *results.Document) {
	if before.Service == nil && after.Service == nil {
		return
	}
	var b, a map[string]float64
	var bMiss, aMiss map[string]string
	if s := before.Service; s != nil {
		b, bMiss = s.Metrics, s.Unavailable
	} else {
		bMiss = map[string]string{"service.*": "no service profile before"}
	}
	if s := after.Service; s != nil {
		a, aMiss = s.Metrics, s.Unavailable
	} else {
		aMiss = map[string]string{"service.*": "no service profile after"}
	}
	r.Service = metricDeltas(b, a, bMiss, aMiss)
}
