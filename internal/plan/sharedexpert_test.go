package plan_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/npuprof/npuprof/internal/plan"
	"github.com/npuprof/npuprof/internal/tracegen"
)

// a3Script is the second field report's deployment with the shared-expert
// overlap on, as the A3 captures (tracegen a3-*) ran.
const a3Script = `#!/usr/bin/env bash
export HCCL_OP_EXPANSION_MODE=AIV
vllm serve /models/Qwen3-VL-235B-A22B-Instruct --tensor-parallel-size 4 --data-parallel-size 4 --enable-expert-parallel --additional-config '{"multistream_overlap_shared_expert":true}'
`

// No plan on the A3 system turns the shared-expert overlap off: the main
// stream waits for side-stream kernels there, and the upgrade's #5962
// needs the overlap on. Where event-wait-skew is not superseded by the
// upgrade, its edit conflicts with the upgrade's and the plan leaves it
// out, whatever it gains.
func TestA3PlanKeepsSharedExpertOverlap(t *testing.T) {
	for _, s := range tracegen.FieldReport2() {
		res := analyze(t, s)
		rep, _ := planFor(t, res, a3Script)
		require.NotNil(t, rep.Plan, s.Name)
		require.NotContains(t, rep.Plan.DeployDiff, `"multistream_overlap_shared_expert":false`, s.Name)
		if s.Name != "a3-tp4dp4-rc1" {
			continue
		}
		// rc1: event-wait-skew fires on the side-stream waits and would set
		// the overlap off; the upgrade keeps it on
		ews, up := -1, -1
		for i, f := range rep.Findings {
			switch f.Rule {
			case "event-wait-skew":
				ews = i
			case "vllm-ascend-upgrade":
				up = i
			}
		}
		require.GreaterOrEqual(t, ews, 0)
		require.GreaterOrEqual(t, up, 0)
		require.Contains(t, rep.Findings[ews].Diff, `"multistream_overlap_shared_expert":false`)
		require.Empty(t, rep.Findings[up].Diff, "keeping the overlap on changes nothing in the script")

		// without the supersession, the edit conflict decides
		rep.Findings[up].Supersedes = nil
		plan.Build(res, rep)
		var why string
		for _, lo := range rep.Plan.LeftOut {
			if lo.Rule == "event-wait-skew" {
				why = lo.Reason
			}
		}
		require.Equal(t, `it turns --additional-config key "multistream_overlap_shared_expert" off, which vllm-ascend-upgrade's fix needs on`, why)
	}
}
