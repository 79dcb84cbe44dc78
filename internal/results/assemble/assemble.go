// Package assemble assembles the results document (package results) from a
// run: the analysis results, the rule evaluation and the facts it saw, and
// the detail the terminal summary and the HTML report show beyond the JSON
// contract.
// It is the one place the document meets the analysis and the rules:
// package results holds the contract alone.
package assemble

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/npuprof/npuprof/internal/analysis"
	"github.com/npuprof/npuprof/internal/buildinfo"
	"github.com/npuprof/npuprof/internal/lang"
	"github.com/npuprof/npuprof/internal/parser/model"
	"github.com/npuprof/npuprof/internal/results"
	"github.com/npuprof/npuprof/internal/rules"
)

// New is the results document of a run: the analysis results, and when
// rules ran, their report (findings, outcomes, deploy diff, warnings) and
// the facts they saw, with the detail (AddDetail).
func New(res *analysis.Result, rep *rules.Report, facts *rules.FactSet) *results.Document {
	doc := NewContract(res, rep, facts)
	AddDetail(doc, res)
	return doc
}

// NewContract is New without the ranks' and the cluster's detail: what the
// JSON, JUnit, SARIF and the comparison read. The driver builds it once, and adds
// the detail (AddDetail) only for the outputs that read it: the detail copies
// every rank's pass results (11.5 MiB at 2048 small ranks).
func NewContract(res *analysis.Result, rep *rules.Report, facts *rules.FactSet) *results.Document {
	doc := contract(res, nil)
	AddRules(doc, rep, facts)
	return doc
}

// AddDetail adds to doc, built from res by NewContract, what the terminal
// summary and the HTML report show beyond the contract (results.Detail).
func AddDetail(doc *results.Document, res *analysis.Result) { addDetail(doc, res, false) }

// AddDetailReleasing is AddDetail for a caller that reads no rank's pass
// results afterwards: each rank's are dropped once its detail is copied, so
// the detail of every rank and the pass results of every rank are not both
// live (the peak of a report of many ranks).
func AddDetailReleasing(doc *results.Document, res *analysis.Result) { addDetail(doc, res, true) }

func addDetail(doc *results.Document, res *analysis.Result, release bool) {
	doc.Detail.Built, doc.Detail.InputErrors = true, passErrors(res.InputErrors)
	for i, rr := range res.Ranks {
		doc.Ranks[i].Detail = rankDetail(rr)
		if release {
			rr.ReleasePassResults()
		}
	}
	if doc.Cluster != nil && res.Cluster != nil {
		doc.Cluster.Detail = clusterDetail(res.Cluster)
	}
	if doc.Service != nil {
		doc.Service.Detail = serviceDetail(res.Cluster)
	}
}

// AddRules records a rule evaluation in the document: findings (sorted by
// saving), every rule's outcome, the facts and the combined deploy diff.
func AddRules(doc *results.Document, rep *rules.Report, facts *rules.FactSet) {
	if rep != nil {
		doc.Lang = lang.Or(rep.Lang)
		doc.Findings = rep.Contract()
		doc.Rules = rep.Outcomes
		doc.DeployDiff = rep.Diff
		doc.Plan = rep.Plan
		doc.Warnings = rep.Warnings
		doc.Detail.Evaluated = true
	}
	if facts != nil {
		doc.Context.Conflicts = facts.Conflicts()
		doc.Facts = facts.List()
	}
}

// passErrors are the failed passes as the document lists them.
func passErrors(es []analysis.PassError) []results.PassErrorDoc {
	if es == nil {
		return nil
	}
	out := make([]results.PassErrorDoc, len(es))
	for i, e := range es {
		out[i] = results.PassErrorDoc(e)
	}
	return out
}

func us(ns int64) float64 { return float64(ns) / 1000 }

// usPtr is us(ns) for an optional field.
func usPtr(ns int64) *float64 {
	v := us(ns)
	return &v
}

// Doc assembles the document from the analysis results and findings
// (nil: none), with the detail. New adds the rules' report and facts too.
func Doc(res *analysis.Result, findings []results.Finding) *results.Document {
	doc := contract(res, findings)
	AddDetail(doc, res)
	return doc
}

