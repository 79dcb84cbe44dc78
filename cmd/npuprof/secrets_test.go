package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/npuprof/npuprof/internal/testutil"
	"github.com/stretchr/testify/require"
)

// escapes are an OSC 52 clipboard write, a clear screen and a colour.
const (
	osc52 = "\x1b]52;c;ZWNobyBwd25lZA==\x07"
	csi   = "\x1b[2J\x1b[31m"
)

// hostileCapture is a generated rank whose profile ENV_VARIABLES hold a
// token, a URL password and escapes, and a deployment script holding
// HF_TOKEN, --api-key and escapes in every kind of string it has.
func hostileCapture(t *testing.T) (rank, script string, secrets []string) {
	_, rank = testutil.GenerateTiny(t)
	mdPath := filepath.Join(rank, "profiler_metadata.json")
	data, err := os.ReadFile(mdPath)
	require.NoError(t, err)
	var md map[string]any
	require.NoError(t, json.Unmarshal(data, &md))
	env := md["ENV_VARIABLES"].(map[string]any)
	env["HF_TOKEN"] = "hf_ENVSECRET1"
	env["PIP_INDEX_URL"] = "https://bob:ENVPASS2@mirror/simple"
	env["HCCL_RDMA_TC"] = "1" + osc52 + csi
	data, err = json.Marshal(md)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(mdPath, data, 0o644))
	script = filepath.Join(t.TempDir(), "serve.sh")
	require.NoError(t, os.WriteFile(script, []byte("#!/bin/bash\n"+
		"export HF_TOKEN=hf_SCRIPTSECRET3\n"+
		"export NOTE='x"+osc52+"'\n"+
		"export VLLM_LOG"+csi+"=1\n"+
		"vllm serve /models/m"+csi+" --api-key sk-APIKEY4 --tensor-parallel-size 8 --enable-expert-parallel \\\n"+
		"  --served-model-name \"m"+osc52+"\" --download-dir https://u:URLPASS5@h/x\n"), 0o644))
	return rank, script, []string{"hf_ENVSECRET1", "ENVPASS2", "hf_SCRIPTSECRET3", "sk-APIKEY4", "URLPASS5"}
}

// A serve.sh with HF_TOKEN and --api-key, and a profile whose environment
// holds a token: JSON, JUnit, SARIF, HTML and the terminal contain none of
// the values (issue 31).
func TestSecretsInNoOutput(t *testing.T) {
	rank, script, secrets := hostileCapture(t)
	dir := t.TempDir()
	html, junit, sarif := filepath.Join(dir, "r.html"), filepath.Join(dir, "r.xml"), filepath.Join(dir, "r.sarif")
	_, js, errs := run("analyze", rank, "--deploy", script, "--format", "json", "--html", html)
	_, text, errs2 := run("check", rank, "--deploy", script, "--junit", junit, "--sarif", sarif)
	_, full, errs3 := run("analyze", rank, "--deploy", script, "--format", "json-full")
	_, detail, errs4 := run("analyze", rank, "--deploy", script, "--detail", "all")
	_, report, errs5 := run("report", rank, "--deploy", script)
	// the diff of two runs (a saved document against the profile)
	saved := filepath.Join(dir, "a.json")
	require.NoError(t, os.WriteFile(saved, []byte(full), 0o644))
	dhtml := filepath.Join(dir, "d.html")
	code, diff, errs6 := run("diff", saved, rank, "--format", "json", "--html", dhtml)
	require.Equal(t, ExitOK, code, errs6)
	b, err := os.ReadFile(dhtml)
	require.NoError(t, err)
	diff += string(b)
	outs := map[string]string{"json": js, "text": text, "json-full": full, "detail": detail, "report": report, "diff": diff,
		"stderr": errs + errs2 + errs3 + errs4 + errs5 + errs6}
	for _, p := range []string{html, junit, sarif} {
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		outs[filepath.Ext(p)] = string(b)
	}
	require.Contains(t, js, `HF_TOKEN=***`, "the diff shows the masked value")
	for name, out := range outs {
		for _, s := range secrets {
			require.NotContains(t, out, s, "%s holds a credential", name)
		}
	}
}

