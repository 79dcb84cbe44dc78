package pipeline

import (
	"io"

	"github.com/npuprof/npuprof/internal/errkind"
	"github.com/npuprof/npuprof/parser/expertload"
	"github.com/npuprof/npuprof/parser/model"
)

// LoadExperts reads the expert-load input at path (MindIE dumps, a
// layer,expert,tokens CSV or a vLLM-Ascend log; see parser/expertload) for
// `npuprof eplb plan`; stage picks decode or prefill dumps ("" prefers
// decode). An input it cannot use is a usage error naming --experts.
func LoadExperts(path, stage string) (*model.ExpertLoads, error) {
	x, err := expertload.Load(path, expertload.Options{Stage: stage})
	if err != nil {
		if errkind.Is(err, errkind.Input) {
			return nil, errkind.Errorf(errkind.Usage, "--experts %w", err)
		}
		return nil, err
	}
	return x, nil
}

// WriteDeployment writes d as vLLM-Ascend's expert map (its
// eplb_config.expert_map_path file).
func WriteDeployment(w io.Writer, d *model.Deployment) error { return expertload.WriteDeployment(w, d) }
