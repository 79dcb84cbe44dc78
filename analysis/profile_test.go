package analysis

import "github.com/npuprof/npuprof/parser"

// analyzeProfile is pipeline.FromProfile for this package's tests (which
// cannot import the pipeline: it imports analysis): every pass on every
// rank of a profile parser.Load read whole, then the cluster passes.
func analyzeProfile(p *parser.Profile) (*Result, error) {
	if err := Validate(Passes); err != nil {
		return nil, err
	}
	if err := Validate(ClusterPasses); err != nil {
		return nil, err
	}
	res := &Result{Path: p.Path, Notes: p.Notes, Ranks: RunRanks(p.Ranks, Passes)}
	for _, msg := range p.Internal {
		res.InputErrors = append(res.InputErrors, PassError{Pass: "parse", Rank: -1, Message: msg})
	}
	res.Cluster = RunCluster(res.Ranks, p.Experts)
	return res, nil
}
