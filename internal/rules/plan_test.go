package rules

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/npuprof/npuprof/internal/fix"
	"github.com/npuprof/npuprof/internal/rules/rulefmt"
	"github.com/stretchr/testify/require"
)

func loadUser(t *testing.T, yaml string) error {
	t.Helper()
	path := filepath.Join(t.TempDir(), "team.yaml")
	require.NoError(t, os.WriteFile(path, []byte(yaml), 0o644))
	_, err := Load(path)
	return err
}

// An unknown rule id in requires/conflicts/supersedes and a cycle of
// requires are load errors with file:line.
func TestPlanRefsCheckedAtLoad(t *testing.T) {
	err := loadUser(t, `rules:
  - id: team-a
    title: a
    when: "true"
    fix: a
    requires:
      - rule: no-such-rule
`)
	require.Error(t, err)
	require.Regexp(t, `team\.yaml:7: rule team-a: unknown rule id "no-such-rule"`, err.Error())

	err = loadUser(t, `rules:
  - id: team-a
    title: a
    when: "true"
    fix: a
    requires: [team-b]
  - id: team-b
    title: b
    when: "true"
    fix: b
    requires: [team-a]
`)
	require.Error(t, err)
	require.Regexp(t, `team\.yaml:2: rule team-a: requires form a cycle: team-a -> team-b -> team-a`, err.Error())

	err = loadUser(t, `rules:
  - id: team-a
    title: a
    when: "true"
    fix: a
    transforms:
      - kind: no_such
    conflicts: [comm-ep-flashcomm]
`)
	require.Error(t, err)
	require.Contains(t, err.Error(), `transform kind "no_such" (expected one of remove_kernels, replace_collectives, rebatch, eager_to_graph, rebalance_experts)`)
}

var reJSONKey = regexp.MustCompile(`"([A-Za-z_]+)"\s*:`)

// target is what one built-in edit touches, with its literal value.
type editTarget struct{ target, value string }

func editTargets(e rulefmt.EditSpec) []editTarget {
	val := ""
	if e.Value != nil {
		val = e.Value.Source
	}
	switch fix.Kind(e.Op) {
	case fix.MergeJSON:
		var out []editTarget
		for _, m := range reJSONKey.FindAllStringSubmatch(val, -1) {
			out = append(out, editTarget{e.Name + " key " + m[1], e.Op + " " + val})
		}
		return out
	case fix.SetEnv, fix.UnsetEnv:
		return []editTarget{{"env " + e.Name, e.Op + " " + val}}
	case fix.CodeChange:
		return nil
	}
	return []editTarget{{"flag " + e.Name, e.Op + " " + val}}
}

// Every pair of built-in rules whose edits touch one target (a flag, an
// environment variable, a JSON key) in different ways declares how they
// relate (conflicts or supersedes), so the plan never holds both edits.
func TestBuiltinEditConflictsDeclared(t *testing.T) {
	set := builtin(t)
	related := func(a, b *Rule) bool {
		for _, list := range [][]rulefmt.RefSpec{a.Conflicts, a.Supersedes, b.Conflicts, b.Supersedes} {
			for _, r := range list {
				if r.Rule == a.ID || r.Rule == b.ID {
					return true
				}
			}
		}
		return false
	}
	for i, a := range set.Rules {
		for _, b := range set.Rules[i+1:] {
			for _, ea := range a.Edits {
				for _, eb := range b.Edits {
					for _, ta := range editTargets(ea) {
						for _, tb := range editTargets(eb) {
							if ta.target != tb.target || sameKeyValue(ta, tb) || related(a, b) {
								continue
							}
							t.Errorf("%s and %s both edit %s differently (%s / %s) and declare neither conflicts nor supersedes", a.ID, b.ID, ta.target, ta.value, tb.value)
						}
					}
				}
			}
		}
	}
}

// sameKeyValue: two merge_json edits that set a key to the same literal.
func sameKeyValue(a, b editTarget) bool {
	key := a.target[strings.LastIndex(a.target, " ")+1:]
	re := regexp.MustCompile(`"` + key + `"\s*:\s*("[^"]*"|[^,}]+)`)
	ma, mb := re.FindStringSubmatch(a.value), re.FindStringSubmatch(b.value)
	if ma == nil || mb == nil {
		return a.value == b.value
	}
	return ma[1] == mb[1]
}

// A patch's moved paths and since are checked at load: each moved path
// has a file and the release it applies before, and the versions parse.
func TestPatchMovedSinceCheckedAtLoad(t *testing.T) {
	rule := func(extra string) string {
		return `rules:
  - id: team-a
    title: a
    when: "true"
    fix: a
    patches:
      - file: pkg/a.py
        scope: A.f
        set: {x: "0"}
` + extra
	}
	require.NoError(t, loadUser(t, rule("        since: v0.10.2rc1\n        moved: [{file: pkg/old/a.py, before: v0.12.0rc1}]\n")))
	err := loadUser(t, rule("        since: soon\n"))
	require.Error(t, err)
	require.Regexp(t, `team\.yaml:10:\d+: .*patch: since: `, err.Error())
	err = loadUser(t, rule("        moved: [{file: pkg/old/a.py}]\n"))
	require.Error(t, err)
	require.Regexp(t, `team\.yaml:10:\d+: .*patch: moved: expected file and before`, err.Error())
	err = loadUser(t, rule("        moved: [{file: pkg/old/a.py, before: later}]\n"))
	require.Error(t, err)
	require.Regexp(t, `team\.yaml:10:\d+: .*patch: moved: before: `, err.Error())
	require.NoError(t, loadUser(t, rule("        comments: {x: \"cumsum mode\"}\n")))
	err = loadUser(t, rule("        comments: {y: \"cumsum mode\"}\n"))
	require.Error(t, err)
	require.Regexp(t, `team\.yaml:10:\d+: .*patch: comments: y is not a name of set`, err.Error())
	err = loadUser(t, rule("        comments: [x]\n"))
	require.Error(t, err)
	require.Regexp(t, `team\.yaml:10:\d+: .*patch: comments: expected a mapping`, err.Error())
	err = loadUser(t, rule("        comments: {x: \"two\\nlines\"}\n"))
	require.Error(t, err)
	require.Regexp(t, `team\.yaml:10:\d+: .*patch: comments: x: expected one line`, err.Error())
	err = loadUser(t, rule("        moved: [{file: pkg/old/a.py, before: v1, when: x}]\n"))
	require.Error(t, err)
	require.Contains(t, err.Error(), "when")
}
