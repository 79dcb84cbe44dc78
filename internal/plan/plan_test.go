package plan_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/npuprof/npuprof/internal/analysis"
	"github.com/npuprof/npuprof/internal/deploy"
	"github.com/npuprof/npuprof/internal/pipeline"
	"github.com/npuprof/npuprof/internal/plan"
	"github.com/npuprof/npuprof/internal/results"
	"github.com/npuprof/npuprof/internal/rules"
	"github.com/npuprof/npuprof/internal/tracegen"
	"github.com/stretchr/testify/require"
)

// fieldScript is the first field report's deployment as the tracegen
// reproduction runs it: EP + FLASHCOMM1, W8A8, --max-num-seqs 32 with the
// default capture sizes (25 requests replay the graph of 32).
const fieldScript = `#!/usr/bin/env bash
export HCCL_OP_EXPANSION_MODE=AIV
export VLLM_ASCEND_ENABLE_FLASHCOMM1=1

vllm serve /models/Qwen3-235B-A22B-W8A8 \
  --tensor-parallel-size 8 \
  --enable-expert-parallel \
  --max-num-seqs 32 \
  --quantization ascend
`

func analyze(t *testing.T, s tracegen.Scenario) *analysis.Result {
	t.Helper()
	dir := t.TempDir()
	_, err := tracegen.Generate(dir, s)
	require.NoError(t, err)
	res, err := pipeline.Analyze(context.Background(), dir, pipeline.Options{})
	require.NoError(t, err)
	return res
}

// planFor evaluates the built-in rules on res with the script and facts
// and builds the plan.
func planFor(t *testing.T, res *analysis.Result, script string, facts ...string) (*rules.Report, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "serve.sh")
	require.NoError(t, os.WriteFile(path, []byte(script), 0o644))
	sc, err := deploy.ReadFile(path)
	require.NoError(t, err)
	set, err := rules.Load()
	require.NoError(t, err)
	df, invalid := sc.FactsChecked()
	fs, err := rules.BuildFacts(res, rules.NewDeployment(path, df, invalid), facts)
	require.NoError(t, err)
	rep := rules.Evaluate(set, &rules.Input{Result: res, Facts: fs})
	require.Empty(t, rep.Failed())
	plan.Build(res, rep)
	rep.ApplyFixes(sc, nil)
	return rep, path
}

// measured is the mean decode step time over ranks (µs).
func measured(res *analysis.Result) float64 {
	var s float64
	for _, rr := range res.Ranks {
		s += rr.Metrics[analysis.MetricDecodeStepUs] / float64(len(res.Ranks))
	}
	return s
}

// On the tracegen reproduction of the first field report the plan holds
// the three fixes in the order of their (cumulative) predicted gains,
// capture size 25 after EP/FLASHCOMM1 off, no EPLB edit, a total within
// 25% of the change measured from the first capture to the last, and one
// diff that patch -p1 applies and bash -n accepts.
func TestFieldReportPlan(t *testing.T) {
	f := tracegen.FieldReport()
	first, last := analyze(t, f[0]), analyze(t, f[len(f)-1])
	rep, script := planFor(t, first, fieldScript, "concurrency=25")
	p := rep.Plan
	require.NotNil(t, p)
	var order []string
	for _, st := range p.Steps {
		order = append(order, st.Rule)
		t.Logf("%s: %.1f -> %.1f µs (%+.2f%%) requires %v: %s", st.Rule, st.StepTimeUs.Before, st.StepTimeUs.After, st.StepTimeChangePct, st.Requires, st.Basis)
	}
	t.Logf("left out: %+v", p.LeftOut)
	require.Equal(t, []string{"comm-ep-flashcomm", "moe-routing-cumsum", "graph-capture-sizes"}, order)
	for i := 1; i < len(p.Steps); i++ {
		require.LessOrEqual(t, p.Steps[i-1].StepTimeChangePct, p.Steps[i].StepTimeChangePct, "ordered by gain")
		require.Equal(t, p.Steps[i-1].StepTimeUs.After, p.Steps[i].StepTimeUs.Before, "cumulative")
	}
	require.Equal(t, []string{"comm-ep-flashcomm"}, p.Steps[2].Requires)
	require.NotContains(t, p.DeployDiff, "eplb")
	require.NotContains(t, p.DeployDiff, "DYNAMIC_EPLB")
	require.Equal(t, rep.Diff, p.DeployDiff)
	m0, m1 := measured(first), measured(last)
	want := (m1/m0 - 1) * 100
	t.Logf("plan %+.2f%%, measured %+.2f%%", p.StepTimeChangePct, want)
	require.InDelta(t, want, p.StepTimeChangePct, 0.25*-want)
	applies(t, script, p.DeployDiff)
	// graph-capture-sizes' own diff holds what it requires: FLASHCOMM1 off
	for _, fd := range rep.Findings {
		if fd.Rule == "graph-capture-sizes" {
			require.Contains(t, fd.Diff, "-export VLLM_ASCEND_ENABLE_FLASHCOMM1=1")
			require.Contains(t, fd.Diff, `"cudagraph_capture_sizes":[25]`)
			require.NotNil(t, fd.Predicted)
			applies(t, script, fd.Diff)
		}
	}
}