// contract is Doc without the detail.
func contract(res *analysis.Result, findings []results.Finding) *results.Document {
	t := buildinfo.Get()
	doc := &results.Document{Schema: results.Schema, Tool: &t, Lang: lang.EN, Input: results.Input{Path: res.Path, Ranks: []int{}, Formats: map[string]string{},
		WorldSize: res.WorldSize, WorldSizeFrom: res.WorldSizeFrom, MissingRanks: res.MissingRanks},
		Ranks: []results.RankDoc{}, Findings: []results.Finding{}, Notes: res.Notes}
	kinds := map[string]bool{}
	doc.Errors = append(doc.Errors, passErrors(res.InputErrors)...)
	for _, rr := range res.Ranks {
		doc.Input.Ranks = append(doc.Input.Ranks, rr.Rank)
		doc.Input.Formats[fmt.Sprint(rr.Rank)] = string(rr.Format)
		kinds[string(rr.Format)] = true
		rd := results.RankDoc{Rank: rr.Rank, Path: rr.Path, ProfilerLevel: rr.ProfilerLevel, TorchNPU: rr.TorchNPU, CANN: rr.CANN,
			Metrics: clean(rr.Metrics), Unavailable: rr.Unavailable, Sources: rr.Sources, Steps: []results.StepDoc{},
			Partial: rr.Partial, PartialReason: rr.PartialReason, PartialMetrics: rr.PartialMetrics, Warnings: rr.Warnings}
		if rr.Device >= 0 {
			d := rr.Device
			rd.Device = &d
		}
		if o := rr.Origin; o.Export != "" {
			rd.Path = o.Export
			rd.ExportedFrom = &results.ExportedFromDoc{Path: o.Path, AbsPath: o.AbsPath, Host: o.Host}
		}
		if rd.Unavailable == nil {
			rd.Unavailable = map[string]string{}
		}
		if kr := analysis.KernelsOf(rr); kr != nil {
			rd.Kernels = make([]results.KernelDoc, 0, len(kr.Top))
			for _, k := range kr.Top {
				rd.Kernels = append(rd.Kernels, results.KernelDoc{Name: k.Name, OpType: k.OpType, Core: k.Core, Count: k.Count,
					TotalUs: us(k.Total), MeanUs: k.Mean, P50Us: k.P50, P99Us: k.P99})
			}
		}
		if analysis.HCCLOf(rr) != nil {
			for key, st := range analysis.HCCLOf(rr).ByTypeGroup {
				t, g, _ := strings.Cut(key, "@")
				rd.Collectives = append(rd.Collectives, results.CollectiveTypeDoc{Type: t, Group: g, Count: st.Count, TimeUs: us(st.Total)})
			}
			sort.Slice(rd.Collectives, func(i, j int) bool {
				a, b := rd.Collectives[i], rd.Collectives[j]
				if a.Type != b.Type {
					return a.Type < b.Type
				}
				return a.Group < b.Group
			})
		}
		rd.Awaited = awaitedDocs(rr)
		for _, s := range analysis.StepsOf(rr) {
			sd := results.StepDoc{Step: s.Step, WindowUs: us(s.Window), ComputingUs: us(s.Computing)}
			if p, ok := s.PreparingNs(); ok {
				sd.PreparingUs = usPtr(p)
			}
			if s.Tasks >= 0 {
				n := s.Tasks
				sd.Tasks = &n
			}
			if analysis.WorkloadOf(rr) != nil {
				sd.Phase = analysis.WorkloadOf(rr).StepPhase[s.Step]
			}
			if s.HaveComm() {
				sd.CommunicationUs, sd.CommunicationNotOverlappedUs = usPtr(s.Communication), usPtr(s.CommunicationNotOverlapped)
				sd.FreeUs = usPtr(s.Free)
				if s.OverlappedUnavailable == "" {
					sd.OverlappedUs = usPtr(s.Overlapped)
				}
			}
			rd.Steps = append(rd.Steps, sd)
		}
		doc.Ranks = append(doc.Ranks, rd)
		doc.Errors = append(doc.Errors, passErrors(rr.Errors)...)
	}
	var ks []string
	for k := range kinds {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	switch len(ks) {
	case 0:
		doc.Input.Kind = "unknown"
	case 1:
		doc.Input.Kind = ks[0]
	default:
		doc.Input.Kind = "mixed"
	}
	if findings != nil {
		doc.Findings = findings
	}
	w := analysis.Workload(res)
	doc.Context = results.ContextDoc{Workload: w.Kind, Evidence: w.Evidence}
	doc.Cluster = buildCluster(res.Cluster)
	doc.Experts = Experts(res)
	if res.Cluster != nil {
		doc.Errors = append(doc.Errors, passErrors(res.Cluster.Errors)...)
	}
	doc.Serving = res.Serving
	doc.Service = serviceDoc(doc, res)
	return doc
}

func buildCluster(c *analysis.ClusterResult) *results.ClusterDoc {
	if c == nil {
		return nil
	}
	d := &results.ClusterDoc{Ranks: c.Ranks, Metrics: clean(c.Metrics), Unavailable: c.Unavailable, RanksUsed: c.RanksUsed, SlowRanks: []results.SlowRankDoc{},
		Groups: []results.GroupDoc{}, Worst: []results.CollectiveDoc{}, Steps: []results.StepSkewDoc{}}
	if d.Unavailable == nil {
		d.Unavailable = map[string]string{}
	}
	d.Engines = engineDocs(c)
	if s := analysis.SkewOf(c); s != nil {
		d.StageImbalance = s.Imbalance
		for _, st := range s.Stages {
			sd := results.StageDoc{Stage: st.Stage, Ranks: st.Ranks, ComputingUs: st.ComputingUs}
			if st.HaveP2P {
				sd.P2PUs = &st.P2PUs
			}
			d.Stages = append(d.Stages, sd)
		}
	}
	if s := analysis.SkewOf(c); s != nil {
		for _, sr := range s.Slow {
			x := results.SlowRankDoc{Rank: sr.Rank, Quantity: sr.Quantity, Value: sr.Value, Median: sr.Median, Reason: sr.Reason}
			if !math.IsInf(sr.Z, 0) && !math.IsNaN(sr.Z) {
				x.Z = sr.Z
			}
			if sr.Step >= 0 {
				st := sr.Step
				x.Step = &st
			}
			d.SlowRanks = append(d.SlowRanks, x)
		}
		ids := make([]int, 0, len(s.Steps))
		for id := range s.Steps {
			ids = append(ids, id)
		}
		sort.Ints(ids)
		for _, id := range ids {
			sd := results.StepSkewDoc{Step: id}
			for _, st := range s.Steps[id] {
				sd.Skew = append(sd.Skew, skewDoc(st))
			}
			d.Steps = append(d.Steps, sd)
		}
	}
	if a := analysis.ArrivalOf(c); a != nil {
		for _, g := range a.Groups {
			gd := results.GroupDoc{Comm: g.Comm, Group: g.Group, Ranks: g.Ranks, Collectives: g.Collectives, LastCount: map[string]int{}, WaitUs: map[string]float64{}}
			if g.LastRank >= 0 {
				lr := g.LastRank
				gd.LastRank = &lr
			}
			for r, ra := range g.ByRank {
				gd.LastCount[fmt.Sprint(r)] = ra.Last
				gd.WaitUs[fmt.Sprint(r)] = us(ra.Wait)
			}
			d.Groups = append(d.Groups, gd)
		}
		for _, w := range a.Worst {
			d.Worst = append(d.Worst, results.CollectiveDoc{Comm: w.Comm, Group: w.Group, Type: w.Type, Index: w.Index, LastRank: w.LastRank,
				MaxWaitUs: us(w.MaxWait), TotalWaitUs: us(w.TotalWait)})
		}
	}
	return d
}

func skewDoc(st analysis.SkewStat) results.SkewStatDoc {
	x := results.SkewStatDoc{Quantity: st.Quantity, Ranks: st.Ranks, MedianUs: st.Median, MADUs: st.MAD, MaxUs: st.Max, MaxRank: st.MaxRank}
	if st.Median > 0 {
		x.MaxOverMedian = st.Max / st.Median
	}
	return x
}

// clean drops NaN/Inf values, which JSON cannot carry.
func clean(m map[string]float64) map[string]float64 {
	finite := true
	for _, v := range m {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			finite = false
			break
		}
	}
	if finite {
		// shared, not copied: a copy per rank was another 10 KiB a rank
		// (the document never changes it)
		return m
	}
	out := make(map[string]float64, len(m))
	for k, v := range m {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			continue
		}
		out[k] = v
	}
	return out
}