// OSC 52 and CSI sequences written into every input string a summary
// prints (the deployment script's lines, flags and values, the profile's
// environment, the names of the hostile corpus) reach no terminal output.
func TestNoEscapeReachesTheTerminal(t *testing.T) {
	rank, script, _ := hostileCapture(t)
	// the other strings of the inputs a summary prints: the rank folder's
	// name (every path and reason quotes it), profiler_info's versions
	// and level, the server log's lines, a rule file's title, why and fix,
	// a --fact value
	hostile := hostileFolder(t, rank)
	// and one without its trace: the reasons quote its paths
	noTrace := hostileFolder(t, rank)
	require.NoError(t, os.Remove(filepath.Join(noTrace, "ASCEND_PROFILER_OUTPUT", "trace_view.json")))
	rules := filepath.Join(t.TempDir(), "team.yaml")
	require.NoError(t, os.WriteFile(rules, []byte(`rules:
  - id: team-idle
    title: "idle \u001b]52;c;QQ==\u0007 \u001b[2J title"
    when: metric("overlap.computing.time_us") > 0
    why: "why \u001b[31m red"
    fix: "feed \u009b2J the device"
`), 0o644))
	for _, args := range [][]string{
		{"analyze", rank, "--deploy", script},
		{"check", rank, "--deploy", script},
		{"report", rank, "--deploy", script},
		{"analyze", filepath.Join(brokenDir, "hostile-names"), "--deploy", script},
		{"analyze", filepath.Dir(hostile), "--deploy", script, "--detail", "all", "--rules", rules},
		{"analyze", rank, "--fact", "vllm_ascend_version=v0.13.0" + osc52}, // refused (exit 2), the value quoted
		{"check", filepath.Dir(hostile), "--rules", rules},
		{"analyze", noTrace, "--detail", "all"},
		{"report", noTrace},
		{"analyze", hostile, "--vllm-log", filepath.Join(filepath.Dir(hostile), "server.log"), "--detail", "all"},
	} {
		code, out, errs := run(args...)
		if !slices.Contains(args, "--fact") {
			require.NotEqual(t, ExitUsage, code, "%v: %s", args, errs)
			require.NotEmpty(t, out, "%v", args)
		}
		for _, o := range []string{out, errs} {
			require.NotContains(t, o, "\x1b", "%v", args)
			require.NotContains(t, o, "\x07", "%v", args)
			require.NotContains(t, o, "\u009b", "%v", args)
			require.False(t, strings.Contains(o, "\x1b]52"), "%v", args)
		}
	}
}

// hostileFolder is a copy of rank whose folder name, profiler_info
// strings and capture folder's server.log carry OSC 52 and CSI sequences.
func hostileFolder(t *testing.T, rank string) string {
	capture := filepath.Join(t.TempDir(), "capture")
	name := strings.Replace(filepath.Base(rank), "_rank0_", "_rank0_"+osc52+csi+"_", 1)
	dst := filepath.Join(capture, name)
	require.NoError(t, filepath.Walk(rank, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(rank, p)
		if info.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	}))
	var infos []string // (not Glob: the folder's name holds a '[')
	ents, err := os.ReadDir(dst)
	require.NoError(t, err)
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), "profiler_info_") {
			infos = append(infos, filepath.Join(dst, e.Name()))
		}
	}
	require.NotEmpty(t, infos)
	var info map[string]any
	b, err := os.ReadFile(infos[0])
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &info))
	info["torch_npu_version"] = "2.5.1" + osc52
	info["cann_version"] = "8.0" + csi
	if c, ok := info["config"].(map[string]any); ok {
		if e, ok := c["experimental_config"].(map[string]any); ok {
			e["_profiler_level"] = "Level1" + osc52
		}
	}
	b, err = json.Marshal(info)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(infos[0], b, 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(capture, "server.log"), []byte(
		"INFO 01-09 08:16:17 [loggers.py:116] Engine 000: Avg prompt throughput: 0.0 tokens/s, Avg generation throughput: 100.0 tokens/s, Running: 8 reqs, Waiting: 0 reqs, GPU KV cache usage: 1.0%, Prefix cache hit rate: 0.0%"+osc52+"\n"+
			"INFO 01-09 08:16:18 [api_server.py:1] vLLM API server version 0.9.1"+csi+"\n"), 0o644))
	return dst
}
