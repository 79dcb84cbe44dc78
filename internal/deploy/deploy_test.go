package deploy

import (
	"github.com/npuprof/npuprof/internal/vllmconf"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/npuprof/npuprof/internal/testutil"
)

const fixture = "../../testdata/deploy/field-report-1.sh"

func facts(t *testing.T, s *Script) map[string]Fact {
	t.Helper()
	m := map[string]Fact{}
	for _, f := range s.Facts() {
		m[f.Name] = f
	}
	return m
}

func TestFieldReportFacts(t *testing.T) {
	s, err := ReadFile(fixture)
	require.NoError(t, err)
	f := facts(t, s)
	require.Equal(t, 8, f["tp"].Value)
	require.Equal(t, 25, f["max_num_seqs"].Value)
	require.Equal(t, true, f["expert_parallel"].Value)
	require.Equal(t, true, f["flashcomm1"].Value)
	require.Equal(t, []int{1, 2, 4, 8, 16, 24}, f["capture_sizes"].Value)
	require.Equal(t, false, f["async_scheduling"].Value)
	require.Equal(t, "/models/Qwen3-235B-A22B-W8A8", f["model"].Value)
	require.Equal(t, "AIV", f["env.HCCL_OP_EXPANSION_MODE"].Value)
	require.Contains(t, f["expert_parallel"].Source, "field-report-1.sh:17")
	require.Contains(t, f["flashcomm1"].Source, "field-report-1.sh:11")
}

// The first field report's final script spells the capture-size key
// "cudagraph_capture_size": a warning names the key it meant, and the
// facts read [25] as the user intended (the one close key), not vLLM's
// default list. Its host-tuning commands are no vllm serve and change no
// fact.
func TestFieldReportFinalScriptMisspeltKey(t *testing.T) {
	s, err := ReadFile("../../testdata/deploy/field-report-1-final.sh")
	require.NoError(t, err)
	facts, invalid := s.FactsChecked()
	f := map[string]Fact{}
	for _, x := range facts {
		f[x.Name] = x
	}
	require.Equal(t, []int{25}, f["capture_sizes"].Value)
	require.Equal(t, "FULL_DECODE_ONLY", f["cudagraph_mode"].Value)
	require.Equal(t, false, f["expert_parallel"].Value, "EP is off: the flag is gone")
	require.Len(t, invalid, 1)
	require.Equal(t, vllmconf.ConfigKeyFact, invalid[0].Name)
	require.Contains(t, invalid[0].Source, "field-report-1-final.sh:29 (--compilation-config)")
	require.Contains(t, invalid[0].Value, `"cudagraph_capture_size" is not one the config takes`)
	require.Contains(t, invalid[0].Value, `did you mean "cudagraph_capture_sizes"?`)

	// the correct key given too wins over the misspelt one
	s, err = Parse("x.sh", `vllm serve m --compilation-config '{"cudagraph_capture_size":[25],"cudagraph_capture_sizes":[8]}'`+"\n")
	require.NoError(t, err)
	facts, invalid = s.FactsChecked()
	require.Len(t, invalid, 1)
	for _, x := range facts {
		if x.Name == "capture_sizes" {
			require.Equal(t, []int{8}, x.Value)
		}
	}
}