// applies checks that diff applies to the script with patch -p1 and the
// result passes bash -n.
func applies(t *testing.T, script, diff string) {
	t.Helper()
	if _, err := exec.LookPath("patch"); err != nil {
		t.Skip("patch is not installed")
	}
	dir := t.TempDir()
	data, err := os.ReadFile(script)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, filepath.Base(script)), data, 0o644))
	require.NotEmpty(t, diff)
	cmd := exec.Command("patch", "-p1")
	cmd.Dir = dir
	cmd.Stdin = strings.NewReader(diff)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "patch -p1: %s\n%s", out, diff)
	out, err = exec.Command("bash", "-n", filepath.Join(dir, filepath.Base(script))).CombinedOutput()
	require.NoError(t, err, "bash -n: %s", out)
}

// EPLB conflicts with EP off: on an EP + FLASHCOMM1 capture with hot
// experts the plan holds one of the two, says why it left out the other,
// and its diff holds no EPLB edit when EP goes off. With a known version
// too old for a BF16 VL model, EPLB is left out for the version.
func TestEPLBConflictsAndVersionGate(t *testing.T) {
	s := tracegen.FieldReport()[0]
	s.Name, s.Cumsum, s.HotRank, s.SkewFactor = "ep-fc1-hot", false, 5, 2.5
	res := analyze(t, s)
	rep, script := planFor(t, res, fieldScript, "concurrency=25")
	p := rep.Plan
	require.NotNil(t, p)
	var fired []string
	for _, f := range rep.Findings {
		fired = append(fired, f.Rule)
	}
	for _, o := range rep.Outcomes {
		if o.Rule == "expert-imbalance" {
			t.Logf("expert-imbalance: %s %s; skew %v", o.Status, o.Reason, res.Cluster.Metrics["skew.moe.gmm.max_over_mean"])
		}
	}
	require.Contains(t, fired, "expert-imbalance")
	require.Contains(t, fired, "comm-ep-flashcomm")
	held := map[string]bool{}
	for _, st := range p.Steps {
		held[st.Rule] = true
	}
	require.False(t, held["expert-imbalance"] && held["comm-ep-flashcomm"], "%+v", p.Steps)
	var reasons []string
	for _, lo := range p.LeftOut {
		reasons = append(reasons, lo.Rule+": "+lo.Reason)
	}
	if held["comm-ep-flashcomm"] {
		require.Contains(t, reasons, "expert-imbalance: conflicts with comm-ep-flashcomm: EPLB needs expert parallel, which comm-ep-flashcomm turns off")
		require.NotContains(t, p.DeployDiff, "eplb_config")
	}
	applies(t, script, p.DeployDiff)

	vl := strings.Replace(fieldScript, "/models/Qwen3-235B-A22B-W8A8", "/models/Qwen3-VL-235B-A22B-Instruct", 1)
	rep, _ = planFor(t, res, vl, "concurrency=25", "vllm_ascend_version=v0.13.0rc1")
	var gate string
	for _, lo := range rep.Plan.LeftOut {
		if lo.Rule == "expert-imbalance" {
			gate = lo.Reason
		}
	}
	require.Equal(t, "needs vllm-ascend >= v0.19.1rc1; the deployment runs v0.13.0rc1", gate)
	require.NotContains(t, rep.Plan.DeployDiff, "eplb_config")
}

// A fix whose replay makes the step slower is left out of the plan, with
// the replayed step times as the reason: a plan step never predicts a
// slower step. Here a synthetic fix runs the decode steps at four times
// the field report's 25 tokens.
func TestPlanLeavesOutAFixThatSlowsTheStep(t *testing.T) {
	res := analyze(t, tracegen.FieldReport()[0])
	rep, _ := planFor(t, res, fieldScript, "concurrency=25")
	rep.Findings = append(rep.Findings, rules.Fired{Finding: results.Finding{Rule: "grow-batch", Severity: "high"},
		Transforms: []rules.Transform{{Kind: "rebatch", To: 100}}})
	plan.Build(res, rep)
	var f *rules.Fired
	for i := range rep.Findings {
		if rep.Findings[i].Rule == "grow-batch" {
			f = &rep.Findings[i]
		}
	}
	require.NotNil(t, f)
	require.NotNil(t, f.Predicted)
	require.Equal(t, results.SeverityMedium, f.Severity, "a fix predicted to slow the step is never HIGH")
	require.Contains(t, f.PlanLeftOut, "predicted to slow the step (+")
	require.Greater(t, f.Predicted.StepTimeChangePct, 0.0, "four times the tokens: a slower step")
	var steps []string
	for _, st := range rep.Plan.Steps {
		steps = append(steps, st.Rule)
		require.Less(t, st.StepTimeChangePct, 0.0, st.Rule)
	}
	require.Equal(t, []string{"comm-ep-flashcomm", "moe-routing-cumsum", "graph-capture-sizes"}, steps)
	var why string
	for _, lo := range rep.Plan.LeftOut {
		if lo.Rule == "grow-batch" {
			why = lo.Reason
		}
	}
	require.Contains(t, why, "predicted to slow the step (+")
}
