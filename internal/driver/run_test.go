package driver

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/npuprof/npuprof/internal/errkind"
	"github.com/npuprof/npuprof/internal/results"
	"github.com/npuprof/npuprof/internal/rules"
	"github.com/npuprof/npuprof/internal/tracegen"
)

// A check in which no rule or budget could be evaluated does not pass.
func TestCheckRefusesNoRuleEvaluated(t *testing.T) {
	rep := &rules.Report{Outcomes: []results.Outcome{
		{Rule: "a", Status: results.StatusNotEvaluated, Reason: "metric x unavailable"},
		{Rule: "b", Status: results.StatusFailed, Reason: "boom"},
	}}
	err := nothingEvaluated(rep.Outcomes)
	require.True(t, errkind.Is(err, errkind.Usage))
	require.EqualError(t, err, "nothing to check: none of the 2 rule(s) could be evaluated (a: metric x unavailable; b: boom)")
	rep.Outcomes = append(rep.Outcomes, results.Outcome{Rule: "c", Status: results.StatusClear})
	require.NoError(t, nothingEvaluated(rep.Outcomes))
}

// fieldScript is the first field report's deployment.
const fieldScript = `#!/usr/bin/env bash
export HCCL_OP_EXPANSION_MODE=AIV
export VLLM_ASCEND_ENABLE_FLASHCOMM1=1

vllm serve /models/Qwen3-235B-A22B-W8A8 \
  --tensor-parallel-size 8 \
  --enable-expert-parallel \
  --max-num-seqs 32 \
  --quantization ascend
`

// One run with a deployment script: the combined deploy diff is made once,
// after the plan, and is the plan's; the gate judges the document's
// findings; a document saved with its detail runs again to the same
// findings and verdict.
func TestRunDeployDiffIsThePlans(t *testing.T) {
	dir := t.TempDir()
	_, err := tracegen.Generate(dir, tracegen.FieldReport()[0])
	require.NoError(t, err)
	script := filepath.Join(t.TempDir(), "serve.sh")
	require.NoError(t, os.WriteFile(script, []byte(fieldScript), 0o644))
	req := &Request{Path: dir, Deploy: script, Facts: []string{"concurrency=25"},
		Gate: &results.Gate{FailOn: results.SeverityHigh, GatePartial: true}, Detail: true}
	run, err := Run(context.Background(), req)
	require.NoError(t, err)
	require.NoError(t, run.Failed)
	require.NotEmpty(t, run.Doc.Findings)
	doc := run.Doc
	require.NotNil(t, doc.Plan)
	require.NotEmpty(t, doc.DeployDiff)
	require.Equal(t, doc.Plan.DeployDiff, doc.DeployDiff)
	require.True(t, doc.Detail.Built)
	require.NotNil(t, run.Verdict)
	require.Equal(t, req.Gate.Judge(doc.Findings), *run.Verdict)
	v, ok := doc.Verdict()
	require.True(t, ok)
	require.Equal(t, *run.Verdict, v)

	saved := filepath.Join(t.TempDir(), "saved.json")
	f, err := os.Create(saved)
	require.NoError(t, err)
	enc := json.NewEncoder(f)
	require.NoError(t, enc.Encode(doc))
	require.NoError(t, f.Close())
	again, err := Run(context.Background(), &Request{Path: saved, Gate: req.Gate, Detail: true})
	require.NoError(t, err)
	require.Equal(t, doc.Findings, again.Doc.Findings)
	require.Equal(t, *run.Verdict, *again.Verdict)
}