func TestParseShellForms(t *testing.T) {
	s, err := Parse("run.sh", `export A=1 B="two words"
C='x y' vllm serve "my model" --tp 2 --max-num-seqs=16 \
   --additional-config "{\"enable_flashcomm1\": false, \"eplb_config\": {\"dynamic_eplb\": true}}" \
   --enforce-eager # trailing comment
echo done
`)
	require.NoError(t, err)
	require.Equal(t, "two words", s.Env["B"].Value)
	require.Equal(t, "x y", s.Env["C"].Value)
	require.Equal(t, "my model", s.Serve.Model)
	require.Equal(t, 2, s.Serve.LastLine-s.Serve.FirstLine+0)
	require.Equal(t, "16", s.Serve.Lookup("--max-num-seqs").Value)
	require.Equal(t, "2", s.Serve.Lookup("--tp").Value)
	require.True(t, s.Serve.Lookup("--enforce-eager") != nil && !s.Serve.Lookup("--enforce-eager").HasValue)
	f := facts(t, s)
	require.Equal(t, false, f["flashcomm1"].Value)
	require.Equal(t, true, f["eplb"].Value)
	require.Equal(t, "NONE", f["cudagraph_mode"].Value)
	require.Equal(t, []int{1, 2, 4, 8, 16}, f["capture_sizes"].Value)

	_, err = Parse("bad.sh", "vllm serve 'unterminated\n")
	require.EqualError(t, err, `bad.sh:1:12: bash cannot parse line 1 "vllm serve 'unterminated": reached EOF without closing quote `+"`'`"+` (expected a shell script: export lines and a vllm serve command)`)
	// a file given by mistake: its line is quoted, and what was expected said
	_, err = Parse("go.mod", "module github.com/npuprof/npuprof\n\ngo 1.26\n\nrequire (\n\tgithub.com/spf13/cobra v1.9.1\n)\n")
	require.EqualError(t, err, `go.mod:5:1: bash cannot parse line 5 "require (": `+"`foo(` must be followed by `)`"+` (expected a shell script: export lines and a vllm serve command)`)
}

func TestDefaultCaptureSizes(t *testing.T) {
	require.Equal(t, []int{1, 2, 4, 8, 16, 24}, DefaultCaptureSizes(25))
	require.Equal(t, []int{1, 2}, DefaultCaptureSizes(2))
	l := DefaultCaptureSizes(1000)
	require.Equal(t, 512, l[len(l)-1])
	require.Contains(t, l, 272)
	require.NotContains(t, l, 264)
}

// The three fixes of the first field report, applied as a diff, give its
// final command: no --enable-expert-parallel, no FLASHCOMM1, and
// FULL_DECODE_ONLY with capture size 25.
func TestFieldReportDiffApplies(t *testing.T) {
	s, err := ReadFile(fixture)
	require.NoError(t, err)
	edits := []Edit{
		{Op: OpRemoveFlag, Name: "--enable-expert-parallel"},
		{Op: OpUnsetEnv, Name: "VLLM_ASCEND_ENABLE_FLASHCOMM1"},
		{Op: OpMergeJSON, Name: "--additional-config", Value: `{"enable_flashcomm1":false}`},
		{Op: OpMergeJSON, Name: "--compilation-config", Value: `{"cudagraph_mode":"FULL_DECODE_ONLY","cudagraph_capture_sizes":[25]}`, Create: true},
	}
	diff, err := s.Diff(edits)
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(diff, "--- a/field-report-1.sh\n+++ b/field-report-1.sh\n@@ "), diff)
	orig := s.Text()
	got, err := testutil.ApplyUnifiedDiff(orig, diff)
	require.NoError(t, err)
	want, err := s.Apply(edits)
	require.NoError(t, err)
	require.Equal(t, want, got)
	require.NotContains(t, got, "--enable-expert-parallel")
	require.NotContains(t, got, "FLASHCOMM1")
	require.Contains(t, got, `--compilation-config '{"cudagraph_mode":"FULL_DECODE_ONLY","cudagraph_capture_sizes":[25]}'`)
	after, err := Parse("after.sh", got)
	require.NoError(t, err)
	f := facts(t, after)
	require.Equal(t, false, f["expert_parallel"].Value)
	require.Equal(t, []int{25}, f["capture_sizes"].Value)
	require.Equal(t, "FULL_DECODE_ONLY", f["cudagraph_mode"].Value)
	_, fc1 := f["flashcomm1"]
	require.False(t, fc1)
	// every other line is kept
	require.Equal(t, strings.Count(orig, "\n")-2, strings.Count(got, "\n"))

	// and the system patch tool agrees
	if _, err := exec.LookPath("patch"); err == nil {
		dir := t.TempDir()
		require.NoError(t, os.WriteFile(filepath.Join(dir, "field-report-1.sh"), []byte(orig), 0o644))
		cmd := exec.Command("patch", "-p1", "--no-backup-if-mismatch")
		cmd.Dir = dir
		cmd.Stdin = strings.NewReader(diff)
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, string(out))
		b, err := os.ReadFile(filepath.Join(dir, "field-report-1.sh"))
		require.NoError(t, err)
		require.Equal(t, got, string(b))
	}
}

