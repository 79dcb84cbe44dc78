package results

import (
	"github.com/npuprof/npuprof/analysis"
)

// rankView copies what the writers show of rr beyond the contract.
func rankView(rr *analysis.RankResult) RankView {
	v := RankView{Format: string(rr.Format), Metrics: rr.Metrics, Errors: rr.Errors, Env: rr.Env}
	for _, g := range rr.Groups {
		v.Groups = append(v.Groups, ParallelGroup{Comm: g.Comm, Name: g.Name, GlobalRanks: g.GlobalRanks})
	}
	for _, s := range analysis.StepsOf(rr) {
		v.Steps = append(v.Steps, StepNs{Step: s.Step, Window: s.Window, Computing: s.Computing, Communication: s.Communication,
			NotOverlapped: s.CommunicationNotOverlapped, Free: s.Free, CommUnavailable: s.CommUnavailable})
	}
	if h := analysis.HCCLOf(rr); h != nil {
		v.HCCL = &HCCLView{ByTypeGroup: make(map[string]Stat, len(h.ByTypeGroup)), UnknownGroup: stat(h.UnknownGroup),
			Types: h.Types, Groups: h.Groups}
		for k, s := range h.ByTypeGroup {
			v.HCCL.ByTypeGroup[k] = stat(*s)
		}
	}
	if m := analysis.MoEOf(rr); m != nil {
		v.MoE = &MoEView{Routing: stat(m.Routing), Cumsum: stat(m.Cumsum), CumsumAICPU: stat(m.CumsumAICPU), GMM: stat(m.GMM),
			Dispatch: stat(m.Dispatch), Combine: stat(m.Combine), PositionsCapped: m.PositionsCapped}
		for _, p := range m.Positions {
			v.MoE.Positions = append(v.MoE.Positions, MoEPosition{RoutingUs: p.RoutingUs, CumsumUs: p.CumsumUs})
		}
	}
	if e := analysis.EventWaitOf(rr); e != nil {
		v.EventWait = &EventWaitView{}
		for _, s := range e.Streams {
			v.EventWait.Streams = append(v.EventWait.Streams, StreamWait{Stream: s.Stream, Wait: stat(s.Wait), Span: s.Span, Compute: s.Compute})
		}
		for _, w := range e.Longest {
			v.EventWait.Longest = append(v.EventWait.Longest, Wait{Stream: w.Stream, Start: w.Start, Dur: w.Dur,
				NextName: w.NextName, NextDur: w.NextDur, HasNext: w.HasNext})
		}
	}
	if k := analysis.KernelsOf(rr); k != nil {
		v.Kernels = &KernelsView{}
		for _, s := range k.Top {
			v.Kernels.Top = append(v.Kernels.Top, KernelStat{Name: s.Name, OpType: s.OpType, Core: s.Core, Count: s.Count,
				Total: s.Total, Mean: s.Mean, P50: s.P50, P99: s.P99})
		}
	}
	if t := analysis.TimelineOf(rr); t != nil {
		v.Timeline = &TimelineView{WindowStart: t.WindowStart, HaveWindow: t.HaveWindow}
	}
	if s := analysis.TimelineSampleOf(rr); s != nil {
		v.Sample = &TimelineSample{Median: sampleWindow(s.Median), Middle: sampleWindow(s.Middle), Capture: sampleWindow(s.Capture)}
	}
	return v
}

func stat(s analysis.Stat) Stat { return Stat{Count: s.Count, Total: s.Total} }

func sampleWindow(w *analysis.SampleWindow) *SampleWindow {
	if w == nil {
		return nil
	}
	out := &SampleWindow{Step: w.Step, Start: w.Start, End: w.End, Sliced: w.Sliced, Names: w.Names, Tasks: w.Tasks,
		Lanes: make([]SampleLane, len(w.Lanes)), Boxes: make([]SampleBox, len(w.Boxes))}
	for i, l := range w.Lanes {
		out.Lanes[i] = SampleLane{HCCL: l.HCCL, Stream: l.Stream, Group: l.Group}
	}
	for i, b := range w.Boxes {
		out.Boxes[i] = SampleBox{Lane: b.Lane, Kind: uint8(b.Kind), Start: b.Start, End: b.End, Name: b.Name, Count: b.Count}
	}
	return out
}

// clusterView copies what the writers show of c beyond the contract.
func clusterView(c *analysis.ClusterResult) ClusterView {
	v := ClusterView{Metrics: c.Metrics, Errors: c.Errors}
	if s := analysis.SkewOf(c); s != nil {
		v.Skew = &SkewView{}
		for _, st := range s.Window {
			v.Skew.Window = append(v.Skew.Window, skewDoc(st))
		}
		for _, sr := range s.Slow {
			v.Skew.Slow = append(v.Skew.Slow, SlowRank{Rank: sr.Rank, Step: sr.Step, Reason: sr.Reason})
		}
	}
	if a := analysis.ArrivalOf(c); a != nil {
		v.Arrival = &ArrivalView{Matched: a.Matched}
		for _, r := range a.ByRank {
			v.Arrival.Wait += r.Wait
		}
		for _, g := range a.Groups {
			ga := GroupArrival{Comm: g.Comm, Group: g.Group, Ranks: g.Ranks, Collectives: g.Collectives, LastRank: g.LastRank}
			if r := g.ByRank[g.LastRank]; g.LastRank >= 0 && r != nil {
				ga.LastCount = r.Last
			}
			v.Arrival.Groups = append(v.Arrival.Groups, ga)
		}
	}
	if x := analysis.ExpertsOf(c); x != nil {
		v.Experts = expertsView(x)
	}
	return v
}

func expertsView(x *analysis.ExpertsResult) *ExpertsView {
	v := &ExpertsView{PlanCommand: x.PlanCommand}
	if l := x.Loads; l != nil {
		v.Loads = &ExpertLoadsView{Source: l.Source, Format: l.Format, Stage: l.Stage, NumExperts: l.NumExperts,
			Observed: l.Observed, Notes: l.Notes}
		for _, layer := range l.Layers {
			v.Loads.Layers = append(v.Loads.Layers, ExpertLayerLoad{ID: layer.ID, Tokens: layer.Tokens})
		}
	}
	for _, h := range x.Hot {
		v.Hot = append(v.Hot, HotExpertDoc{Layer: h.Layer, Expert: h.Expert, Tokens: h.Tokens, Share: h.Share, MaxOverMean: h.MaxOverMean})
	}
	for _, r := range x.DumpRanks {
		v.DumpRanks = append(v.DumpRanks, RankTokensDoc{Rank: r.Rank, Tokens: r.Tokens})
	}
	if p := x.EPLB; p != nil {
		v.EPLB = &EPLBView{Ranks: p.Ranks, Redundant: p.Redundant, Before: RatioSummary{Max: p.Before.Max, Mean: p.Before.Mean},
			After: RatioSummary{Max: p.After.Max, Mean: p.After.Mean}}
	}
	if ep := x.EP; ep != nil {
		v.EP = &EPSkewView{Worst: ep.Worst}
		for _, r := range ep.Ranks {
			v.EP.Ranks = append(v.EP.Ranks, EPRankLoad{Rank: r.Rank, Group: r.Group, GMM: stat(r.GMM), Tokens: r.Tokens,
				HaveTokens: r.HaveTokens, Hot: r.Hot})
		}
		for _, g := range ep.Groups {
			v.EP.Groups = append(v.EP.Groups, EPGroupSkew{Ranks: g.Ranks, MaxOverMean: g.MaxOverMean, MaxRank: g.MaxRank})
		}
	}
	return v
}