// awaitedDocs is the rank's waitpair result, keyed
// event_wait.stream.<id>.awaited; nil without one.
func awaitedDocs(rr *analysis.RankResult) map[string][]results.AwaitedDoc {
	wp := analysis.WaitPairsOf(rr)
	if wp == nil || len(wp.Streams) == 0 {
		return nil
	}
	out := map[string][]results.AwaitedDoc{}
	for st, l := range wp.Streams {
		k := "event_wait.stream." + fmt.Sprint(st) + ".awaited"
		for _, a := range l {
			out[k] = append(out[k], results.AwaitedDoc{Kind: a.Kind, Name: a.Name, Stream: a.Stream, Count: a.Wait.Count, WaitUs: us(a.Wait.Total)})
		}
	}
	return out
}

func fptr(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
}

// Experts builds the "experts" object from the results.
func Experts(res *analysis.Result) *results.ExpertsDoc {
	d := &results.ExpertsDoc{Layers: []results.ExpertLayerDoc{},
		HotExperts: []results.HotExpertDoc{}, DumpRanks: []results.RankTokensDoc{}, EPGroups: []results.EPGroupDoc{}, EPRanks: []results.EPRankDoc{},
		LogLayers: []results.LogLayerDoc{}, Logs: []model.ExpertLog{}}
	var x *analysis.ExpertsResult
	if res != nil && res.Cluster != nil {
		x = analysis.ExpertsOf(res.Cluster)
	}
	if x == nil {
		return d
	}
	if l := x.Loads; l != nil {
		src := &results.ExpertSourceDoc{Path: l.Source, Format: l.Format, Stage: l.Stage, Files: l.Files, Experts: l.NumExperts, Ranks: l.RankIDs}
		if src.Files == nil {
			src.Files = []string{}
		}
		for e := 0; e < l.NumExperts; e++ {
			if !l.IsObserved(e) {
				src.Unobserved = append(src.Unobserved, e)
			}
		}
		d.Source = src
		d.Notes = l.Notes
		if l.Logs != nil {
			d.Logs = l.Logs
		}
		for i, st := range x.Layers {
			ld := results.ExpertLayerDoc{Layer: st.Layer, Tokens: st.Tokens, ExpertTokens: l.Layers[i].Tokens, RankTokens: l.Layers[i].RankTokens}
			if st.HasLoad {
				e, t := st.MaxExpert, st.MaxTokens
				ld.MaxExpert, ld.MaxTokens, ld.MaxOverMean = &e, &t, fptr(st.MaxOverMean)
			}
			if st.HasRank {
				ld.RankMaxOverMean = fptr(st.RankMaxOverMean)
			}
			if p := x.EPLB; p != nil {
				ld.EPLBBefore, ld.EPLBAfter = fptr(p.Before.PerLayer[i]), fptr(p.After.PerLayer[i])
			}
			d.Layers = append(d.Layers, ld)
		}
	}
	for _, h := range x.Hot {
		d.HotExperts = append(d.HotExperts, results.HotExpertDoc{Layer: h.Layer, Expert: h.Expert, Tokens: h.Tokens, Share: h.Share, MaxOverMean: h.MaxOverMean})
	}
	for _, r := range x.DumpRanks {
		d.DumpRanks = append(d.DumpRanks, results.RankTokensDoc{Rank: r.Rank, Tokens: r.Tokens})
	}
	if ep := x.EP; ep != nil {
		for _, g := range ep.Groups {
			gd := results.EPGroupDoc{GlobalRanks: g.GlobalRanks, Ranks: g.Ranks, MaxOverMean: g.MaxOverMean, MaxRank: g.MaxRank,
				LostBy: g.LostBy, LostWhy: g.LostWhy}
			if g.HaveTokens {
				gd.TokensMaxOverMean = fptr(g.TokensMaxOverMean)
			}
			if g.LostBy != "" {
				gd.LostTimeUs = fptr(g.LostNs / 1000)
			}
			d.EPGroups = append(d.EPGroups, gd)
		}
		for _, r := range ep.Ranks {
			rd := results.EPRankDoc{Rank: r.Rank, Group: r.Group, GMMTimeUs: us(r.GMM.Total), GMMCount: r.GMM.Count, Hot: r.Hot}
			if r.HaveTokens {
				t := r.Tokens
				rd.Tokens = &t
			}
			d.EPRanks = append(d.EPRanks, rd)
		}
	}
	if p := x.EPLB; p != nil {
		d.EPLB = &results.EPLBDoc{Ranks: p.Ranks, Redundant: p.Redundant, SlotsPerRank: p.Slots, BeforeFrom: p.BeforeFrom,
			Before: results.RatioSummary{Max: p.Before.Max, Mean: p.Before.Mean}, After: results.RatioSummary{Max: p.After.Max, Mean: p.After.Mean},
			Command: x.PlanCommand}
	}
	layers := make([]int, 0, len(x.LogLayers))
	for l := range x.LogLayers {
		layers = append(layers, l)
	}
	sort.Ints(layers)
	for _, l := range layers {
		d.LogLayers = append(d.LogLayers, results.LogLayerDoc{Layer: l, PAR: x.LogLayers[l]})
	}
	return d
}