func TestEdits(t *testing.T) {
	src := "export A=1\nexport B=2 C=3\nvllm serve m --x 1 --flag --y=2\n"
	s, err := Parse("s.sh", src)
	require.NoError(t, err)
	for _, c := range []struct {
		e    Edit
		want string
	}{
		{Edit{Op: OpRemoveFlag, Name: "--flag"}, "export A=1\nexport B=2 C=3\nvllm serve m --x 1 --y=2\n"},
		{Edit{Op: OpRemoveFlag, Name: "--absent"}, src},
		{Edit{Op: OpSetFlag, Name: "--y", Value: "3"}, "export A=1\nexport B=2 C=3\nvllm serve m --x 1 --flag --y=3\n"},
		{Edit{Op: OpSetFlag, Name: "--z", Value: "{\"a\": 1}"}, "export A=1\nexport B=2 C=3\nvllm serve m --x 1 --flag --y=2 \\\n  --z '{\"a\": 1}'\n"},
		{Edit{Op: OpUnsetEnv, Name: "A"}, "export B=2 C=3\nvllm serve m --x 1 --flag --y=2\n"},
		{Edit{Op: OpUnsetEnv, Name: "B"}, "export A=1\nexport C=3\nvllm serve m --x 1 --flag --y=2\n"},
		{Edit{Op: OpSetEnv, Name: "C", Value: "9"}, "export A=1\nexport B=2 C=9\nvllm serve m --x 1 --flag --y=2\n"},
		{Edit{Op: OpSetEnv, Name: "D", Value: "x y"}, "export A=1\nexport B=2 C=3\nexport D='x y'\nvllm serve m --x 1 --flag --y=2\n"},
		{Edit{Op: OpMergeJSON, Name: "--cc", Value: `{"k":[1]}`}, src},
		{Edit{Op: OpMergeJSON, Name: "--cc", Value: `{"k":[1]}`, Create: true}, "export A=1\nexport B=2 C=3\nvllm serve m --x 1 --flag --y=2 \\\n  --cc '{\"k\":[1]}'\n"},
	} {
		got, err := s.Apply([]Edit{c.e})
		require.NoError(t, err, c.e.String())
		require.Equal(t, c.want, got, c.e.String())
		if got != src {
			d, err := s.Diff([]Edit{c.e})
			require.NoError(t, err)
			applied, err := testutil.ApplyUnifiedDiff(src, d)
			require.NoError(t, err)
			require.Equal(t, got, applied)
		}
	}
	_, err = s.Apply([]Edit{{Op: "rename_flag", Name: "--x"}})
	require.ErrorContains(t, err, `unknown edit "rename_flag"`)
}

func TestMergeJSONKeepsOrder(t *testing.T) {
	v, err := mergeJSON(`{"a": 1, "cudagraph_capture_sizes": [1, 2], "z": {"q": true}}`, `{"cudagraph_mode":"FULL_DECODE_ONLY","cudagraph_capture_sizes":[25]}`)
	require.NoError(t, err)
	require.Equal(t, `{"cudagraph_mode":"FULL_DECODE_ONLY","cudagraph_capture_sizes":[25],"a":1,"z":{"q":true}}`, v)
	_, err = mergeJSON(`[1]`, `{"a":1}`)
	require.Error(t, err)
}

