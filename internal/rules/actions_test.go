package rules

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/npuprof/npuprof/internal/fix"
)

// editor records what it is asked to diff; it refuses actions naming
// --broken.
type editor struct{ calls [][]fix.Action }

func (e *editor) DiffActions(a []fix.Action) (string, error) {
	e.calls = append(e.calls, a)
	for _, x := range a {
		if x.Name == "--broken" {
			return "", errors.New("cannot edit --broken")
		}
	}
	return "diff of " + fix.Combine(a)[0].String(), nil
}

const actionRules = `rules:
  - id: two-actions
    title: t
    severity: high
    when: metric("moe.cumsum.count") > 0
    fix: f
    edits:
      - {op: set_env, name: HCCL_BUFFSIZE, value: "{{ 256 * 2 }}"}
      - {op: code_change, name: Cumsum, value: fuse the routing Cumsum}
      - {op: remove_flag, name: --enforce-eager, if: "false"}
  - id: code-only
    title: t
    severity: medium
    when: "true"
    fix: f
    edits:
      - {op: code_change, name: image, value: upgrade vLLM-Ascend}
  - id: broken
    title: t
    severity: low
    when: "true"
    fix: f
    edits:
      - {op: set_flag, name: --broken, value: "1"}
`

// A rule's edits become actions; the diffs are made afterwards, from the
// script actions only, and a finding whose edits the script refuses keeps
// its actions but not its share of the combined diff.
func TestActionsThenDiffs(t *testing.T) {
	set, err := Parse("a.yaml", []byte(actionRules))
	require.NoError(t, err)
	fs, err := BuildFacts(analyzed(t, "ep-fc1-cumsum"), nil, nil)
	require.NoError(t, err)
	rep := Evaluate(set, &Input{Result: analyzed(t, "ep-fc1-cumsum"), Facts: fs})
	require.Len(t, rep.Findings, 3)
	byRule := map[string]Fired{}
	for _, f := range rep.Findings {
		byRule[f.Rule] = f
		require.Empty(t, f.Diff, "no diff before ApplyFixes")
	}
	setEnv := fix.Action{Kind: fix.SetEnv, Name: "HCCL_BUFFSIZE", Value: "512", Rule: "two-actions"}
	code := fix.Action{Kind: fix.CodeChange, Name: "Cumsum", Value: "fuse the routing Cumsum", Rule: "two-actions"}
	require.Equal(t, []fix.Action{setEnv, code}, byRule["two-actions"].Actions)

	ed := &editor{}
	rep.ApplyFixes(ed, nil)
	broken := fix.Action{Kind: fix.SetFlag, Name: "--broken", Value: "1", Rule: "broken"}
	image := fix.Action{Kind: fix.CodeChange, Name: "image", Value: "upgrade vLLM-Ascend", Rule: "code-only"}
	// code-only has no script action: not diffed alone; the combined diff
	// leaves broken's actions out
	require.Equal(t, [][]fix.Action{{setEnv, code}, {broken}, {setEnv, code, image}}, ed.calls)
	for _, f := range rep.Findings {
		byRule[f.Rule] = f
	}
	require.Equal(t, "diff of set_env HCCL_BUFFSIZE 512", byRule["two-actions"].Diff)
	require.Empty(t, byRule["code-only"].Diff)
	require.Equal(t, "cannot edit --broken", byRule["broken"].DiffError)
	require.Equal(t, "diff of set_env HCCL_BUFFSIZE 512", rep.Diff)
	require.Empty(t, rep.Failed())
	require.Len(t, rep.Actions(), 4)

	_, err = Parse("b.yaml", []byte("rules:\n  - id: x\n    title: t\n    severity: low\n    when: \"true\"\n    fix: f\n    edits:\n      - {op: code_change, name: image}\n"))
	require.ErrorContains(t, err, "edit code_change: missing value")
}