// AddRuleSet records the rules and budgets that were evaluated
// (View.RuleSet).
func AddRuleSet(doc *results.Document, set *rules.Set) {
	if set == nil {
		return
	}
	doc.Detail.RuleSet = []results.RuleInfo{}
	for _, r := range set.Rules {
		info := results.RuleInfo{ID: r.ID, Severity: r.Severity, Summary: r.SummaryIn(doc.Lang), Why: r.WhyIn(doc.Lang), Disabled: set.Disabled(r.ID)}
		if fix := r.FixIn(doc.Lang); fix != nil {
			info.Fix = fix.Source
		}
		doc.Detail.RuleSet = append(doc.Detail.RuleSet, info)
	}
	for _, b := range set.Budgets {
		doc.Detail.RuleSet = append(doc.Detail.RuleSet, results.RuleInfo{ID: b.ID, Severity: b.Severity, Budget: b.Text, Disabled: set.Disabled(b.ID)})
	}
}

// each is f of every element of in, allocated at its length (nil for
// none): the detail of many ranks keeps no slack grown by append.
func each[S, T any](in []S, f func(S) T) []T {
	if len(in) == 0 {
		return nil
	}
	out := make([]T, len(in))
	for i, s := range in {
		out[i] = f(s)
	}
	return out
}