// A script saved with Windows line endings: the diff must apply to the
// file as it is on disk (patch refuses hunks whose line endings differ),
// and lines the edits add must use the script's own line ending.
func TestCRLFScriptDiffApplies(t *testing.T) {
	b, err := os.ReadFile(fixture)
	require.NoError(t, err)
	orig := strings.ReplaceAll(string(b), "\n", "\r\n")
	s, err := Parse("crlf.sh", orig)
	require.NoError(t, err)
	require.Equal(t, orig, s.Text())
	require.Equal(t, 25, facts(t, s)["max_num_seqs"].Value)
	edits := []Edit{
		{Op: OpRemoveFlag, Name: "--enable-expert-parallel"},
		{Op: OpSetEnv, Name: "HCCL_BUFFSIZE", Value: "1024"},
		{Op: OpSetEnv, Name: "NEW_VAR", Value: "1"},
		{Op: OpMergeJSON, Name: "--additional-config", Value: `{"enable_flashcomm1":false}`, Create: true},
	}
	got, err := s.Apply(edits)
	require.NoError(t, err)
	require.NotContains(t, strings.ReplaceAll(got, "\r\n", ""), "\n", "every line ends in CRLF")
	require.Contains(t, got, "export NEW_VAR=1\r\n")
	require.Contains(t, got, "export HCCL_BUFFSIZE=1024\r\n")
	diff, err := s.Diff(edits)
	require.NoError(t, err)
	if _, err := exec.LookPath("patch"); err == nil {
		dir := t.TempDir()
		require.NoError(t, os.WriteFile(filepath.Join(dir, "crlf.sh"), []byte(orig), 0o644))
		cmd := exec.Command("patch", "-p1", "--no-backup-if-mismatch")
		cmd.Dir = dir
		cmd.Stdin = strings.NewReader(diff)
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, string(out))
		b, err := os.ReadFile(filepath.Join(dir, "crlf.sh"))
		require.NoError(t, err)
		require.Equal(t, got, string(b))
	}
}

// `--flag \` with its value on the next line is valid shell: editing the
// flag must work (it failed the rule, exit 3, and lost the finding).
func TestFlagValueOnNextLine(t *testing.T) {
	src := `vllm serve /m --max-num-seqs 25 \
  --compilation-config \
    '{"cudagraph_capture_sizes":[1,2,4]}' \
  --additional-config \
    '{"enable_flashcomm1":true}'
echo started
`
	s, err := Parse("next.sh", src)
	require.NoError(t, err)
	got, err := s.Apply([]Edit{{Op: OpMergeJSON, Name: "--compilation-config", Value: `{"cudagraph_capture_sizes":[25]}`}})
	require.NoError(t, err)
	require.Equal(t, `vllm serve /m --max-num-seqs 25 \
  --compilation-config \
    '{"cudagraph_capture_sizes":[25]}' \
  --additional-config \
    '{"enable_flashcomm1":true}'
echo started
`, got)

	// removing the last flag drops both its lines and the continuation before them
	got, err = s.Apply([]Edit{{Op: OpRemoveFlag, Name: "--additional-config"}})
	require.NoError(t, err)
	require.Equal(t, `vllm serve /m --max-num-seqs 25 \
  --compilation-config \
    '{"cudagraph_capture_sizes":[1,2,4]}'
echo started
`, got)

	// removing a middle one keeps the command continued
	got, err = s.Apply([]Edit{{Op: OpRemoveFlag, Name: "--compilation-config"}})
	require.NoError(t, err)
	require.Equal(t, `vllm serve /m --max-num-seqs 25 \
  --additional-config \
    '{"enable_flashcomm1":true}'
echo started
`, got)
	after, err := Parse("after.sh", got)
	require.NoError(t, err)
	require.Nil(t, after.Serve.Lookup("--compilation-config"))
	require.Equal(t, `{"enable_flashcomm1":true}`, after.Serve.Lookup("--additional-config").Value)
}

