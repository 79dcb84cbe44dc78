package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/npuprof/npuprof/internal/tracegen"
)

func TestList(t *testing.T) {
	var out, errb bytes.Buffer
	require.Equal(t, 0, run([]string{"-list"}, &out, &errb))
	for _, n := range tracegen.ScenarioNames() {
		assert.Contains(t, out.String(), n)
	}
	// the field reports' captures and the fix pairs' sides, which -scenario
	// also takes, are listed too, each once
	caps := tracegen.Captures()
	require.Len(t, caps, 4+3+9, "4 of field report 1, 3 of field report 2, 9 fix-pair sides not among them")
	for _, c := range caps {
		assert.Equal(t, 1, strings.Count(out.String(), "\n"+c.Scenario.Name+" "), c.Scenario.Name)
		_, ok := tracegen.Lookup(c.Scenario.Name)
		assert.True(t, ok, c.Scenario.Name)
	}
	assert.Contains(t, out.String(), "a3-tp4dp4-rc1        16     4   1      v0.13.0rc1")
	for _, s := range tracegen.ServiceScenarios() {
		assert.Contains(t, out.String(), "\n"+s.Name+" ")
	}
}

// -service writes a serving run's parse output and its truth.
func TestGenerateService(t *testing.T) {
	dir := t.TempDir()
	var out, errb bytes.Buffer
	require.Equal(t, 0, run([]string{"-service", "a3-90", "-spelling", "ms", "-o", dir}, &out, &errb), errb.String())
	assert.Equal(t, "service run a3-90 (ms spelling): 90 requests -> "+dir+"\n", out.String())
	for _, n := range []string{"request.csv", "batch.csv", "kvcache.csv", "forward.csv", "npuprof_service_truth.json"} {
		assert.FileExists(t, filepath.Join(dir, n))
	}
	errb.Reset()
	assert.Equal(t, 2, run([]string{"-service", "nope", "-o", dir}, &out, &errb))
	assert.Contains(t, errb.String(), "unknown service run")
	errb.Reset()
	assert.Equal(t, 2, run([]string{"-service", "a2-25", "-spelling", "s", "-o", dir}, &out, &errb))
	assert.Contains(t, errb.String(), "unknown -spelling")
}

func TestGenerateWithOverrides(t *testing.T) {
	dir := t.TempDir()
	var out, errb bytes.Buffer
	code := run([]string{"-scenario", "clean", "-o", dir, "-ranks", "2", "-layers", "2", "-steps", "2",
		"-cumsum", "-profiler-steps", "-q"}, &out, &errb)
	require.Equal(t, 0, code, errb.String())
	tr, err := tracegen.ReadTruth(dir)
	require.NoError(t, err)
	assert.Equal(t, 2, tr.Scenario.Ranks)
	assert.True(t, tr.Scenario.Cumsum && tr.Scenario.ProfilerSteps)
	assert.False(t, tr.Scenario.ExpertParallel)
	require.Len(t, tr.Ranks, 2)
	assert.Equal(t, 4.0, tr.Ranks[0].Metrics["moe.cumsum.count"])
	_, err = os.Stat(filepath.Join(dir, tr.Ranks[1].Dir, "ASCEND_PROFILER_OUTPUT", "trace_view.json"))
	assert.NoError(t, err)
}

func TestBadArgs(t *testing.T) {
	var out, errb bytes.Buffer
	assert.Equal(t, 2, run([]string{"-scenario", "nope", "-o", t.TempDir()}, &out, &errb))
	assert.Equal(t, 2, run([]string{"-scenario", "clean"}, &out, &errb))
	assert.Equal(t, 2, run([]string{"-scenario", "clean", "-o", t.TempDir(), "-ranks", "0"}, &out, &errb))
	assert.Equal(t, 0, run([]string{"-h"}, &out, &errb))
	assert.Contains(t, errb.String(), "\nExamples:\n  tracegen -list\n")
	assert.Contains(t, errb.String(), "\nExit codes:\n  0  ")
}

func TestHotExpertsFlags(t *testing.T) {
	dir := t.TempDir()
	var out, errb bytes.Buffer
	code := run([]string{"-scenario", "hot-rank", "-o", dir, "-layers", "2", "-steps", "1", "-hot-experts", "2", "-q"}, &out, &errb)
	require.Equal(t, 0, code, errb.String())
	tr, err := tracegen.ReadTruth(dir)
	require.NoError(t, err)
	assert.Equal(t, 2, tr.Scenario.HotExperts)
	assert.Equal(t, 8.0, tr.Scenario.HotExpertFactor, "default factor")
	require.NotNil(t, tr.Experts)
	assert.Len(t, tr.Experts.HotExperts, 2)
	_, err = os.Stat(filepath.Join(dir, tracegen.ExpertDumpDir, "decode_7.csv"))
	assert.NoError(t, err)
	assert.Equal(t, 2, run([]string{"-scenario", "clean", "-o", t.TempDir(), "-hot-experts", "2"}, &out, &errb), "needs EP")
}