// rankDetail copies what the writers show of rr beyond the contract.
func rankDetail(rr *analysis.RankResult) results.RankDetail {
	v := results.RankDetail{Format: string(rr.Format), Errors: passErrors(rr.Errors), Env: rr.Env}
	v.Groups = each(rr.Groups, func(g model.Group) results.ParallelGroup {
		return results.ParallelGroup{Comm: g.Comm, Name: g.Name, GlobalRanks: g.GlobalRanks}
	})
	v.Steps = each(analysis.StepsOf(rr), func(s analysis.StepBreakdown) results.StepNs {
		return results.StepNs{Step: s.Step, Window: s.Window, Computing: s.Computing, Communication: s.Communication,
			NotOverlapped: s.CommunicationNotOverlapped, Free: s.Free, CommUnavailable: s.CommUnavailable}
	})
	if h := analysis.HCCLOf(rr); h != nil {
		v.HCCL = &results.HCCLDetail{ByTypeGroup: make(map[string]results.Stat, len(h.ByTypeGroup)), UnknownGroup: stat(h.UnknownGroup),
			Types: h.Types, Groups: h.Groups}
		for k, s := range h.ByTypeGroup {
			v.HCCL.ByTypeGroup[k] = stat(*s)
		}
	}
	if m := analysis.MoEOf(rr); m != nil {
		v.MoE = &results.MoEDetail{Routing: stat(m.Routing), Cumsum: stat(m.Cumsum), CumsumAICPU: stat(m.CumsumAICPU), GMM: stat(m.GMM),
			Dispatch: stat(m.Dispatch), Combine: stat(m.Combine), PositionsCapped: m.PositionsCapped}
		v.MoE.Positions = each(m.Positions, func(p analysis.MoEPosition) results.MoEPosition {
			return results.MoEPosition{RoutingUs: p.RoutingUs, CumsumUs: p.CumsumUs}
		})
	}
	if e := analysis.EventWaitOf(rr); e != nil {
		v.EventWait = &results.EventWaitDetail{
			Streams: each(e.Streams, func(s analysis.StreamWait) results.StreamWait {
				return results.StreamWait{Stream: s.Stream, Wait: stat(s.Wait), Span: s.Span, Compute: s.Compute}
			}),
			Longest: each(e.Longest, func(w analysis.Wait) results.Wait {
				return results.Wait{Stream: w.Stream, Start: w.Start, Dur: w.Dur, NextName: w.NextName, NextDur: w.NextDur, HasNext: w.HasNext}
			}),
		}
	}
	if k := analysis.KernelsOf(rr); k != nil {
		v.Kernels = &results.KernelsDetail{Top: each(k.Top, func(s analysis.KernelStat) results.KernelStat {
			return results.KernelStat{Name: s.Name, OpType: s.OpType, Core: s.Core, Count: s.Count,
				Total: s.Total, Mean: s.Mean, P50: s.P50, P99: s.P99}
		})}
	}
	if t := analysis.TimelineOf(rr); t != nil {
		v.Timeline = &results.TimelineDetail{WindowStart: t.WindowStart, HaveWindow: t.HaveWindow}
	}
	if s := analysis.TimelineSampleOf(rr); s != nil {
		v.Sample = &results.TimelineSample{Median: sampleWindow(s.Median), Middle: sampleWindow(s.Middle), Capture: sampleWindow(s.Capture)}
	}
	return v
}