// The vLLM command as the quoted script of `bash -c` (the usual ending of
// a `docker run`): its flags are read, and edits stay inside the quotes,
// escaped for them.
func TestNestedServeCommand(t *testing.T) {
	src := `#!/bin/bash
docker run --rm -it --net=host \
  quay.io/ascend/vllm-ascend:v0.11.0 \
  bash -c "export OMP_NUM_THREADS=1 && vllm serve /models/Qwen3 --tensor-parallel-size 8 \
    --enable-expert-parallel --max-num-seqs 25"
`
	s, err := Parse("docker.sh", src)
	require.NoError(t, err)
	require.NotNil(t, s.Serve)
	f := facts(t, s)
	require.Equal(t, 8, f["tp"].Value)
	require.Equal(t, 25, f["max_num_seqs"].Value)
	require.Equal(t, true, f["expert_parallel"].Value)
	require.Contains(t, f["expert_parallel"].Source, "docker.sh:5")
	require.Equal(t, "/models/Qwen3", f["model"].Value)

	edits := []Edit{
		{Op: OpRemoveFlag, Name: "--enable-expert-parallel"},
		{Op: OpMergeJSON, Name: "--compilation-config", Value: `{"cudagraph_capture_sizes":[25]}`, Create: true},
		{Op: OpSetFlag, Name: "--max-num-seqs", Value: "32"},
	}
	got, err := s.Apply(edits)
	require.NoError(t, err)
	require.Equal(t, `#!/bin/bash
docker run --rm -it --net=host \
  quay.io/ascend/vllm-ascend:v0.11.0 \
  bash -c "export OMP_NUM_THREADS=1 && vllm serve /models/Qwen3 --tensor-parallel-size 8 \
    --max-num-seqs 32 --compilation-config '{\"cudagraph_capture_sizes\":[25]}'"
`, got)
	after, err := Parse("after.sh", got)
	require.NoError(t, err)
	require.Equal(t, `{"cudagraph_capture_sizes":[25]}`, after.Serve.Lookup("--compilation-config").Value)
	require.Nil(t, after.Serve.Lookup("--enable-expert-parallel"))

	// single-quoted: a JSON value needs no escaping but its own quotes do
	s, err = Parse("sq.sh", `sh -c 'vllm serve /m --enable-expert-parallel'`+"\n")
	require.NoError(t, err)
	got, err = s.Apply([]Edit{{Op: OpMergeJSON, Name: "--additional-config", Value: `{"a":1}`, Create: true}})
	require.NoError(t, err)
	require.Equal(t, `sh -c 'vllm serve /m --enable-expert-parallel --additional-config '\''{"a":1}'\'''`+"\n", got)
	after, err = Parse("after.sh", got)
	require.NoError(t, err)
	require.Equal(t, `{"a":1}`, after.Serve.Lookup("--additional-config").Value)
}

// An export inside `bash -c "..."` shares its line with the outer
// command: unsetting it must not delete that line.
func TestNestedUnsetEnvKeepsLine(t *testing.T) {
	s, err := Parse("n.sh", `bash -c "export VLLM_ASCEND_ENABLE_FLASHCOMM1=1 && vllm serve /m --max-num-seqs 4"`+"\n")
	require.NoError(t, err)
	got, err := s.Apply([]Edit{{Op: OpUnsetEnv, Name: "VLLM_ASCEND_ENABLE_FLASHCOMM1"}})
	require.NoError(t, err)
	require.Contains(t, got, "vllm serve /m --max-num-seqs 4")
	require.NotContains(t, got, "FLASHCOMM1")
}

// vLLM's short flags -tp/-dp (vllm/engine/arg_utils.py) are read as the
// long ones; before, `-tp 8` was skipped and tp came from the profile only.
func TestShortParallelFlags(t *testing.T) {
	s, err := Parse("short.sh", "vllm serve /m -tp 4 -dp=2 --enable-expert-parallel\n")
	require.NoError(t, err)
	f := facts(t, s)
	require.Equal(t, 4, f["tp"].Value)
	require.Equal(t, 2, f["dp"].Value)
	require.Equal(t, true, f["expert_parallel"].Value)
	got, err := s.Apply([]Edit{{Op: OpSetFlag, Name: "--tensor-parallel-size", Value: "8"}, {Op: OpRemoveFlag, Name: "--data-parallel-size"}})
	require.NoError(t, err)
	require.Equal(t, "vllm serve /m --tensor-parallel-size 8 --enable-expert-parallel\n", got)
}

// Values written as shell variables the script assigns ($TP, ${MODEL},
// ${SEQS:-25}) are read through them; before, tp and max_num_seqs were
// silently dropped and the model fact was the text "${MODEL}".
func TestFactsExpandScriptVariables(t *testing.T) {
	s, err := Parse("vars.sh", `MODEL=/models/Qwen3
TP=8
vllm serve ${MODEL} --tensor-parallel-size $TP --max-num-seqs "${SEQS:-25}" --data-parallel-size $UNSET
`)
	require.NoError(t, err)
	f := facts(t, s)
	require.Equal(t, "/models/Qwen3", f["model"].Value)
	require.Equal(t, 8, f["tp"].Value)
	require.Contains(t, f["tp"].Source, "--tensor-parallel-size $TP = 8")
	require.Equal(t, 25, f["max_num_seqs"].Value)
	require.Equal(t, []int{1, 2, 4, 8, 16, 24}, f["capture_sizes"].Value)
	_, dp := f["dp"]
	require.False(t, dp, "an unassigned variable is unknown, not guessed")

	s, err = Parse("unknown.sh", "vllm serve $M\n")
	require.NoError(t, err)
	_, model := facts(t, s)["model"]
	require.False(t, model)
}

