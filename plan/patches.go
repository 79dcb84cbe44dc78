package plan

import (
	"github.com/npuprof/npuprof/codepatch"
	"github.com/npuprof/npuprof/rules"
)

// AddPatches turns the findings' code changes into diffs of the source
// tree dir (--source; only read): each finding gets its patches, or the
// reason one could not be made (its fix text stands), and the plan's code
// patches are those of its steps, in order.
func AddPatches(rep *rules.Report, dir string) {
	for i := range rep.Findings {
		f := &rep.Findings[i]
		for _, ps := range f.Patches {
			cp, err := codepatch.Make(dir, ps)
			if err != nil {
				f.CodePatchError = "--source: " + err.Error() + "; apply the fix by hand as its text says"
				f.CodePatches = nil
				break
			}
			f.CodePatches = append(f.CodePatches, cp)
		}
	}
	if rep.Plan == nil {
		return
	}
	for _, st := range rep.Plan.Steps {
		for _, f := range rep.Findings {
			if f.Rule == st.Rule {
				rep.Plan.CodePatches = append(rep.Plan.CodePatches, f.CodePatches...)
			}
		}
	}
}
