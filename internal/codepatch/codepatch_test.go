package codepatch

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/npuprof/npuprof/internal/fix"
	"github.com/npuprof/npuprof/internal/rules"
	"github.com/stretchr/testify/require"
)

// dispatcher is a small file shaped like vllm_ascend's token dispatcher
// (written for this test): two dispatchers, only one of which the fix
// touches.
const dispatcher = `import torch


class TokenDispatcherWithMC2:

    def token_dispatch(self, hidden_states, topk_ids):
        out = dispatch_v2(hidden_states, topk_ids, expert_token_nums_type=0)
        return {"group_list_type": 0, "out": out}


class TokenDispatcherWithAllGather:

    def __init__(self, num_experts):
        self.num_experts = num_experts

    def token_dispatch(self, hidden_states, topk_ids, num_tokens, top_k):
        sorted_hidden, expanded_idx, expert_tokens, _ = routing_op(
            hidden_states,
            topk_ids,
            active_num=num_tokens * top_k,
            expert_num=self.num_experts,
            expert_tokens_num_type=1,
            expert_tokens_num_flag=True,
        )
        group_list_type = 1  # count mode
        return {"group_list_type": group_list_type, "group_list": expert_tokens}

    def token_combine(self, hidden_states):
        expert_tokens_num_type = 1
        return hidden_states
`

func spec() fix.PatchSpec {
	set, err := rules.Parse("t.yaml", []byte(`rules:
  - id: team-patch
    title: t
    when: "true"
    fix: t
    patches:
      - file: vllm_ascend/ops/fused_moe/token_dispatcher.py
        scope: TokenDispatcherWithAllGather.token_dispatch
        set:
          expert_tokens_num_type: "0"
          group_list_type: "0"
`))
	if err != nil {
		panic(err)
	}
	return set.Rules[0].Patches[0]
}

func writeTree(t *testing.T, root, rel, text string) {
	t.Helper()
	p := filepath.Join(root, filepath.FromSlash(rel))
	require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
	require.NoError(t, os.WriteFile(p, []byte(text), 0o644))
}

// The Cumsum fix as a patch of a checkout: the two values of
// TokenDispatcherWithAllGather.token_dispatch change, nothing else does,
// the tree is left as it was, and patch -p1 applies the diff.
func TestPatchCheckout(t *testing.T) {
	dir := t.TempDir()
	rel := "vllm_ascend/ops/fused_moe/token_dispatcher.py"
	writeTree(t, dir, rel, dispatcher)
	cp, err := Make(dir, spec())
	require.NoError(t, err)
	require.Equal(t, rel, cp.File)
	require.Contains(t, cp.Diff, "--- a/"+rel+"\n+++ b/"+rel+"\n")
	require.Contains(t, cp.Diff, "-            expert_tokens_num_type=1,\n+            expert_tokens_num_type=0,\n")
	require.Contains(t, cp.Diff, "-        group_list_type = 1  # count mode\n+        group_list_type = 0  # count mode\n")
	changed := 0
	for _, l := range strings.Split(cp.Diff, "\n") {
		if (strings.HasPrefix(l, "-") || strings.HasPrefix(l, "+")) && !strings.HasPrefix(l, "---") && !strings.HasPrefix(l, "+++") {
			changed++
		}
	}
	require.Equal(t, 4, changed, cp.Diff)
	b, err := os.ReadFile(filepath.Join(dir, rel))
	require.NoError(t, err)
	require.Equal(t, dispatcher, string(b), "--source is only read")

	if _, err := exec.LookPath("patch"); err != nil {
		t.Skip("patch is not installed")
	}
	cmd := exec.Command("patch", "-p1")
	cmd.Dir, cmd.Stdin = dir, strings.NewReader(cp.Diff)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	b, _ = os.ReadFile(filepath.Join(dir, rel))
	require.Contains(t, string(b), "expert_tokens_num_type=0,")
	require.Contains(t, string(b), "expert_token_nums_type=0)") // the MC2 dispatcher as it was
	require.Contains(t, string(b), "        expert_tokens_num_type = 1\n", "token_combine untouched")
}