// In a `docker run ... bash -c "vllm serve ..."` script the environment
// is the container's -e options: they are facts, unset_env removes the
// option, and set_env adds one (an export on the host would not reach
// vLLM).
func TestDockerEnvOptions(t *testing.T) {
	src := `#!/bin/bash
docker run --rm --net=host \
  -e VLLM_ASCEND_ENABLE_FLASHCOMM1=1 \
  --env HCCL_BUFFSIZE=512 -e OMP_NUM_THREADS=1 \
  quay.io/ascend/vllm-ascend:v0.11.0rc0 \
  bash -c "vllm serve /m --enable-expert-parallel"
`
	s, err := Parse("d.sh", src)
	require.NoError(t, err)
	f := facts(t, s)
	require.Equal(t, true, f["flashcomm1"].Value)
	require.Contains(t, f["flashcomm1"].Source, "d.sh:3")
	require.Equal(t, "512", f["env.HCCL_BUFFSIZE"].Value)
	require.Equal(t, "v0.11.0rc0", f["vllm_ascend_version"].Value)
	got, err := s.Apply([]Edit{
		{Op: OpUnsetEnv, Name: "VLLM_ASCEND_ENABLE_FLASHCOMM1"},
		{Op: OpUnsetEnv, Name: "HCCL_BUFFSIZE"},
		{Op: OpSetEnv, Name: "OMP_NUM_THREADS", Value: "4"},
		{Op: OpSetEnv, Name: "TASK_QUEUE_ENABLE", Value: "2"},
	})
	require.NoError(t, err)
	require.Equal(t, `#!/bin/bash
docker run -e TASK_QUEUE_ENABLE=2 --rm --net=host \
  -e OMP_NUM_THREADS=4 \
  quay.io/ascend/vllm-ascend:v0.11.0rc0 \
  bash -c "vllm serve /m --enable-expert-parallel"
`, got)
	after, err := Parse("after.sh", got)
	require.NoError(t, err)
	f = facts(t, after)
	require.Equal(t, "2", f["env.TASK_QUEUE_ENABLE"].Value)
	_, fc1 := f["flashcomm1"]
	require.False(t, fc1)
}

// A script whose last line has no newline: the diff marks it, as diff(1)
// does, and patch applies it (it failed: 'Hunk #1 FAILED').
func TestNoTrailingNewlineDiffApplies(t *testing.T) {
	orig := "export VLLM_ASCEND_ENABLE_FLASHCOMM1=1\nvllm serve /m --enable-expert-parallel --max-num-seqs 25"
	s, err := Parse("n.sh", orig)
	require.NoError(t, err)
	edits := []Edit{
		{Op: OpUnsetEnv, Name: "VLLM_ASCEND_ENABLE_FLASHCOMM1"},
		{Op: OpRemoveFlag, Name: "--enable-expert-parallel"},
	}
	got, err := s.Apply(edits)
	require.NoError(t, err)
	require.Equal(t, "vllm serve /m --max-num-seqs 25", got)
	diff, err := s.Diff(edits)
	require.NoError(t, err)
	require.Equal(t, `--- a/n.sh
+++ b/n.sh
@@ -1,2 +1 @@
-export VLLM_ASCEND_ENABLE_FLASHCOMM1=1
-vllm serve /m --enable-expert-parallel --max-num-seqs 25
\ No newline at end of file
+vllm serve /m --max-num-seqs 25
\ No newline at end of file
`, diff)
	if _, err := exec.LookPath("patch"); err == nil {
		dir := t.TempDir()
		require.NoError(t, os.WriteFile(filepath.Join(dir, "n.sh"), []byte(orig), 0o644))
		cmd := exec.Command("patch", "-p1", "--no-backup-if-mismatch")
		cmd.Dir = dir
		cmd.Stdin = strings.NewReader(diff)
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, string(out))
		b, err := os.ReadFile(filepath.Join(dir, "n.sh"))
		require.NoError(t, err)
		require.Equal(t, got, string(b))
	}
}

