package main

import (
	"encoding/json"
	"os"
	"path/filepath"
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
	outs := map[string]string{"json": js, "text": text, "stderr": errs + errs2}
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
	for _, args := range [][]string{
		{"analyze", rank, "--deploy", script},
		{"check", rank, "--deploy", script},
		{"report", rank, "--deploy", script},
		{"analyze", filepath.Join(brokenDir, "hostile-names"), "--deploy", script},
	} {
		_, out, errs := run(args...)
		for _, o := range []string{out, errs} {
			require.NotContains(t, o, "\x1b", "%v", args)
			require.NotContains(t, o, "\x07", "%v", args)
			require.NotContains(t, o, "\u009b", "%v", args)
			require.False(t, strings.Contains(o, "\x1b]52"), "%v", args)
		}
	}
}
