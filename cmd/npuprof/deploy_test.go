package main

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/npuprof/npuprof/internal/testutil"
)

const twoServes = "../../testdata/deploy/prefill-decode.sh"

// A --deploy script that starts two `vllm serve` commands (prefill at
// lines 5-9 with --max-num-seqs 16 and expert parallel, decode at 11-15
// with --max-num-seqs 25): the reports warn, naming both and the one read;
// --deploy-line picks the other, whose facts and only whose lines the diff
// then uses.
func TestDeployWithSeveralServeCommands(t *testing.T) {
	data, err := os.ReadFile(twoServes)
	require.NoError(t, err)
	src := string(data)
	lines := strings.Split(src, "\n")
	warn := twoServes + " starts 2 `vllm serve` commands (lines 5-9, 11-15): the facts and the diff use "

	code, out, errs := run("analyze", demo, "--deploy", twoServes, "--detail", "tables")
	require.Equal(t, ExitOK, code, errs)
	requireText(t, out, "  warning: "+warn+"the last one, at lines 11-15 (/models/Qwen3-235B-A22B); their flags are not used, and a fix to an environment variable changes its assignment, which every command after it sees; pick another with --deploy-line N (any line of it)\n")
	require.Contains(t, out, "max_num_seqs = 25  ("+twoServes+":13 (--max-num-seqs 25))")

	type docT struct {
		Warnings   []string `json:"warnings"`
		DeployDiff string   `json:"deploy_diff"`
		Facts      []struct {
			Name   string
			Value  any
			Source string
		}
	}
	jsonRun := func(args ...string) docT {
		t.Helper()
		code, out, errs := run(append([]string{"analyze", demo, "--format", "json", "--deploy", twoServes}, args...)...)
		require.Equal(t, ExitOK, code, errs)
		var d docT
		require.NoError(t, json.Unmarshal([]byte(out), &d))
		return d
	}
	fact := func(d docT, name string) any {
		for _, f := range d.Facts {
			if f.Name == name {
				return f.Value
			}
		}
		return nil
	}
	d := jsonRun()
	require.Len(t, d.Warnings, 3)
	require.Contains(t, d.Warnings[0], warn+"the last one, at lines 11-15")
	// the decode command runs with FLASHCOMM1=0 and without expert
	// parallel; the profile's collectives are FLASHCOMM1's over an ep group
	require.True(t, strings.HasPrefix(d.Warnings[1], "conflict: flashcomm1 is true in the profile"), d.Warnings[1])
	require.True(t, strings.HasPrefix(d.Warnings[2], "conflict: expert_parallel is true in the profile"), d.Warnings[2])
	require.EqualValues(t, 25, fact(d, "max_num_seqs"))
	after, err := testutil.ApplyUnifiedDiff(src, d.DeployDiff)
	require.NoError(t, err)
	require.NotEqual(t, src, after)
	require.Equal(t, strings.Join(lines[:9], "\n"), strings.Join(strings.Split(after, "\n")[:9], "\n"), "the prefill command is untouched")

	// the prefill command, by a line inside it
	d = jsonRun("--deploy-line", "6")
	require.Len(t, d.Warnings, 1)
	require.Contains(t, d.Warnings[0], warn+"the one chosen, at lines 5-9 (/models/Qwen3-235B-A22B)")
	require.True(t, strings.HasSuffix(d.Warnings[0], "(--deploy-line 6)"), d.Warnings[0])
	require.EqualValues(t, 16, fact(d, "max_num_seqs"))
	require.Equal(t, true, fact(d, "expert_parallel"))
	after, err = testutil.ApplyUnifiedDiff(src, d.DeployDiff)
	require.NoError(t, err)
	got := strings.Split(after, "\n")
	require.NotContains(t, strings.Join(got[:len(got)-len(lines)+9], "\n"), "--enable-expert-parallel", "comm-ep-flashcomm's fix drops it from the prefill command")
	require.Equal(t, lines[9:], got[len(got)-len(lines)+9:], "the decode command is untouched")

	// check shows the same warning
	code, out, _ = run("check", demo, "--deploy", twoServes, "--deploy-line", "15")
	require.Equal(t, ExitFindings, code)
	requireText(t, out, "  warning: "+warn+"the one chosen, at lines 11-15")

	// the HTML report, with its notes
	html := t.TempDir() + "/r.html"
	code, _, errs = run("report", demo, "--deploy", twoServes, "-o", html)
	require.Equal(t, ExitOK, code, errs)
	page, err := os.ReadFile(html)
	require.NoError(t, err)
	require.Contains(t, string(page), "warning: "+warn+"the last one, at lines 11-15")

	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--deploy", twoServes, "--deploy-line", "10"}, "--deploy-line: " + twoServes + ": no `vllm serve` command spans line 10 (its commands are at lines 5-9, 11-15)"},
		{[]string{"--deploy-line", "6"}, "--deploy-line needs --deploy FILE"},
		{[]string{"--deploy", twoServes, "--deploy-line", "-1"}, "--deploy-line -1: out of range: expected a line number"},
	} {
		code, _, errs := run(append([]string{"analyze", demo}, c.args...)...)
		require.Equal(t, ExitUsage, code, "%v: %s", c.args, errs)
		require.Contains(t, errs, c.want, c.args)
	}
}

