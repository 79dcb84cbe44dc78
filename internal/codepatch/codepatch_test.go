package codepatch

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/npuprof/npuprof/internal/fix"
	"github.com/npuprof/npuprof/internal/rules"
	"github.com/npuprof/npuprof/internal/testutil"
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

func spec() fix.PatchSpec { return parseSpec("") }

// parseSpec is the Cumsum patch of a rule file, with extra (YAML lines of
// the patch, indented as its keys) added to it.
func parseSpec(extra string) fix.PatchSpec {
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
`+extra))
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

// movedSpec is the built-in rule's patch: the file, where v0.10.2rc1 to
// v0.11.x keep it, and the first release it is for.
func movedSpec(t *testing.T) fix.PatchSpec {
	t.Helper()
	ps := parseSpec("        moved:\n          - {file: vllm_ascend/ops/moe/token_dispatcher.py, before: v0.12.0rc1}\n        since: v0.10.2rc1\n")
	require.Equal(t, []fix.MovedFile{{File: "vllm_ascend/ops/moe/token_dispatcher.py", Before: "v0.12.0rc1"}}, ps.Moved)
	require.Equal(t, "v0.10.2rc1", ps.Since)
	return ps
}

// resultDispatcher has the shape of TokenDispatcherWithAllGather from
// v0.13.0rc2 on (a few lines written for this test): the routing call,
// the group_list_type assignment, and a result object that passes
// group_list_type=group_list_type on.
const resultDispatcher = `class TokenDispatcherWithAllGather(MoETokenDispatcher):

    def token_dispatch(self, hidden_states, topk_ids, num_tokens):
        sorted_hidden_states, expanded_row_idx, expert_tokens, pertoken_scale = (
            torch.ops._C_ascend.npu_moe_init_routing_custom(
                hidden_states,
                topk_ids,
                active_num=num_tokens * self.top_k,
                expert_tokens_num_type=1,
                expert_tokens_num_flag=True,
            ))
        expert_tokens = expert_tokens.to(torch.int64)
        group_list_type = 1  # ` + "`count`" + ` mode
        return TokenDispatchResult(
            hidden_states=sorted_hidden_states,
            group_list=expert_tokens,
            group_list_type=group_list_type,
        )
`

// The keyword argument that passes the local on (group_list_type=
// group_list_type, in every release from v0.13.0rc2 to main) is left as it
// is: only the call's argument and the assignment change (the patch used
// to rewrite it to group_list_type=0 as well).
func TestPatchLeavesForwardedName(t *testing.T) {
	dir := t.TempDir()
	rel := "vllm_ascend/ops/fused_moe/token_dispatcher.py"
	writeTree(t, dir, rel, resultDispatcher)
	cp, err := Make(dir, movedSpec(t))
	require.NoError(t, err)
	require.Equal(t, []string{
		"-                expert_tokens_num_type=1,", "+                expert_tokens_num_type=0,",
		"-        group_list_type = 1  # `count` mode", "+        group_list_type = 0  # `count` mode",
	}, changedLines(cp.Diff))
}

// v0.10.2rc1 to v0.11.x keep the dispatcher in vllm_ascend/ops/moe/ (the
// shape of those releases: the routing op of torch_npu, a dict returned):
// the patch is of that file, in a checkout and in the package folder.
func TestPatchMovedFile(t *testing.T) {
	old := strings.NewReplacer(
		"torch.ops._C_ascend.npu_moe_init_routing_custom(", "torch_npu.npu_moe_init_routing_v2(",
		"return TokenDispatchResult(\n            hidden_states=sorted_hidden_states,\n            group_list=expert_tokens,\n            group_list_type=group_list_type,\n        )",
		"return {\n            \"group_list_type\": group_list_type,\n            \"group_list\": expert_tokens,\n        }",
	).Replace(resultDispatcher)
	require.NotEqual(t, resultDispatcher, old)
	for _, c := range []struct{ sub, rel string }{
		{"", "vllm_ascend/ops/moe/token_dispatcher.py"},
		{"vllm_ascend", "ops/moe/token_dispatcher.py"},
	} {
		dir := t.TempDir()
		writeTree(t, dir, "vllm_ascend/ops/moe/token_dispatcher.py", old)
		cp, err := Make(filepath.Join(dir, c.sub), movedSpec(t))
		require.NoError(t, err)
		require.Equal(t, c.rel, cp.File)
		require.Len(t, changedLines(cp.Diff), 4, cp.Diff)
	}
}

// A tree older than the patch (v0.10.1rc1 and before keep the dispatcher
// in vllm_ascend/ops/moe_dispatcher/ and route without
// expert_tokens_num_type) gets no patch: the error lists every path tried
// and says which releases the patch is for. A tree that already has the
// values says so, without that note.
func TestPatchOlderTreeSaysSince(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, "vllm_ascend/ops/moe_dispatcher/token_dispatcher.py", "class TokenDispatcherWithAllGather:\n    def token_dispatch(self):\n        group_list_type = 1\n")
	_, err := Make(dir, movedSpec(t))
	require.EqualError(t, err, "token_dispatcher.py not found under "+dir+
		" (tried vllm_ascend/ops/fused_moe/token_dispatcher.py, ops/fused_moe/token_dispatcher.py,"+
		" vllm_ascend/ops/moe/token_dispatcher.py, ops/moe/token_dispatcher.py)"+
		" (the patch is for vLLM-Ascend v0.10.2rc1 and later: an older tree does not have this code)")

	dir = t.TempDir()
	writeTree(t, dir, "vllm_ascend/ops/moe/token_dispatcher.py", strings.Replace(resultDispatcher, "expert_tokens_num_type=1,", "", 1))
	_, err = Make(dir, movedSpec(t))
	require.ErrorContains(t, err, "ops/moe/token_dispatcher.py: no expert_tokens_num_type= in TokenDispatcherWithAllGather.token_dispatch (the patch is for vLLM-Ascend v0.10.2rc1 and later")

	dir = t.TempDir()
	writeTree(t, dir, "vllm_ascend/ops/fused_moe/token_dispatcher.py", strings.NewReplacer("expert_tokens_num_type=1", "expert_tokens_num_type=0", "group_list_type = 1", "group_list_type = 0").Replace(resultDispatcher))
	_, err = Make(dir, movedSpec(t))
	require.EqualError(t, err, "vllm_ascend/ops/fused_moe/token_dispatcher.py: TokenDispatcherWithAllGather.token_dispatch already sets expert_tokens_num_type, group_list_type")
}

// With NPUPROF_VLLM_ASCEND_TAGS naming a folder of vllm-ascend trees, one
// per tag (DIR/v0.13.0/vllm_ascend/..., as `git archive TAG` writes
// them), the built-in rule's patch is made against each: from v0.10.2rc1
// on it changes exactly the two lines of TokenDispatcherWithAllGather.
// token_dispatch, in the checkout and in the package folder; an older tree
// gets the error that names v0.10.2rc1.
func TestPatchRealTags(t *testing.T) {
	root := os.Getenv("NPUPROF_VLLM_ASCEND_TAGS")
	if root == "" {
		testutil.Skip(t, "the Cumsum patch against vllm-ascend's own trees", "NPUPROF_VLLM_ASCEND_TAGS is not set (a folder of `git archive TAG vllm_ascend` trees, one per tag)")
	}
	set, err := rules.Load()
	require.NoError(t, err)
	var ps fix.PatchSpec
	for _, r := range set.Rules {
		if r.ID == "moe-routing-cumsum" {
			ps = r.Patches[0]
		}
	}
	tags, err := os.ReadDir(root)
	require.NoError(t, err)
	n := 0
	for _, e := range tags {
		tag := e.Name()
		if _, err := os.Stat(filepath.Join(root, tag, "vllm_ascend")); err != nil {
			continue
		}
		n++
		for _, dir := range []string{filepath.Join(root, tag), filepath.Join(root, tag, "vllm_ascend")} {
			cp, err := Make(dir, ps)
			if c, verr := rules.CompareVersions(tag, ps.Since); verr == nil && c < 0 {
				require.ErrorContains(t, err, "v0.10.2rc1 and later", tag)
				continue
			}
			require.NoError(t, err, tag)
			ch := changedLines(cp.Diff)
			require.Len(t, ch, 4, "%s\n%s", tag, cp.Diff)
			require.Regexp(t, `^-\s+expert_tokens_num_type=1,$`, ch[0], tag)
			require.Regexp(t, `^\+\s+expert_tokens_num_type=0,$`, ch[1], tag)
			require.Regexp(t, `^-\s+group_list_type = 1\b`, ch[2], tag)
			require.Regexp(t, `^\+\s+group_list_type = 0\b`, ch[3], tag)
		}
	}
	require.NotZero(t, n, "no vllm_ascend tree under %s", root)
}

// changedLines are a diff's removed and added lines.
func changedLines(diff string) []string {
	var out []string
	for _, l := range strings.Split(diff, "\n") {
		if (strings.HasPrefix(l, "-") || strings.HasPrefix(l, "+")) && !strings.HasPrefix(l, "---") && !strings.HasPrefix(l, "+++") {
			out = append(out, l)
		}
	}
	return out
}

// The built-in rule's patch gives the changed group_list_type line its own
// comment in place of the tree's ("`count` mode" described the old value);
// the argument line, which has none, stays without.
func TestPatchBuiltinReplacesComment(t *testing.T) {
	set, err := rules.Load()
	require.NoError(t, err)
	var ps fix.PatchSpec
	for _, r := range set.Rules {
		if r.ID == "moe-routing-cumsum" {
			ps = r.Patches[0]
		}
	}
	require.Contains(t, ps.Comments, "group_list_type")
	dir := t.TempDir()
	writeTree(t, dir, "vllm_ascend/ops/fused_moe/token_dispatcher.py", resultDispatcher)
	cp, err := Make(dir, ps)
	require.NoError(t, err)
	require.Equal(t, []string{
		"-                expert_tokens_num_type=1,", "+                expert_tokens_num_type=0,",
		"-        group_list_type = 1  # `count` mode", "+        group_list_type = 0  # " + ps.Comments["group_list_type"],
	}, changedLines(cp.Diff))
}

func TestWithComment(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"    x = 1  # count mode\n", "    x = 1  # new\n"},
		{"    x = 1\n", "    x = 1\n"},
		{"    x = 1 #old\r\n", "    x = 1  # new\r\n"},
		{"    f(a=0, s='#not a comment')  # old", "    f(a=0, s='#not a comment')  # new"},
		{`    f(a=0, s="it's \"#\"")`, `    f(a=0, s="it's \"#\"")`},
		{`    f(a=0, s="it's \"#\"") # old`, `    f(a=0, s="it's \"#\"")  # new`},
	} {
		require.Equal(t, c.want, withComment(c.in, "new"), c.in)
	}
}

