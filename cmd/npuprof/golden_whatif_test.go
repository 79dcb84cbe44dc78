package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/npuprof/npuprof/internal/golden"
	"github.com/npuprof/npuprof/internal/testutil"
)

// TestGoldenHostTuningWhatIf pins the plan's optional host tuning and the
// target-concurrency what-if, in the terminal summary and in the HTML
// report's plan section (host tuning in its own block, apart from the
// deploy diff), on tracegen's host-bound capture (25 requests) with a
// script that serves up to 96, judged at 90 concurrent requests. The capture's folder is replaced by $DIR.
// whatIfScript serves the host-bound capture's model with room for 90
// requests a step and vLLM-Ascend's default capture sizes for 25.
const whatIfScript = `#!/usr/bin/env bash
vllm serve /models/Qwen3-235B-A22B \
  --tensor-parallel-size 8 \
  --max-num-seqs 96 \
  --compilation-config '{"cudagraph_capture_sizes":[1,2,4,8,16,24]}'
`

func TestGoldenHostTuningWhatIf(t *testing.T) {
	t.Chdir("../..")
	dir, _ := testutil.Generate(t, testutil.Scenario(t, "host-bound"))
	sdir := t.TempDir()
	script := filepath.Join(sdir, "serve.sh")
	require.NoError(t, os.WriteFile(script, []byte(whatIfScript), 0o644))
	norm := func(b []byte) []byte {
		return bytes.ReplaceAll(bytes.ReplaceAll(b, []byte(dir), []byte("$DIR")), []byte(sdir), []byte("$SCRIPT_DIR"))
	}
	const name = "host-bound-whatif"
	args := []string{"--fact", "concurrency=90", "--deploy", script}
	out, errs := goldenRun(t, ExitOK, append([]string{"analyze", dir, "-q"}, args...)...)
	goldenStderr(t, errs)
	golden.Check(t, goldenFile(name, "analyze.txt"), norm([]byte(out)))

	html := filepath.Join(t.TempDir(), "report.html")
	_, errs = goldenRun(t, ExitOK, append([]string{"report", dir, "-q", "-o", html}, args...)...)
	goldenStderr(t, errs)
	page := string(readFile(t, html))
	i := strings.Index(page, `<section id="plan"`)
	require.GreaterOrEqual(t, i, 0, "the report has a plan section")
	j := strings.Index(page[i:], "</section>")
	require.Greater(t, j, 0)
	sec := page[i : i+j+len("</section>")]
	require.Contains(t, sec, `class="block host-tuning"`)
	d, h := strings.Index(sec, `id="deploy-diff"`), strings.Index(sec, `class="block host-tuning"`)
	require.True(t, d >= 0 && d < h, "the host tuning is a block of its own after the deploy diff")
	require.NotContains(t, sec[:h], "sysctl", "the deploy diff holds no host tuning")
	golden.Check(t, goldenFile(name, "report-plan.html"), norm([]byte(sec+"\n")))
}
