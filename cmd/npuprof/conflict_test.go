package main

import (
	"encoding/json"
	"html"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// A script with TP=4 against a profile whose tp group has 8 ranks: every
// output carries the conflict, and the rules see tp = 8 (what ran). The
// script's $ARGS is read as flags where the script assigns it.
func TestScriptProfileConflict(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "serve.sh")
	require.NoError(t, os.WriteFile(script, []byte(`#!/bin/bash
TP=4
ARGS="--max-num-seqs 32 --enable-expert-parallel"
vllm serve /models/Qwen3-235B-A22B \
  --tensor-parallel-size $TP $ARGS
`), 0o644))
	want := "conflict: tp is 8 in the profile (profile: parallel_group_info group tp has 8 ranks) but 4 in " + script + ":5 (--tensor-parallel-size $TP = 4); the rules use 8, what ran"

	code, out, errs := run("analyze", demo, "--deploy", script, "--detail", "tables")
	require.Equal(t, ExitOK, code, errs)
	requireText(t, out, "  warning: "+want+"\n")
	require.Contains(t, out, "  tp = 8  (profile: parallel_group_info group tp has 8 ranks)\n")
	requireText(t, out, "  max_num_seqs = 32  ("+script+":5 (--max-num-seqs 32))\n", "$ARGS is expanded")
	require.NotContains(t, out, "conflict: expert_parallel", "--enable-expert-parallel is in $ARGS")

	code, out, errs = run("analyze", demo, "--deploy", script, "--format", "json")
	require.Equal(t, ExitOK, code, errs)
	var doc struct {
		Context struct {
			Conflicts []struct {
				Fact        string `json:"fact"`
				Profile     any    `json:"profile"`
				Given       any    `json:"given"`
				GivenSource string `json:"given_source"`
			} `json:"conflicts"`
		} `json:"context"`
		Warnings []string `json:"warnings"`
		Facts    []struct {
			Name   string `json:"name"`
			Value  any    `json:"value"`
			Source string `json:"source"`
		} `json:"facts"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &doc))
	require.Contains(t, doc.Warnings, want)
	require.Len(t, doc.Context.Conflicts, 1)
	c := doc.Context.Conflicts[0]
	require.Equal(t, "tp", c.Fact)
	require.EqualValues(t, 8, c.Profile)
	require.EqualValues(t, 4, c.Given)
	require.Equal(t, script+":5 (--tensor-parallel-size $TP = 4)", c.GivenSource)
	for _, f := range doc.Facts {
		if f.Name == "tp" {
			require.EqualValues(t, 8, f.Value, "the rules use the profile's tp")
		}
	}

	page := filepath.Join(dir, "r.html")
	code, _, errs = run("report", demo, "--deploy", script, "-o", page)
	require.Equal(t, ExitOK, code, errs)
	b, err := os.ReadFile(page)
	require.NoError(t, err)
	require.Contains(t, html.UnescapeString(string(b)), "conflict: tp is 8 in the profile")

	// a variable the script never assigns: its flags are reported unread
	require.NoError(t, os.WriteFile(script, []byte("vllm serve /m --tensor-parallel-size 8 $EXTRA\n"), 0o644))
	_, out, _ = run("analyze", demo, "--deploy", script, "--detail", "tables")
	requireText(t, out, "  warning: "+script+":1: $EXTRA is not assigned in the script: the flags it holds are unread\n")
}
