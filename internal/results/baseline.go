package results

// Baseline is a saved analysis (--baseline OLD.json) reduced to what
// budgets read: each metric's mean over the ranks that measured it.
type Baseline struct {
	Path    string
	Metrics map[string]float64
	// PartialRanks names, per metric, the baseline's ranks whose value of
	// it was computed from a file cut short (a cross-rank metric: every
	// partial rank); PartialReason is each such rank's partial_reason. A
	// finding that reads such a value lists the rank in Finding.Partial
	// with PartialInput.Baseline set.
	PartialRanks  map[string][]int
	PartialReason map[int]string
}
