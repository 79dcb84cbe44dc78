package analysis

import (
	"github.com/npuprof/npuprof/internal/parser/model"
	"github.com/npuprof/npuprof/internal/pipeline/gather"
)

// analyzeProfile is what pipeline.Analyze makes of the ranks, for this
// package's tests (which cannot import the pipeline: it imports analysis)
// that keep the models: every pass on every rank gathered by
// gather.Models, then the cluster passes.
func analyzeProfile(p *gather.Set[*model.Rank]) (*Result, error) {
	if err := Validate(Passes); err != nil {
		return nil, err
	}
	if err := Validate(ClusterPasses); err != nil {
		return nil, err
	}
	notes := p.AllNotes()
	if p.ExpertsNote != "" {
		notes = append(notes, p.ExpertsNote)
	}
	res := &Result{Path: p.Path, Notes: notes, Ranks: RunRanks(p.Ranks, Passes)}
	for _, msg := range p.Internal {
		res.InputErrors = append(res.InputErrors, PassError{Pass: "parse", Rank: -1, Message: msg})
	}
	res.Cluster = RunCluster(res.Ranks, p.Experts)
	return res, nil
}