// The script: a command substitution as a flag value. The facts
// after it are still read (expert parallel was reported absent), the
// warning names the substitution, and the deploy diff merges into the
// script's own --additional-config instead of adding a second one inside
// the substitution.
func TestDeployCommandSubstitution(t *testing.T) {
	src := "#!/bin/bash\nexport VLLM_ASCEND_ENABLE_FLASHCOMM1=1\n" +
		"vllm serve /models/Qwen3 --tensor-parallel-size $(echo 4; true) --enable-expert-parallel \\\n" +
		"  --additional-config '{\"enable_cpu_binding\":true}' --max-num-seqs 25\n"
	path := t.TempDir() + "/serve.sh"
	require.NoError(t, os.WriteFile(path, []byte(src), 0o644))
	code, out, errs := run("analyze", demo, "--format", "json", "--deploy", path)
	require.Equal(t, ExitOK, code, errs)
	var d struct {
		Warnings   []string `json:"warnings"`
		DeployDiff string   `json:"deploy_diff"`
		Facts      []struct{ Name, Source string }
	}
	require.NoError(t, json.Unmarshal([]byte(out), &d))
	require.Contains(t, d.Warnings, path+":3: --tensor-parallel-size $(echo 4; true): the command substitution $(echo 4; true) is not run: "+
		"the value of --tensor-parallel-size is unknown, and so are the facts it sets")
	sources := map[string]string{}
	for _, f := range d.Facts {
		sources[f.Name] = f.Source
	}
	require.NotContains(t, sources["tp"], path, "tp is not taken from the script")
	require.Contains(t, sources["max_num_seqs"], path+":4")
	require.NotEmpty(t, d.DeployDiff)
	after, err := testutil.ApplyUnifiedDiff(src, d.DeployDiff)
	require.NoError(t, err)
	require.Equal(t, 1, strings.Count(after, "--additional-config"), after)
	require.Contains(t, after, "--tensor-parallel-size $(echo 4; true) ")
	require.Contains(t, after, `"enable_cpu_binding":true`, after)
}

// The first field report's final script spells "cudagraph_capture_size":
// the summary and the JSON warn, naming the key vLLM reads.
func TestDeployMisspeltConfigKeyWarns(t *testing.T) {
	final := "../../testdata/deploy/field-report-1-final.sh"
	code, out, errs := run("analyze", demo, "--deploy", final)
	require.Equal(t, 0, code, errs)
	require.Contains(t, strings.Join(strings.Fields(out), " "), `key "cudagraph_capture_size" is not one the config takes (recent versions refuse it, older ones ignore it, so it sets nothing); did you mean "cudagraph_capture_sizes"?`)
	code, out, errs = run("analyze", demo, "--format", "json", "--deploy", final)
	require.Equal(t, 0, code, errs)
	var d struct {
		Warnings []string `json:"warnings"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &d))
	found := false
	for _, w := range d.Warnings {
		found = found || strings.Contains(w, `field-report-1-final.sh:29 (--compilation-config): --compilation-config key "cudagraph_capture_size"`)
	}
	require.True(t, found, "%q", d.Warnings)
}
