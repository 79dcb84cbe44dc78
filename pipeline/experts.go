package pipeline

import (
	"fmt"
	"io"

	"github.com/npuprof/npuprof/internal/errkind"
	"github.com/npuprof/npuprof/parser"
	"github.com/npuprof/npuprof/parser/expertload"
	"github.com/npuprof/npuprof/parser/model"
	"github.com/npuprof/npuprof/parser/parquetio"
)

// exportExperts is the expert-load input of a Parquet export analyzed
// without --experts: the loads it carries (found in the profile folder it
// was exported from), and the note that says what was read or why not.
// Other profiles have none here (their folder was searched already).
func exportExperts(srcs []parser.Source, stage string) (*model.ExpertLoads, string, error) {
	if len(srcs) == 0 || srcs[0].Parquet == "" {
		return nil, "", nil
	}
	x, note, err := parquetio.Experts(srcs[0].Parquet)
	if err != nil {
		return nil, "", err
	}
	if x != nil && stage != "" && x.Stage != stage {
		return nil, fmt.Sprintf("the export carries the %s expert loads of %s, not --stage %s: give --experts PATH", x.Stage, x.Source, stage), nil
	}
	return x, note, nil
}

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
