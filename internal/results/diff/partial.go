package diff

import (
	"fmt"
	"sort"
	"strings"
)

// Side names, as PartialRef.Side spells them.
// kept: the diff document's own declaration; alike the analysis contract's types in shape, not in logic
const (
	SideBefore = "before"
	SideAfter  = "after"
)

// PartialRank is one rank of a side whose trace_view.json or
// kernel_details.csv was cut short (the analysis document's ranks[].partial).
type PartialRank struct {
	Rank int `json:"rank"`
	// Reason is the rank's partial_reason: the file, where it was cut and
	// what was analyzed.
	Reason string `json:"reason"`
	// Metrics is how many of the rank's metrics were measured over only the
	// complete part of the file (its partial_metrics); 0 when the cut file
	// fed no metric (a kernel_details.csv cut short beside a whole trace).
	Metrics int `json:"partial_metrics"`
}

// PartialRef names one rank of one side whose value went into a compared
// quantity and was computed from a file cut short: that value covers only
// the complete part of the file, so a change in the quantity may come from
// the cut rather than from what changed between the runs. The reason is
// the side's partial[] entry for that rank.
type PartialRef struct {
	Side string `json:"side"` // before, after
	Rank int    `json:"rank"`
}

// JoinRefs is the lists together, before first, each side by rank,
// without repeats.
func JoinRefs(lists ...[]PartialRef) []PartialRef {
	seen := map[PartialRef]bool{}
	var out []PartialRef
	for _, l := range lists {
		for _, p := range l {
			if !seen[p] {
				seen[p] = true
				out = append(out, p)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Side != out[j].Side {
			return out[i].Side == SideBefore
		}
		return out[i].Rank < out[j].Rank
	})
	return out
}

// PartialTag is the short label of a quantity computed from files cut
// short: "before rank 3 and after rank 1, 2" ("" when refs is empty).
func PartialTag(refs []PartialRef) string {
	if len(refs) == 0 {
		return ""
	}
	var parts []string
	for _, side := range []string{SideBefore, SideAfter} {
		var ranks []string
		for _, p := range refs {
			if p.Side == side {
				ranks = append(ranks, fmt.Sprint(p.Rank))
			}
		}
		if len(ranks) > 0 {
			parts = append(parts, side+" rank "+strings.Join(ranks, ", "))
		}
	}
	return strings.Join(parts, " and ")
}

// FindingPartialTag labels a finding delta whose inputs were partial: the
// ranks the finding read, an uncertain predicted saving, the ranks its
// measured saving read and the ranks its status was judged on ("" when
// none).
func FindingPartialTag(f FindingDelta) string {
	var parts []string
	if len(f.Partial) > 0 {
		parts = append(parts, "finding read "+PartialTag(f.Partial))
	}
	if f.SavingUncertain {
		parts = append(parts, "predicted saving uncertain")
	}
	if len(f.MeasuredPartial) > 0 {
		parts = append(parts, "measured on "+PartialTag(f.MeasuredPartial))
	}
	if len(f.StatusPartial) > 0 {
		parts = append(parts, f.Status+" judged on "+PartialTag(f.StatusPartial))
	}
	return strings.Join(parts, "; ")
}

// HasPartial reports whether either side has a rank cut short.
func (r *Result) HasPartial() bool { return len(r.Before.Partial) > 0 || len(r.After.Partial) > 0 }

// PartialCaveats are the lines that head a diff when a side was measured
// on a file cut short: one per partial rank, "BEFORE rank 3 cut short:
// <reason>", then what the markers mean.
func (r *Result) PartialCaveats() []string { return r.PartialCaveatsFor("BEFORE", "AFTER") }

// PartialCaveatsFor is PartialCaveats with the sides named beforeName and
// afterName (check --baseline: "BEFORE (the baseline)").
func (r *Result) PartialCaveatsFor(beforeName, afterName string) []string {
	if !r.HasPartial() {
		return nil
	}
	var out []string
	for _, s := range []struct {
		name string
		side Side
	}{{beforeName, r.Before}, {afterName, r.After}} {
		for _, p := range s.side.Partial {
			why := p.Reason
			if why == "" {
				why = "partial input"
			}
			out = append(out, fmt.Sprintf("%s rank %d cut short: %s (%d metric(s) measured over only the complete part)", s.name, p.Rank, why, p.Metrics))
		}
	}
	out = append(out, "rows marked [partial: ...] read such a value: it covers only the complete part of the cut file, so the change shown may come from the cut rather than from the runs (a time total over a cut file is too small); compare them again on whole captures")
	return out
}
