package redact

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestScript(t *testing.T) {
	in := `#!/bin/bash
export HF_TOKEN=hf_abcdef123
export OPENAI_API_KEY="sk-quoted value"
export DB_PASSWORD='pw'
export MY_SECRET_THING=s3
export TOKEN_REF=$HF_TOKEN
export VLLM_USE_V1=1
export HTTPS_PROXY=http://alice:hunter2@proxy:8080
vllm serve /m --api-key sk-APIKEY --hf-token=hf_x --tokenizer /tok \
  --api-key \
  sk-NEXTLINE --max-num-batched-tokens 8192 --served-model-name m
`
	got := Script(in)
	for _, secret := range []string{"hf_abcdef123", "sk-quoted value", "'pw'", "s3", "hunter2", "sk-APIKEY", "hf_x", "sk-NEXTLINE"} {
		require.NotContains(t, got, secret)
	}
	for _, kept := range []string{"export HF_TOKEN=***", `OPENAI_API_KEY="***"`, "DB_PASSWORD='***'", "TOKEN_REF=$HF_TOKEN",
		"VLLM_USE_V1=1", "http://alice:***@proxy:8080", "--api-key ***", "--hf-token=***", "--tokenizer /tok",
		"--max-num-batched-tokens 8192", "--served-model-name m"} {
		require.Contains(t, got, kept)
	}
	require.Equal(t, strings.Count(in, "\n"), strings.Count(got, "\n"), "line numbers hold")
	require.Equal(t, got, Script(got), "idempotent")
}

func TestEnv(t *testing.T) {
	require.Equal(t, Mask, Env("HF_TOKEN", "hf_x"))
	require.Equal(t, Mask, Env("ascend_secret_id", "x"))
	require.Equal(t, "1", Env("HCCL_BUFFSIZE", "1"))
	require.Equal(t, "", Env("HF_TOKEN", ""))
	require.Equal(t, "https://u:***@h/x", Env("PIP_INDEX_URL", "https://u:p@h/x"))
}

func TestTerminal(t *testing.T) {
	for in, want := range map[string]string{
		"a\x1b]52;c;ZWNobyBoaQ==\x07b":             "ab",
		"a\x1b]52;c;ZWNobyBoaQ==\x1b\\b":           "ab",
		"pw\x1b[2J\x1b[H":                          "pw",
		"m\x1b[31mred\x1b[0m":                      "mred",
		"x\u009b31my":                              "xy",
		"x\u009d0;title\u009cy":                    "xy",
		"tab\tnew\nline\r\x00\x7f":                 "tab\tnew\nline",
		"\x1bc reset":                              " reset",
		"plain — text ✓":                           "plain — text ✓",
		"\x1b]8;;http://e\x1b\\link\x1b]8;;\x1b\\": "link",
	} {
		require.Equal(t, want, Terminal(in), "%q", in)
	}
}