func stat(s analysis.Stat) results.Stat { return results.Stat{Count: s.Count, Total: s.Total} }

func sampleWindow(w *analysis.SampleWindow) *results.SampleWindow {
	if w == nil {
		return nil
	}
	out := &results.SampleWindow{Step: w.Step, Start: w.Start, End: w.End, Sliced: w.Sliced, Names: w.Names, Tasks: w.Tasks,
		Lanes: make([]results.SampleLane, len(w.Lanes)), Boxes: make([]results.SampleBox, len(w.Boxes))}
	for i, l := range w.Lanes {
		out.Lanes[i] = results.SampleLane{HCCL: l.HCCL, Stream: l.Stream, Group: l.Group}
	}
	for i, b := range w.Boxes {
		out.Boxes[i] = results.SampleBox{Lane: b.Lane, Kind: uint8(b.Kind), Start: b.Start, End: b.End, Name: b.Name, Count: b.Count}
		if b.Count > 1 && i < len(w.KindTime) {
			out.Boxes[i].KindTime = append([]int64(nil), w.KindTime[i][:]...)
		}
	}
	return out
}

// clusterDetail copies what the writers show of c beyond the contract.
func clusterDetail(c *analysis.ClusterResult) results.ClusterDetail {
	v := results.ClusterDetail{Errors: passErrors(c.Errors)}
	if s := analysis.SkewOf(c); s != nil {
		v.Skew = &results.SkewDetail{}
		for _, st := range s.Window {
			v.Skew.Window = append(v.Skew.Window, skewDoc(st))
		}
		for _, sr := range s.Slow {
			v.Skew.Slow = append(v.Skew.Slow, results.SlowRank{Rank: sr.Rank, Step: sr.Step, Reason: sr.Reason})
		}
	}
	if a := analysis.ArrivalOf(c); a != nil {
		v.Arrival = &results.ArrivalDetail{Matched: a.Matched}
		for _, r := range a.ByRank {
			v.Arrival.Wait += r.Wait
		}
		for _, g := range a.Groups {
			ga := results.GroupArrival{Comm: g.Comm, Group: g.Group, Ranks: g.Ranks, Collectives: g.Collectives, LastRank: g.LastRank}
			if r := g.ByRank[g.LastRank]; g.LastRank >= 0 && r != nil {
				ga.LastCount = r.Last
			}
			v.Arrival.Groups = append(v.Arrival.Groups, ga)
		}
	}
	if x := analysis.ExpertsOf(c); x != nil {
		v.Experts = expertsDetail(x)
	}
	if l := analysis.LedgerClusterOf(c); l != nil && len(l.Steps) > 0 {
		v.Ledger = &results.LedgerDetail{Causes: analysis.CauseNames[:]}
		svc := analysis.ServiceOf(c)
		for _, s := range l.Steps {
			d := results.LedgerStepDetail{Step: s.Step, Rank: s.Rank, Phase: s.Phase, TimeUs: float64(s.Ns()) / 1000, Us: make([]float64, analysis.NumCauses)}
			if cause, row, ok := svc.StepCause(s.ID); ok && s.ID >= 0 {
				r := int(row)
				d.ServiceCause, d.ServiceBatchRow = cause, &r
			}
			for c, ns := range s.Causes {
				d.Us[c] = float64(ns) / 1000
			}
			v.Ledger.Steps = append(v.Ledger.Steps, d)
		}
	}
	return v
}