// Several commands on one line: unsetting one export keeps the others,
// and a flag added to a vllm serve followed by `&& ...` or a redirection
// goes after its last word (a new continuation line made it an argument
// of echo, or of the file after `&`).
func TestEditsOnSharedLines(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		{"export A=\"x y\"; export B=2\nvllm serve /m\n", "export B=2\nvllm serve /m \\\n  --max-num-seqs 32\n"},
		{"cd /w; export A=1 && vllm serve /m\n", "cd /w; vllm serve /m \\\n  --max-num-seqs 32\n"},
		{"vllm serve /m --enable-expert-parallel && echo ok\n", "vllm serve /m --max-num-seqs 32 && echo ok\n"},
		{"nohup vllm serve /m --enable-expert-parallel > serve.log 2>&1 &\n", "nohup vllm serve /m --max-num-seqs 32 > serve.log 2>&1 &\n"},
		{"vllm serve /m --enable-expert-parallel\n", "vllm serve /m \\\n  --max-num-seqs 32\n"},
	} {
		s, err := Parse("s.sh", c.src)
		require.NoError(t, err)
		got, err := s.Apply([]Edit{{Op: OpUnsetEnv, Name: "A"}, {Op: OpRemoveFlag, Name: "--enable-expert-parallel"}, {Op: OpSetFlag, Name: "--max-num-seqs", Value: "32"}})
		require.NoError(t, err, c.src)
		require.Equal(t, c.want, got, c.src)
	}
	// a redirection is not a flag value nor a word of the command
	s, err := Parse("r.sh", "vllm serve /m --max-num-seqs 8 >>serve.log 2>&1\n")
	require.NoError(t, err)
	require.Equal(t, "8", s.Serve.Lookup("--max-num-seqs").Value)
	require.Equal(t, 8, facts(t, s)["max_num_seqs"].Value)
}

const twoServes = "../../testdata/deploy/prefill-decode.sh"

