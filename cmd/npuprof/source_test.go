package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// --source DIR turns the Cumsum fix into a diff of the tree's
// token_dispatcher.py (a fixture written here); a tree without the file
// says which file is missing; a DIR that is not a folder is a usage error.
func TestAnalyzeSourcePatch(t *testing.T) {
	dir, rel, src := dispatcherTree(t, "fused_moe")
	code, out, stderr := run("analyze", demo, "--format", "json", "--source", dir)
	require.Equal(t, 0, code, stderr)
	var doc struct {
		Findings []struct {
			Rule        string                        `json:"rule"`
			CodePatches []struct{ File, Diff string } `json:"code_patches"`
			PatchError  string                        `json:"code_patch_error"`
		} `json:"findings"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &doc))
	found := false
	for _, f := range doc.Findings {
		if f.Rule == "moe-routing-cumsum" {
			found = true
			require.Len(t, f.CodePatches, 1, f.PatchError)
			require.Equal(t, "vllm_ascend/ops/fused_moe/token_dispatcher.py", f.CodePatches[0].File)
			require.Contains(t, f.CodePatches[0].Diff, "+        y = route(x, expert_tokens_num_type=0)\n")
			require.Contains(t, f.CodePatches[0].Diff, "+        group_list_type = 0\n")
		}
	}
	require.True(t, found)
	b, _ := os.ReadFile(filepath.Join(dir, rel))
	require.Equal(t, src, string(b))

	code, out, _ = run("analyze", demo, "--format", "json", "--source", t.TempDir())
	require.Equal(t, 0, code)
	require.Contains(t, out, `"code_patch_error": "--source: token_dispatcher.py not found under`)
	// the terminal, the JUnit report and the HTML report say it too, in
	// the report's language
	empty := t.TempDir()
	_, out, _ = run("analyze", demo, "--source", empty)
	require.Contains(t, out, "      (no code patch: --source: token_dispatcher.py not found under")
	_, out, _ = run("analyze", demo, "--source", empty, "--lang", "zh")
	require.Contains(t, out, "      （无代码补丁：--source：在 ")
	require.Contains(t, out, "请按修复说明手工修改")
	require.NotContains(t, out, "not found under")
	junit := filepath.Join(t.TempDir(), "j.xml")
	code, _, stderr = run("check", demo, "--source", empty, "--junit", junit)
	require.Contains(t, []int{0, 1}, code, stderr)
	jb, err := os.ReadFile(junit)
	require.NoError(t, err)
	require.Contains(t, string(jb), "no code patch: --source: token_dispatcher.py not found under")
	html := filepath.Join(t.TempDir(), "r.html")
	code, _, stderr = run("analyze", demo, "--source", empty, "--lang", "zh", "--html", html)
	require.Equal(t, 0, code, stderr)
	hb, err := os.ReadFile(html)
	require.NoError(t, err)
	require.True(t, strings.Contains(string(hb), `<p class="na">无代码补丁： --source：在 `), "the HTML report does not say why there is no code patch")

	code, _, stderr = run("analyze", demo, "--source", filepath.Join(dir, rel))
	require.Equal(t, 2, code)
	require.Contains(t, stderr, "--source")
}

// The terminal summary opens with the plan (steps, total, the combined
// diff), and its findings do not repeat their planned prediction (--detail
// all does); the JSON document's plan.deploy_diff is its deploy_diff.
func TestAnalyzeOpensWithPlan(t *testing.T) {
	dir := genScenario(t, "field-ep-fc1-cumsum")
	script := filepath.Join(t.TempDir(), "serve.sh")
	require.NoError(t, os.WriteFile(script, []byte("#!/usr/bin/env bash\nexport VLLM_ASCEND_ENABLE_FLASHCOMM1=1\nvllm serve /models/Qwen3-235B-A22B-W8A8 \\\n  --tensor-parallel-size 8 \\\n  --enable-expert-parallel \\\n  --max-num-seqs 32\n"), 0o644))
	code, out, stderr := run("analyze", dir, "--deploy", script, "--fact", "concurrency=25")
	require.Equal(t, 0, code, stderr)
	p, f := strings.Index(out, "\nFix plan"), strings.Index(out, "\nFindings\n")
	require.True(t, p > 0 && p < f, out)
	require.Contains(t, out, "  1. comm-ep-flashcomm: ")
	require.Contains(t, out, "  3. graph-capture-sizes: ")
	require.Contains(t, out, "  total: ")
	require.NotContains(t, out, "      predicted: ")
	_, all, _ := run("analyze", dir, "--deploy", script, "--fact", "concurrency=25", "--detail", "all")
	require.Contains(t, all, "      predicted: ")
	code, out, stderr = run("analyze", dir, "--deploy", script, "--fact", "concurrency=25", "--format", "json")
	require.Equal(t, 0, code, stderr)
	var doc struct {
		DeployDiff string `json:"deploy_diff"`
		Plan       struct {
			Steps      []struct{ Rule string } `json:"steps"`
			DeployDiff string                  `json:"deploy_diff"`
		} `json:"plan"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &doc))
	require.Len(t, doc.Plan.Steps, 3)
	require.NotEmpty(t, doc.DeployDiff)
	require.Equal(t, doc.DeployDiff, doc.Plan.DeployDiff)
}

// check --budget can gate on the plan's predicted step-time change.
func TestCheckBudgetOnPlan(t *testing.T) {
	dir := genScenario(t, "field-ep-fc1-cumsum")
	code, out, stderr := run("check", dir, "--fact", "concurrency=25", "--budget", "plan.step_time_change_pct >= -5")
	require.Equal(t, 1, code, "%s\n%s", out, stderr)
	require.Contains(t, out, "The fix plan predicts")
	code, out, stderr = run("check", dir, "--fact", "concurrency=25", "--budget", "plan.step_time_change_pct >= -50", "--fail-on", "high")
	require.NotContains(t, out, "The fix plan predicts", stderr)
	_ = code
	code, _, stderr = run("check", demo, "--budget", "plan.step_time_change_pct >= -5")
	require.NotEqual(t, 2, code, stderr)
}

// JUnit and SARIF carry each finding's predicted change.
func TestJUnitSARIFCarryPrediction(t *testing.T) {
	dir := genScenario(t, "field-ep-fc1-cumsum")
	out := t.TempDir()
	junit, sarif := filepath.Join(out, "n.xml"), filepath.Join(out, "n.sarif")
	code, _, stderr := run("check", dir, "--fact", "concurrency=25", "--junit", junit, "--sarif", sarif)
	require.NotEqual(t, 2, code, stderr)
	j, err := os.ReadFile(junit)
	require.NoError(t, err)
	require.Contains(t, string(j), "predicted: ")
	require.Contains(t, string(j), "µs per decode step (")
	sf, err := os.ReadFile(sarif)
	require.NoError(t, err)
	require.Contains(t, string(sf), `"predicted": {`)
	require.Contains(t, string(sf), `"step_time_change_pct": `)
}

// The HTML report opens its findings with the plan, and each finding
// shows its predicted change.
func TestReportOpensWithPlan(t *testing.T) {
	dir := genScenario(t, "field-ep-fc1-cumsum")
	out := filepath.Join(t.TempDir(), "r.html")
	code, _, stderr := run("report", dir, "--fact", "concurrency=25", "-o", out)
	require.Equal(t, 0, code, stderr)
	b, err := os.ReadFile(out)
	require.NoError(t, err)
	html := string(b)
	p, f := strings.Index(html, `id="plan"`), strings.Index(html, `<article class="finding`)
	require.True(t, p > 0 && p < f)
	require.Contains(t, html, `<span class="rule mono">comm-ep-flashcomm</span>: `)
	require.Contains(t, html, "<b>Total:</b> ")
	require.Contains(t, html, `<p class="predicted">Predicted: `)
}

// An installed tree's vllm_ascend/_version.py gives the version the fixes
// are written for when nothing else says it (the Cumsum fix names that
// release's folder, vllm_ascend/ops/moe/ before v0.12.0rc1); a tree of
// another release than the one given is said in a warning, and the given
// version stands.
func TestSourceTreeVersion(t *testing.T) {
	dir, _, _ := dispatcherTree(t, "moe")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "vllm_ascend", "_version.py"), []byte("__version__ = version = '0.11.0'\n"), 0o644))
	type doc struct {
		Facts []struct {
			Name   string `json:"name"`
			Value  any    `json:"value"`
			Source string `json:"source"`
		} `json:"facts"`
		Findings []struct {
			Rule string `json:"rule"`
			Fix  string `json:"fix"`
		} `json:"findings"`
		Warnings []string `json:"warnings"`
	}
	read := func(args ...string) doc {
		t.Helper()
		code, out, stderr := run(append([]string{"analyze", demo, "--format", "json", "--source", dir}, args...)...)
		require.Equal(t, 0, code, stderr)
		var d doc
		require.NoError(t, json.Unmarshal([]byte(out), &d))
		return d
	}
	fact := func(d doc) (any, string) {
		for _, f := range d.Facts {
			if f.Name == "vllm_ascend_version" {
				return f.Value, f.Source
			}
		}
		return nil, ""
	}
	d := read()
	v, from := fact(d)
	require.Equal(t, "v0.11.0", v)
	require.Equal(t, "--source: "+filepath.Join(dir, "vllm_ascend", "_version.py"), from)
	fixed := false
	for _, f := range d.Findings {
		if f.Rule == "moe-routing-cumsum" {
			fixed = true
			require.Contains(t, f.Fix, "In vllm_ascend/ops/moe/token_dispatcher.py,")
		}
	}
	require.True(t, fixed)
	require.Empty(t, d.Warnings)

	d = read("--fact", "vllm_ascend_version=v0.13.0rc2")
	v, _ = fact(d)
	require.Equal(t, "v0.13.0rc2", v)
	require.Contains(t, d.Warnings, "--source "+dir+" is vLLM-Ascend v0.11.0 (vllm_ascend/_version.py) and the deployment runs v0.13.0rc2 (--fact vllm_ascend_version=v0.13.0rc2): the code patches are of the tree's code")

	require.NoError(t, os.WriteFile(filepath.Join(dir, "vllm_ascend", "_version.py"), []byte("version = '0.11.1.dev3+g1a2b3c4'\n"), 0o644))
	d = read()
	v, _ = fact(d)
	require.Nil(t, v)
	require.Contains(t, d.Warnings, "--source "+dir+": vllm_ascend/_version.py says 0.11.1.dev3+g1a2b3c4, not a release: the vLLM-Ascend version is not taken from it")
}

// dispatcherTree writes a small vllm-ascend tree whose
// vllm_ascend/ops/FOLDER/token_dispatcher.py holds the AllGather
// dispatcher's two values the Cumsum patch changes; it returns the tree,
// the file's path in it and the file's text.
func dispatcherTree(t *testing.T, folder string) (dir, rel, src string) {
	t.Helper()
	dir = t.TempDir()
	rel = filepath.Join("vllm_ascend", "ops", folder, "token_dispatcher.py")
	require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(dir, rel)), 0o755))
	src = "class TokenDispatcherWithAllGather:\n    def token_dispatch(self, x):\n        y = route(x, expert_tokens_num_type=1)\n        group_list_type = 1\n        return y\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, rel), []byte(src), 0o644))
	return dir, rel, src
}