// TreeVersion reads the version setuptools-scm writes into
// vllm_ascend/_version.py (both of its templates), from a checkout or the
// package folder; a tree without the file has none, one whose file has no
// version line is an error naming the file.
func TestTreeVersion(t *testing.T) {
	scm8 := "# file generated by setuptools-scm\nTYPE_CHECKING = False\nif TYPE_CHECKING:\n    version: str\n    __version__: str\n\n__version__ = version = '0.13.0rc2'\n__version_tuple__ = version_tuple = (0, 13, 0, 'rc2')\n"
	dir := t.TempDir()
	writeTree(t, dir, "vllm_ascend/_version.py", scm8)
	v, file, err := TreeVersion(dir)
	require.NoError(t, err)
	require.Equal(t, "0.13.0rc2", v)
	require.Equal(t, "vllm_ascend/_version.py", file)
	v, file, err = TreeVersion(filepath.Join(dir, "vllm_ascend"))
	require.NoError(t, err)
	require.Equal(t, "0.13.0rc2", v)
	require.Equal(t, "_version.py", file)

	dir = t.TempDir()
	writeTree(t, dir, "vllm_ascend/_version.py", "# coding: utf-8\nversion = \"0.11.0\"\n")
	v, _, err = TreeVersion(dir)
	require.NoError(t, err)
	require.Equal(t, "0.11.0", v)

	v, file, err = TreeVersion(t.TempDir())
	require.NoError(t, err)
	require.Empty(t, v)
	require.Empty(t, file)

	dir = t.TempDir()
	writeTree(t, dir, "vllm_ascend/_version.py", "VERSION_TUPLE = (0, 11)\n")
	_, _, err = TreeVersion(dir)
	require.EqualError(t, err, "vllm_ascend/_version.py: no version = '...' line")
}