// DIR may be the installed package folder (vllm_ascend itself); a missing
// file, class, method or argument says which.
func TestPatchPackageFolderAndErrors(t *testing.T) {
	pkg := filepath.Join(t.TempDir(), "vllm_ascend")
	writeTree(t, pkg, "ops/fused_moe/token_dispatcher.py", dispatcher)
	cp, err := Make(pkg, spec())
	require.NoError(t, err)
	require.Equal(t, "ops/fused_moe/token_dispatcher.py", cp.File)

	_, err = Make(t.TempDir(), spec())
	require.ErrorContains(t, err, "token_dispatcher.py not found under")

	for _, c := range []struct{ text, want string }{
		{strings.Replace(dispatcher, "class TokenDispatcherWithAllGather", "class Other", 1), "no class TokenDispatcherWithAllGather"},
		{strings.Replace(dispatcher, "def token_dispatch(self, hidden_states, topk_ids, num_tokens", "def dispatch(self, hidden_states, topk_ids, num_tokens", 1), "no method token_dispatch in class TokenDispatcherWithAllGather"},
		{strings.Replace(dispatcher, "group_list_type = 1  # count mode", "pass", 1), "no group_list_type= in TokenDispatcherWithAllGather.token_dispatch"},
	} {
		dir := t.TempDir()
		writeTree(t, dir, "vllm_ascend/ops/fused_moe/token_dispatcher.py", c.text)
		_, err := Make(dir, spec())
		require.ErrorContains(t, err, c.want)
	}
}

// ruffDispatcher is the dispatcher as current vllm-ascend writes it (ruff
// format, v0.16.0rc1 and later): each argument on its own line and the
// signature closed by "):" or ") -> dict:" at the def's own indentation,
// a class header over several lines, and a default holding a bracket in a
// string.
const ruffDispatcher = `import torch


class TokenDispatcherWithMC2:
    def token_dispatch(
        self,
        hidden_states,
        topk_ids,
    ):
        out = dispatch_v2(hidden_states, topk_ids, expert_token_nums_type=0)
        return {"group_list_type": 0, "out": out}


class TokenDispatcherWithAllGather(
    MoETokenDispatcher,
):
    def __init__(self, num_experts):
        self.num_experts = num_experts

    def token_dispatch(
        self,
        hidden_states: torch.Tensor,
        topk_ids: torch.Tensor,
        num_tokens: int,
        top_k: int,
        note: str = "a ) in a string (",  # and ) in a comment
    ) -> dict:
        sorted_hidden, expanded_idx, expert_tokens, _ = routing_op(
            hidden_states,
            topk_ids,
            active_num=num_tokens * top_k,
            expert_num=self.num_experts,
            expert_tokens_num_type=1,
            expert_tokens_num_flag=True,
        )
        group_list_type = 1  # count mode
        return {"group_list_type": group_list_type, "group_list": expert_tokens}

    def token_combine(
        self,
        hidden_states,
    ):
        expert_tokens_num_type = 1
        return hidden_states
`

// On the ruff-formatted file the method's scope spans its multi-line
// signature: both values change (the scope used to end at the "):" line,
// and the patch said the argument was missing), token_combine and the MC2
// dispatcher do not, and patch -p1 applies the diff.
func TestPatchRuffFormattedSignature(t *testing.T) {
	dir := t.TempDir()
	rel := "vllm_ascend/ops/fused_moe/token_dispatcher.py"
	writeTree(t, dir, rel, ruffDispatcher)
	cp, err := Make(dir, spec())
	require.NoError(t, err)
	require.Contains(t, cp.Diff, "-            expert_tokens_num_type=1,\n+            expert_tokens_num_type=0,\n")
	require.Contains(t, cp.Diff, "-        group_list_type = 1  # count mode\n+        group_list_type = 0  # count mode\n")
	require.NotContains(t, cp.Diff, "+        expert_tokens_num_type = 0", "token_combine is another method")

	lines := strings.SplitAfter(ruffDispatcher, "\n")
	lo, hi, err := scope(lines, "TokenDispatcherWithAllGather.token_dispatch")
	require.NoError(t, err)
	require.Equal(t, "    def token_dispatch(\n", lines[lo])
	require.Equal(t, "    def token_combine(\n", lines[hi], "the scope ends where the next method starts")
	lo, hi, err = scope(lines, "TokenDispatcherWithAllGather")
	require.NoError(t, err)
	require.Equal(t, "class TokenDispatcherWithAllGather(\n", lines[lo])
	require.Equal(t, len(lines), hi, "the class runs to the end of the file, past its own ):")

	if _, err := exec.LookPath("patch"); err != nil {
		t.Skip("patch is not installed")
	}
	cmd := exec.Command("patch", "-p1")
	cmd.Dir, cmd.Stdin = dir, strings.NewReader(cp.Diff)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
}
