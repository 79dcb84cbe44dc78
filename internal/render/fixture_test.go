package render

import (
	"fmt"
	"testing"

	"github.com/npuprof/npuprof/internal/analysis"
	"github.com/npuprof/npuprof/internal/parser/model"
	"github.com/npuprof/npuprof/internal/results"
)

// Hostile text put into the synthetic profile wherever trace text can
// reach the report: op names, group names, env values, paths, findings.
const (
	hostileName = `<script>alert(1)</script>"'&` + "\xff\xfe" + `_Kernel`
	hostileEnv  = `</script><script>alert(2)</script>`
	hostilePath = `/profiles/<script>alert(3)</script>"q`
)

// synth describes a synthetic vLLM-Ascend-like MoE decode profile.
type synth struct {
	ranks, layers, steps int
	// noHCCL drops collectives from the last rank (to check "unavailable").
	noHCCL bool
}

// synthRank builds one rank's model: per step and layer, attention,
// gating, MoeInitRoutingCustom, an AI_CPU Cumsum, an EVENT_WAIT, a
// GroupedMatmul, a kernel with a hostile name, and alltoallv collectives
// in the ep group (allreduce in tp every 8 layers).
func synthRank(s synth, rank int) *model.Rank {
	r := model.NewRank(fmt.Sprintf("%s/rank%d_ascend_pt", hostilePath, rank))
	r.Rank, r.Device = rank, rank
	r.Format = model.FormatTorchNPUText
	r.ProfilerLevel = "Level1"
	r.TorchNPUVersion = "2.5.1"
	r.CANNVersion = "8.1.RC1"
	r.Have = model.Availability{Timeline: true, KernelDetails: true, HCCL: !(s.noHCCL && rank == s.ranks-1), Framework: true,
		TimelineFile: "trace_view.json", KernelFile: "kernel_details.csv"}
	all := make([]int, s.ranks)
	for i := range all {
		all[i] = i
	}
	ep := model.NewGroup("10.0.0.1%eth0_60000_0_1", "ep", rank, all)
	tp := model.NewGroup("10.0.0.1%eth0_60001_0_1", "tp", rank%2, []int{rank &^ 1, rank | 1})
	evil := model.NewGroup("10.0.0.1%eth0_60002_0_1", hostileName, 0, all)
	r.Groups = []model.Group{ep, tp, evil}
	r.Env = map[string]string{"VLLM_ASCEND_ENABLE_FLASHCOMM1": "1", "HCCL_BUFFSIZE": "512", "EVIL_VAR": hostileEnv, "ASCEND_LAUNCH_BLOCKING": ""}
	var t int64 = 1_700_000_000_000_000_000 + int64(rank)*3_000
	task := func(stream int32, name, opType, taskType string, dur int64) {
		r.Tasks = append(r.Tasks, r.NewTask(t, dur, model.TaskExtra{Name: r.Intern(name),
			Stream: stream, Class: model.ClassifyTask(taskType, name), OpType: r.Intern(opType), TaskType: r.Intern(taskType),
			InputShapes: r.Intern("25,4096;128,4096,3072"), ModelID: 4294967295}))
		t += dur + 2_000
	}
	hccl := func(name, typ, group string, dur int64) {
		r.HCCL = append(r.HCCL, model.HCCLOp{Start: t, Dur: dur, Name: r.Intern(name), Type: r.Intern(typ), Group: r.Intern(group), HashSuffix: r.Intern("586")})
	}
	for st := 0; st < s.steps; st++ {
		stepStart := t
		t += 50_000
		for l := 0; l < s.layers; l++ {
			task(2, "aclnnFusedInferAttentionScore_FIA_FusedInferAttentionScore", "FusedInferAttentionScore", "AI_CORE", 30_000+int64(l%7)*1_000)
			if r.Have.HCCL && l%8 == 0 {
				hccl("hcom_allReduce__586_0_1", "allreduce", "tp", 15_000)
				task(2, "EVENT_WAIT", "", "EVENT_WAIT_SQE", 16_000)
			}
			task(2, "aclnnMoeGatingTopK_MoeGatingTopK_MoeGatingTopK", "MoeGatingTopK", "AI_VECTOR_CORE", 5_000)
			task(2, "aclnnMoeInitRoutingCustom_MoeInitRoutingCustom_MoeInitRoutingCustom", "MoeInitRoutingCustom", "AI_VECTOR_CORE", 11_000+int64(rank)*300)
			task(2, "aclnnCumsum_CumsumAiCpu_Cumsum", "Cumsum", "AI_CPU", 28_000+int64(rank*l%5)*1_000)
			if r.Have.HCCL {
				hccl("hcom_allToAllV__586_1_1", "alltoallv", "ep", 22_000+int64(rank)*1_500)
				hccl("hcom_broadcast__999_0", "broadcast", "", 1_000)
			}
			task(2, "EVENT_WAIT", "", "EVENT_WAIT_SQE", 20_000+int64(rank)*1_500)
			task(2, "aclnnGroupedMatmulV4_GroupedMatmul_GroupedMatmul", "GroupedMatmul", "AI_CORE", 40_000+int64(rank)*2_500)
			task(2, hostileName, "Evil", "AI_CORE", 3_000)
			if l%10 == 0 {
				task(3, "MEMCPY_ASYNC", "", "MEMCPY_ASYNC", 4_000)
			}
		}
		if r.Have.HCCL {
			hccl("hcom_reduce__123_0", "reduce", hostileName, 2_000)
		}
		t += 30_000
		r.Steps = append(r.Steps, model.Step{ID: 100 + st, Start: stepStart, End: t})
		t += 10_000
	}
	r.SortTasks()
	return r
}

