package compare

import (
	"sort"
	"strings"

	"github.com/npuprof/npuprof/internal/results"
	"github.com/npuprof/npuprof/internal/results/diff"
	"github.com/npuprof/npuprof/internal/results/metric"
)

// partialIndex is, per rank of one document, the metrics computed from a
// file cut short (ranks[].partial_metrics).
type partialIndex struct {
	side    string
	metrics map[int]map[string]bool
	ranks   []int // ranks with partial metrics, sorted
}

func buildPartial(d *results.Document, side string) *partialIndex {
	pi := &partialIndex{side: side}
	pi.metrics, pi.ranks = metric.PartialSets(len(d.Ranks), func(i int) (int, []string) {
		return d.Ranks[i].Rank, d.Ranks[i].PartialMetrics
	})
	return pi
}

// partialRanksOf lists a document's partial ranks for its Side.
func partialRanksOf(d *results.Document) []diff.PartialRank {
	var out []diff.PartialRank
	for _, rk := range d.Ranks {
		if rk.Partial || len(rk.PartialMetrics) > 0 {
			out = append(out, diff.PartialRank{Rank: rk.Rank, Reason: rk.PartialReason, Metrics: len(rk.PartialMetrics)})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Rank < out[j].Rank })
	return out
}

func (pi *partialIndex) refs(ranks []int) []diff.PartialRef {
	out := make([]diff.PartialRef, 0, len(ranks))
	for _, r := range ranks {
		out = append(out, diff.PartialRef{Side: pi.side, Rank: r})
	}
	return out
}

// all is every partial rank of the side.
func (pi *partialIndex) all() []diff.PartialRef {
	if len(pi.ranks) == 0 {
		return nil
	}
	return pi.refs(pi.ranks)
}

// rank is rank's entry when its value of metric is partial.
func (pi *partialIndex) rank(rank int, metric string) []diff.PartialRef {
	if pi.metrics[rank][metric] {
		return []diff.PartialRef{{Side: pi.side, Rank: rank}}
	}
	return nil
}

// mean is the ranks whose value of metric went into the side's overall
// value (meanMetrics) from a cut file. A cross-rank metric (the
// document's cluster.metrics) is computed from every rank: partial when
// any rank is; so is its absence (cluster.unavailable), which a cut rank
// may cause (e.g. EP ranks that ran different numbers of layers).
func (pi *partialIndex) mean(d *results.Document, metric string) []diff.PartialRef {
	if len(pi.ranks) == 0 {
		return nil
	}
	if isCluster(d, metric) {
		return pi.all()
	}
	var ranks []int
	for _, r := range pi.ranks {
		if pi.metrics[r][metric] {
			ranks = append(ranks, r)
		}
	}
	if len(ranks) == 0 {
		return nil
	}
	return pi.refs(ranks)
}

// of is the ranks among ranks that are partial on this side.
func (pi *partialIndex) of(ranks map[int]bool) []diff.PartialRef {
	var out []int
	for _, r := range pi.ranks {
		if ranks[r] {
			out = append(out, r)
		}
	}
	if len(out) == 0 {
		return nil
	}
	return pi.refs(out)
}

// isCluster reports whether a document's cross-rank analysis measured
// metric, or said why it could not (its own entry or a family entry,
// "name.*").
func isCluster(d *results.Document, metric string) bool {
	if d.Cluster == nil {
		return false
	}
	if _, ok := d.Cluster.Metrics[metric]; ok {
		return true
	}
	if _, ok := d.Cluster.Unavailable[metric]; ok {
		return true
	}
	for pat := range d.Cluster.Unavailable {
		if p, ok := strings.CutSuffix(pat, "*"); ok && strings.HasPrefix(metric, p) {
			return true
		}
	}
	return false
}