func expertsDetail(x *analysis.ExpertsResult) *results.ExpertsDetail {
	v := &results.ExpertsDetail{PlanCommand: x.PlanCommand}
	if l := x.Loads; l != nil {
		v.Loads = &results.ExpertLoadsDetail{Source: l.Source, Format: l.Format, Stage: l.Stage, NumExperts: l.NumExperts,
			Observed: l.Observed, Notes: l.Notes}
		for _, layer := range l.Layers {
			v.Loads.Layers = append(v.Loads.Layers, results.ExpertLayerLoad{ID: layer.ID, Tokens: layer.Tokens})
		}
	}
	for _, h := range x.Hot {
		v.Hot = append(v.Hot, results.HotExpertDoc{Layer: h.Layer, Expert: h.Expert, Tokens: h.Tokens, Share: h.Share, MaxOverMean: h.MaxOverMean})
	}
	for _, r := range x.DumpRanks {
		v.DumpRanks = append(v.DumpRanks, results.RankTokensDoc{Rank: r.Rank, Tokens: r.Tokens})
	}
	if p := x.EPLB; p != nil {
		v.EPLB = &results.EPLBDetail{Ranks: p.Ranks, Redundant: p.Redundant, Before: results.RatioSummary{Max: p.Before.Max, Mean: p.Before.Mean},
			After: results.RatioSummary{Max: p.After.Max, Mean: p.After.Mean}}
	}
	if ep := x.EP; ep != nil {
		v.EP = &results.EPSkewDetail{Worst: ep.Worst}
		for _, r := range ep.Ranks {
			v.EP.Ranks = append(v.EP.Ranks, results.EPRankLoad{Rank: r.Rank, Group: r.Group, GMM: stat(r.GMM), Tokens: r.Tokens,
				HaveTokens: r.HaveTokens, Hot: r.Hot})
		}
		for _, g := range ep.Groups {
			v.EP.Groups = append(v.EP.Groups, results.EPGroupSkew{Ranks: g.Ranks, MaxOverMean: g.MaxOverMean, MaxRank: g.MaxRank})
		}
	}
	return v
}

// engineDocs are the engines pass's result ([] without one).
func engineDocs(c *analysis.ClusterResult) []results.EngineDoc {
	out := []results.EngineDoc{}
	e := analysis.EnginesOf(c)
	if e == nil {
		return out
	}
	for _, en := range e.Engines {
		d := results.EngineDoc{Ranks: en.Ranks, Busy: en.Busy}
		if en.DecodeBatch > 0 {
			b := en.DecodeBatch
			d.DecodeBatch = &b
		}
		if en.HaveStep {
			st := en.StepUs
			d.StepUs = &st
		}
		out = append(out, d)
	}
	return out
}