func synthResult(t testing.TB, s synth) *analysis.Result {
	t.Helper()
	res := &analysis.Result{Path: hostilePath, Notes: []string{"synthetic profile " + hostileName}}
	for i := 0; i < s.ranks; i++ {
		r := synthRank(s, i)
		if err := r.Validate(); err != nil {
			t.Fatal(err)
		}
		res.Ranks = append(res.Ranks, analysis.AnalyzeRank(r))
	}
	return res
}

func intp(i int) *int { return &i }

func synthFindings() []results.Finding {
	return []results.Finding{
		{Rule: "cumsum-aicpu", Severity: results.SeverityMedium, Title: "Cumsum runs on the AI CPU in the MoE routing path",
			Ranks: []int{0, 1}, SavingUs: results.Estimated(1234.5),
			Evidence: []results.Evidence{{Metric: "moe.cumsum.aicpu.time_us", Rank: intp(0), Value: 2600, Unit: "us"}, {Metric: "moe.cumsum.count", Value: 94, Note: "per step"}},
			Fix:      "cast expert_tokens to int32 before cumsum\n# keeps " + hostileEnv, Docs: "javascript:alert(4)"},
		{Rule: "hccl-not-overlapped", Severity: results.SeverityHigh, Title: "Collectives are not overlapped " + hostileName,
			SavingUs: results.Estimated(98765.4), Evidence: []results.Evidence{{Metric: "overlap.communication_not_overlapped.time_us", Value: 98765.4, Unit: "us"}},
			Fix:  "export VLLM_ASCEND_ENABLE_FLASHCOMM1=1",
			Diff: "--- a/serve.sh\n+++ b/serve.sh\n@@ -1,2 +1,2 @@\n-export VLLM_ASCEND_ENABLE_FLASHCOMM1=0\n+export VLLM_ASCEND_ENABLE_FLASHCOMM1=1\n vllm serve " + hostileName,
			Docs: "https://github.com/vllm-project/vllm-ascend"},
		{Rule: "info-only", Severity: "weird", Title: "An info finding", Fix: "nothing"},
	}
}

func synthExperts(layers, experts int) *ExpertLoads {
	e := &ExpertLoads{Source: "synthetic moe_load " + hostileName, Unit: "tokens"}
	for l := 0; l < layers; l++ {
		e.Layers = append(e.Layers, fmt.Sprintf("layer %d", l))
		row := make([]float64, experts)
		for x := range row {
			row[x] = float64((l*31+x*17)%97 + 3)
		}
		e.Load = append(e.Load, row)
	}
	for x := 0; x < experts; x++ {
		e.Experts = append(e.Experts, fmt.Sprintf("e%d", x))
	}
	return e
}
