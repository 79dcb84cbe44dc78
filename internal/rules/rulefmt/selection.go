package rulefmt

import (
	"fmt"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/npuprof/npuprof/internal/errkind"
)

// Selection switches rules off: Disable names rules (or budgets) not to
// run, Only names the only rules to run (budgets are not affected), and
// NoBuiltin switches every built-in rule off. Source says where it was
// given ("--disable", "team.yaml"), for the disabled rules' reasons.
type Selection struct {
	Disable   []string
	Only      []string
	NoBuiltin bool
	Source    string
}

// label names where a key of the selection was given: the flag itself
// (--disable), or the rule file and its key (team.yaml disable:).
func (s Selection) label(key string) string {
	if strings.HasPrefix(s.Source, "--") {
		return s.Source
	}
	return s.Source + " " + key + ":"
}

// empty reports whether the selection switches nothing off.
func (s Selection) empty() bool { return len(s.Disable) == 0 && len(s.Only) == 0 && !s.NoBuiltin }

// Disabled returns why a rule or budget is switched off ("" when it runs).
func (s *Set) Disabled(id string) string { return s.disabled[id] }

// Select applies a selection to the loaded rules: an id that names no rule
// (or budget) is a usage error naming the closest ids. Selections add up: a
// rule any of them switches off is off, with the first reason.
func (s *Set) Select(sel Selection) error {
	if p := s.selectProblems(sel); len(p) > 0 {
		return errkind.List(errkind.Usage, p)
	}
	return nil
}

func (s *Set) selectProblems(sel Selection) []string {
	if sel.empty() {
		return nil
	}
	ids := s.ids()
	var bad []string
	check := func(what string, list []string) {
		for _, id := range list {
			if !contains(ids, id) {
				bad = append(bad, fmt.Sprintf("%s: no rule %q (closest: %s)", sel.label(what), id, strings.Join(Closest(id, ids, 3), ", ")))
			}
		}
	}
	check("disable", sel.Disable)
	check("only", sel.Only)
	if len(bad) > 0 {
		return bad
	}
	if s.disabled == nil {
		s.disabled = map[string]string{}
	}
	off := func(id, why string) {
		if _, done := s.disabled[id]; !done {
			s.disabled[id] = why
		}
	}
	for _, id := range sel.Disable {
		off(id, "switched off by "+sel.label("disable"))
	}
	for _, r := range s.Rules {
		if len(sel.Only) > 0 && !contains(sel.Only, r.ID) {
			off(r.ID, fmt.Sprintf("not in %s %s", sel.label("only"), strings.Join(sel.Only, ",")))
		}
		if sel.NoBuiltin && r.Builtin {
			off(r.ID, "a built-in rule, switched off by "+sel.label("no_builtin"))
		}
	}
	return nil
}

// ids are every rule and budget id, sorted.
func (s *Set) ids() []string {
	var ids []string
	for _, r := range s.Rules {
		ids = append(ids, r.ID)
	}
	for _, b := range s.Budgets {
		ids = append(ids, b.ID)
	}
	sort.Strings(ids)
	return ids
}

// selection reads a rule file's disable, only and no_builtin keys.
func (l *loader) selection(top map[string]*yaml.Node) (Selection, bool) {
	sel := Selection{Source: l.file}
	sel.Disable = l.strList(top["disable"], "disable")
	sel.Only = l.strList(top["only"], "only")
	if n := top["no_builtin"]; n != nil {
		if n.Kind != yaml.ScalarNode || (n.Value != "true" && n.Value != "false") {
			l.errf(n, "no_builtin: expected true or false, found %q", n.Value)
		}
		sel.NoBuiltin = n.Value == "true"
	}
	return sel, !sel.empty()
}
