package deploy

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/npuprof/npuprof/internal/testutil"
)

// The script: a command substitution in a flag value. The old
// tokenizer split the command at the `;` inside $(...): expert parallel
// was read as absent, an added flag went inside the substitution and a
// merge added a second --additional-config.
func TestCommandSubstitutionValue(t *testing.T) {
	src := "vllm serve /m --tensor-parallel-size $(echo 4; true) --enable-expert-parallel \\\n" +
		"  --additional-config '{\"enable_flashcomm1\":true}'\n"
	s, err := Parse("s.sh", src)
	require.NoError(t, err)
	f := facts(t, s)
	require.Equal(t, true, f["expert_parallel"].Value)
	require.Equal(t, true, f["flashcomm1"].Value)
	require.NotContains(t, f, "tp", "a value only running the script gives is unknown")
	require.Equal(t, []string{"s.sh:1: --tensor-parallel-size $(echo 4; true): the command substitution $(echo 4; true) is not run: " +
		"the value of --tensor-parallel-size is unknown, and so are the facts it sets"}, s.Unread())

	got, err := s.Apply([]Edit{
		{Op: OpMergeJSON, Name: "--additional-config", Value: `{"enable_flashcomm1":false}`, Create: true},
		{Op: OpSetFlag, Name: "--max-num-seqs", Value: "32"},
		{Op: OpRemoveFlag, Name: "--enable-expert-parallel"},
	})
	require.NoError(t, err)
	require.Equal(t, "vllm serve /m --tensor-parallel-size $(echo 4; true) \\\n"+
		"  --additional-config '{\"enable_flashcomm1\":false}' \\\n  --max-num-seqs 32\n", got)
	diff, err := s.Diff([]Edit{{Op: OpMergeJSON, Name: "--additional-config", Value: `{"enable_flashcomm1":false}`, Create: true}})
	require.NoError(t, err)
	applied, err := testutil.ApplyUnifiedDiff(src, diff)
	require.NoError(t, err)
	require.Equal(t, 1, strings.Count(applied, "--additional-config"), "merged into, never duplicated")
}

// Each construct only running the script evaluates makes the fact it
// feeds unknown, and the warning names it.
func TestUnknownExpansionsNamed(t *testing.T) {
	for _, c := range []struct{ value, what string }{
		{"$((2*2))", "the arithmetic expansion $((2*2))"},
		{"`nproc`", "the command substitution `nproc`"},
		{"${TP:0:1}", "the expansion ${TP:0:1}"},
		{"${#TP}", "the expansion ${#TP}"},
		{`"$(nproc)"`, "the command substitution $(nproc)"},
		{"$1", "the expansion $1"},
	} {
		s, err := Parse("s.sh", "TP=8\nvllm serve /m --tensor-parallel-size "+c.value+" --max-num-seqs 4\n")
		require.NoError(t, err, c.value)
		f := facts(t, s)
		require.NotContains(t, f, "tp", c.value)
		require.Equal(t, 4, f["max_num_seqs"].Value, c.value)
		require.Equal(t, false, f["expert_parallel"].Value, c.value)
		require.Equal(t, []string{"s.sh:2: --tensor-parallel-size " + c.value + ": " + c.what +
			" is not run: the value of --tensor-parallel-size is unknown, and so are the facts it sets"}, s.Unread(), c.value)
	}
}

// A substitution standing as a word of its own may give any flag: no
// flag is then known to be absent. A variable assigned from one is
// unknown wherever it is used.
func TestOpaqueWordsAndVariables(t *testing.T) {
	s, err := Parse("s.sh", "export HCCL_BUFFSIZE=$(cat /etc/buf)\nTP=$(nproc)\nvllm serve /m -tp $TP $(cat extra-flags.txt) --max-num-seqs 8\n")
	require.NoError(t, err)
	f := facts(t, s)
	require.NotContains(t, f, "tp")
	require.NotContains(t, f, "expert_parallel", "$(cat extra-flags.txt) may hold it")
	require.NotContains(t, f, "env.HCCL_BUFFSIZE")
	require.Equal(t, 8, f["max_num_seqs"].Value)
	require.Equal(t, []string{
		"s.sh:1: HCCL_BUFFSIZE=$(cat /etc/buf): the command substitution $(cat /etc/buf) is not run (npuprof never runs the script): env.HCCL_BUFFSIZE is unknown",
		"s.sh:2: TP=$(nproc): the command substitution $(nproc) is not run (npuprof never runs the script): env.TP is unknown",
		"s.sh:3: -tp $TP: a variable the script does not assign: the value of --tensor-parallel-size is unknown, and so are the facts it sets",
		"s.sh:3: $(cat extra-flags.txt): the command substitution $(cat extra-flags.txt) is not run: the flags it gives are unread, so no flag is known to be absent",
	}, s.Unread())
	// nothing is merged into a value npuprof cannot see
	s, err = Parse("s.sh", "vllm serve /m --additional-config \"$(cat ac.json)\"\n")
	require.NoError(t, err)
	_, err = s.Apply([]Edit{{Op: OpMergeJSON, Name: "--additional-config", Value: `{"a":1}`, Create: true}})
	require.ErrorContains(t, err, "line 1: --additional-config: the command substitution $(cat ac.json) is not run, so its value is unknown")
}