// A script that starts two servers (prefill at lines 5-9, decode at 11-15,
// with FLASHCOMM1 turned off in between): the last one is read by default
// and the warning names both; Select picks the other by any of its lines,
// and then its facts (its own flags and the environment it starts with)
// and its edits are the ones used, never the other command's.
func TestSeveralServeCommands(t *testing.T) {
	s, err := ReadFile(twoServes)
	require.NoError(t, err)
	require.Len(t, s.Serves, 2)
	require.Equal(t, []string{"5-9", "11-15"}, []string{s.Serves[0].Lines(), s.Serves[1].Lines()})
	require.Same(t, s.Serves[1], s.Serve)
	require.False(t, s.Selected)
	require.Equal(t, twoServes+" starts 2 `vllm serve` commands (lines 5-9, 11-15): the facts and the diff use the last one, at lines 11-15 (/models/Qwen3-235B-A22B); their flags are not used, and a fix to an environment variable changes its assignment, which every command after it sees", s.Warning())
	f := facts(t, s)
	require.Equal(t, 25, f["max_num_seqs"].Value)
	require.Equal(t, twoServes+":13 (--max-num-seqs 25)", f["max_num_seqs"].Source)
	require.Equal(t, false, f["expert_parallel"].Value)
	require.Equal(t, false, f["flashcomm1"].Value)
	require.Equal(t, twoServes+":10 (VLLM_ASCEND_ENABLE_FLASHCOMM1=0)", f["flashcomm1"].Source)
	require.Equal(t, "FULL_DECODE_ONLY", f["cudagraph_mode"].Value)

	data, err := os.ReadFile(twoServes)
	require.NoError(t, err)
	src := string(data)
	lines := strings.Split(src, "\n")
	fix := []Edit{{Op: OpSetFlag, Name: "--max-num-seqs", Value: "32"}, {Op: OpRemoveFlag, Name: "--enable-expert-parallel"},
		{Op: OpUnsetEnv, Name: "VLLM_ASCEND_ENABLE_FLASHCOMM1"}}
	// the decode command: its own --max-num-seqs; it has no
	// --enable-expert-parallel to drop; its FLASHCOMM1 is line 10's
	got, err := s.Apply(fix)
	require.NoError(t, err)
	want := append(append(append([]string{}, lines[:9]...), lines[10:12]...), "  --max-num-seqs 32 \\")
	want = append(want, lines[13:]...)
	require.Equal(t, strings.Join(want, "\n"), got)

	// the prefill command, picked by a line inside it
	require.NoError(t, s.Select(7))
	require.True(t, s.Selected)
	require.Same(t, s.Serves[0], s.Serve)
	require.Contains(t, s.Warning(), "the facts and the diff use the one chosen, at lines 5-9")
	f = facts(t, s)
	require.Equal(t, 16, f["max_num_seqs"].Value)
	require.Equal(t, twoServes+":7 (--max-num-seqs 16)", f["max_num_seqs"].Source)
	require.Equal(t, true, f["expert_parallel"].Value)
	require.Equal(t, true, f["flashcomm1"].Value, "line 10 comes after it")
	require.Equal(t, twoServes+":3 (VLLM_ASCEND_ENABLE_FLASHCOMM1=1)", f["flashcomm1"].Source)
	_, has := f["cudagraph_mode"]
	require.False(t, has, "the decode command's --compilation-config is not read")
	got, err = s.Apply(fix)
	require.NoError(t, err)
	want = append(append([]string{}, lines[:2]...), lines[3:6]...)
	want = append(want, "  --max-num-seqs 32 \\")
	want = append(want, lines[8:]...)
	require.Equal(t, strings.Join(want, "\n"), got)
	d, err := s.Diff(fix)
	require.NoError(t, err)
	applied, err := testutil.ApplyUnifiedDiff(src, d)
	require.NoError(t, err)
	require.Equal(t, got, applied)
	require.Equal(t, strings.Join(lines[9:], "\n"), strings.Join(strings.Split(got, "\n")[7:], "\n"), "the decode command is untouched")

	err = s.Select(10)
	require.EqualError(t, err, twoServes+": no `vllm serve` command spans line 10 (its commands are at lines 5-9, 11-15)")
	require.Same(t, s.Serves[0], s.Serve, "a failed Select changes nothing")

	one, err := Parse("one.sh", "vllm serve m --x 1\n")
	require.NoError(t, err)
	require.Equal(t, "", one.Warning())
	require.Len(t, one.Serves, 1)

}

// cudagraph_mode takes vLLM's CUDAGraphMode names in any case (vLLM reads
// CUDAGraphMode[value.upper()]); anything else is set apart with its line,
// not taken as a fact.
func TestCUDAGraphModeChecked(t *testing.T) {
	s, err := Parse("serve.sh", "export X=1\nvllm serve m \\\n  --compilation-config '{\"cudagraph_mode\":\"full_decode_only\",\"cudagraph_capture_sizes\":[8]}'\n")
	require.NoError(t, err)
	f := facts(t, s)
	require.Equal(t, "FULL_DECODE_ONLY", f["cudagraph_mode"].Value)

	for _, mode := range []string{`"FULL_DECODE"`, `"EAGER"`, `2`, `""`} {
		s, err := Parse("serve.sh", "export X=1\nvllm serve m \\\n  --compilation-config '{\"cudagraph_mode\":"+mode+",\"cudagraph_capture_sizes\":[8]}'\n")
		require.NoError(t, err)
		valid, invalid := s.FactsChecked()
		got := map[string]Fact{}
		for _, v := range valid {
			got[v.Name] = v
		}
		require.NotContains(t, got, "cudagraph_mode", mode)
		require.Equal(t, []int{8}, got["capture_sizes"].Value, "the rest of the config is still read")
		require.Len(t, invalid, 1, mode)
		require.Equal(t, "cudagraph_mode", invalid[0].Name)
		require.Equal(t, strings.Trim(mode, `"`), invalid[0].Value)
		require.Equal(t, "serve.sh:3 (--compilation-config)", invalid[0].Source)
		require.NotContains(t, s.Facts(), invalid[0])
	}
	for _, m := range CUDAGraphModes {
		got, ok := CUDAGraphMode(strings.ToLower(m))
		require.True(t, ok, m)
		require.Equal(t, m, got)
	}
}