// Variables are read as the script stands where the command runs: a
// later assignment is not seen, an earlier one is, ${VAR:-default} takes
// the default when VAR is unset or empty there.
func TestVariablesWhereDefined(t *testing.T) {
	s, err := Parse("s.sh", "TP=4\nvllm serve /m -tp $TP --max-num-seqs ${SEQS:-16} &\nTP=8\nSEQS=\nvllm serve /m -tp \"${TP}\" --max-num-seqs \"${SEQS:-25}\"\nTP=16\nSEQS=64\n")
	require.NoError(t, err)
	f := facts(t, s)
	require.Equal(t, 8, f["tp"].Value)
	require.Equal(t, `s.sh:5 (--tensor-parallel-size ${TP} = 8)`, f["tp"].Source)
	require.Equal(t, 25, f["max_num_seqs"].Value)
	require.NoError(t, s.Select(2))
	f = facts(t, s)
	require.Equal(t, 4, f["tp"].Value)
	require.Equal(t, 16, f["max_num_seqs"].Value)
	require.Empty(t, s.Unread())

	// a JSON flag given through a variable is merged into where it is used
	s, err = Parse("s.sh", "AC='{\"a\":1}'\nvllm serve /m --additional-config \"$AC\"\n")
	require.NoError(t, err)
	got, err := s.Apply([]Edit{{Op: OpMergeJSON, Name: "--additional-config", Value: `{"enable_flashcomm1":false}`, Create: true}})
	require.NoError(t, err)
	require.Equal(t, "AC='{\"a\":1}'\nvllm serve /m --additional-config '{\"enable_flashcomm1\":false,\"a\":1}'\n", got)
}

// Edits never land inside a substitution, whatever ends the command.
func TestEditsAroundSubstitutions(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		{"vllm serve /m --port $(( 8000 + 1 ))\n", "vllm serve /m --port $(( 8000 + 1 )) \\\n  --max-num-seqs 32\n"},
		{"vllm serve /m --port $(( 8000 + 1 )) && echo \"$(date; true)\"\n", "vllm serve /m --port $(( 8000 + 1 )) --max-num-seqs 32 && echo \"$(date; true)\"\n"},
		{"nohup vllm serve /m -tp `nproc` > $(date +%s).log 2>&1 &\n", "nohup vllm serve /m -tp `nproc` --max-num-seqs 32 > $(date +%s).log 2>&1 &\n"},
		{"bash -c \"vllm serve /m -tp $(nproc) --max-num-seqs 4\"\n", "bash -c \"vllm serve /m -tp $(nproc) --max-num-seqs 32\"\n"},
		{"bash -c \"vllm serve /m --max-num-seqs    4 --port $(get_port)\"\n", "bash -c \"vllm serve /m --max-num-seqs 32 --port $(get_port)\"\n"},
		{"if true; then\n  vllm serve /m --port \"$(get_port)\" # comment\nfi\n", "if true; then\n  vllm serve /m --port \"$(get_port)\" \\\n  --max-num-seqs 32 # comment\nfi\n"},
	} {
		s, err := Parse("s.sh", c.src)
		require.NoError(t, err, c.src)
		got, err := s.Apply([]Edit{{Op: OpSetFlag, Name: "--max-num-seqs", Value: "32"}})
		require.NoError(t, err, c.src)
		require.Equal(t, c.want, got, c.src)
		after, err := Parse("after.sh", got)
		require.NoError(t, err)
		require.Equal(t, 32, facts(t, after)["max_num_seqs"].Value, c.src)
	}
}

// A CRLF script with continuations, a substitution, `docker run -e` and
// `bash -c '...'`: facts, edits and the diff keep its line endings.
func TestCRLFDockerScript(t *testing.T) {
	src := strings.ReplaceAll(`#!/bin/bash
PORT=${PORT:-8000}
docker run --rm -e VLLM_ASCEND_ENABLE_FLASHCOMM1=1 \
  -e HOST_ID=$(hostname) \
  quay.io/ascend/vllm-ascend:v0.11.0 \
  bash -c 'vllm serve /m --port 8000 --enable-expert-parallel \
    --additional-config '\''{"enable_flashcomm1":true}'\'''
`, "\n", "\r\n")
	s, err := Parse("d.sh", src)
	require.NoError(t, err)
	f := facts(t, s)
	require.Equal(t, true, f["expert_parallel"].Value)
	require.Equal(t, true, f["flashcomm1"].Value)
	require.Equal(t, "d.sh:7 (--additional-config enable_flashcomm1)", f["flashcomm1"].Source)
	require.Equal(t, "d.sh:3 (export)", f["env.VLLM_ASCEND_ENABLE_FLASHCOMM1"].Source)
	require.NotContains(t, f, "env.HOST_ID")
	require.Equal(t, "8000", f["env.PORT"].Value)
	require.Equal(t, "3-7", s.Serve.Lines())
	edits := []Edit{
		{Op: OpUnsetEnv, Name: "VLLM_ASCEND_ENABLE_FLASHCOMM1"},
		{Op: OpMergeJSON, Name: "--additional-config", Value: `{"enable_flashcomm1":false}`},
		{Op: OpRemoveFlag, Name: "--enable-expert-parallel"},
		{Op: OpSetFlag, Name: "--max-num-seqs", Value: "32"},
	}
	got, err := s.Apply(edits)
	require.NoError(t, err)
	require.Equal(t, strings.ReplaceAll(`#!/bin/bash
PORT=${PORT:-8000}
docker run --rm \
  -e HOST_ID=$(hostname) \
  quay.io/ascend/vllm-ascend:v0.11.0 \
  bash -c 'vllm serve /m --port 8000 \
    --additional-config '\''{"enable_flashcomm1":false}'\'' --max-num-seqs 32'
`, "\n", "\r\n"), got)
	diff, err := s.Diff(edits)
	require.NoError(t, err)
	applied, err := testutil.ApplyUnifiedDiff(src, diff)
	require.NoError(t, err)
	require.Equal(t, got, applied)
}
