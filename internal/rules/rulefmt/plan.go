package rulefmt

import (
	"fmt"
	"strings"

	"github.com/npuprof/npuprof/internal/fix"
	"go.yaml.in/yaml/v3"
)

// The plan fields of a rule: the fix as typed transforms of the decode-step
// timeline (package internal/analysis/replay replays them), the rules it requires,
// conflicts with or supersedes, and the versions it needs. docs/rules.md,
// "Predictions and the fix plan".

// Transform kinds a rule's `transforms` may name.
var TransformKinds = []string{"remove_kernels", "replace_collectives", "rebatch", "eager_to_graph", "rebalance_experts"}

var (
	transformKeys = []string{"kind", "op", "after", "group", "to", "when"}
	refKeys       = []string{"rule", "when", "reason"}
	needKeys      = []string{"vllm_ascend", "when"}
)

// TransformSpec is one transform of a rule's fix.
type TransformSpec struct {
	Kind, Op, After, Group string
	To                     *Expr // rebatch: the tokens a step runs at
	When                   *Expr // optional: the transform applies when it holds
}

// RefSpec is a rule a rule requires, conflicts with or supersedes; When
// (optional) says when the relation holds.
type RefSpec struct {
	Rule   string
	When   *Expr
	Reason string
	File   string
	Line   int
}

// NeedSpec is a version a rule's fix needs (when When holds).
type NeedSpec struct {
	VllmAscend string
	When       *Expr
}

// planFields loads a rule's transforms, requires, conflicts, supersedes
// and needs.
func (c *compiler) planFields(m map[string]*yaml.Node, r *Rule) {
	l, what := c.l, c.what
	if tn := m["transforms"]; tn != nil {
		for _, n := range l.list(tn, what+": transforms") {
			tm := l.mapping(n, what+": transform", transformKeys)
			t := TransformSpec{Kind: l.str(tm["kind"], "kind"), Op: l.str(tm["op"], "op"),
				After: l.str(tm["after"], "after"), Group: l.str(tm["group"], "group")}
			if !contains(TransformKinds, t.Kind) {
				l.errf(n, "%s: transform kind %q (expected one of %s)", what, t.Kind, strings.Join(TransformKinds, ", "))
			}
			if t.Kind == "remove_kernels" && t.Op == "" {
				l.errf(n, "%s: transform remove_kernels: missing op", what)
			}
			if v := tm["when"]; v != nil {
				t.When = c.expr(v, "transform when", kindBool)
			}
			if v := tm["to"]; v != nil {
				t.To = c.expr(v, "transform to", kindAny)
			} else if t.Kind == "rebatch" {
				l.errf(n, "%s: transform rebatch: missing to (the tokens a step runs at)", what)
			}
			r.Transforms = append(r.Transforms, t)
		}
	}
	c.patches(m["patches"], r)
	r.Requires = c.refs(m["requires"], "requires")
	r.Conflicts = c.refs(m["conflicts"], "conflicts")
	r.Supersedes = c.refs(m["supersedes"], "supersedes")
	if nn := m["needs"]; nn != nil {
		for _, n := range l.list(nn, what+": needs") {
			nm := l.mapping(n, what+": needs", needKeys)
			ns := NeedSpec{VllmAscend: l.str(nm["vllm_ascend"], "vllm_ascend")}
			if _, err := ParseVersion(ns.VllmAscend); err != nil {
				l.errf(n, "%s: needs: vllm_ascend: %v", what, err)
			}
			if v := nm["when"]; v != nil {
				ns.When = c.expr(v, "needs when", kindBool)
			}
			r.Needs = append(r.Needs, ns)
		}
	}
}

// refs loads a requires/conflicts/supersedes list: rule ids, or mappings
// with rule, when and reason.
func (c *compiler) refs(n *yaml.Node, field string) []RefSpec {
	if n == nil {
		return nil
	}
	l := c.l
	var out []RefSpec
	for _, e := range l.list(n, c.what+": "+field) {
		ref := RefSpec{File: l.file, Line: e.Line}
		if e.Kind == yaml.ScalarNode {
			ref.Rule = e.Value
		} else {
			em := l.mapping(e, c.what+": "+field, refKeys)
			ref.Rule, ref.Reason = l.str(em["rule"], "rule"), l.str(em["reason"], "reason")
			if v := em["when"]; v != nil {
				ref.When = c.expr(v, field+" when", kindBool)
			}
		}
		if !reID().MatchString(ref.Rule) {
			l.errf(e, "%s: %s: %q is not a rule id", c.what, field, ref.Rule)
		}
		out = append(out, ref)
	}
	return out
}

// list returns the items of a sequence node (a scalar is a list of one).
func (l *loader) list(n *yaml.Node, what string) []*yaml.Node {
	switch n.Kind {
	case yaml.SequenceNode:
		return n.Content
	case yaml.ScalarNode, yaml.MappingNode:
		return []*yaml.Node{n}
	}
	l.errf(n, "%s: expected a list, found %s", what, kindName(n))
	return nil
}

// checkRefs reports, with file:line, every requires/conflicts/supersedes
// that names an unknown rule, and every cycle of requires.
func (s *Set) checkRefs() []string {
	var problems []string
	for _, r := range s.Rules {
		for _, list := range [][]RefSpec{r.Requires, r.Conflicts, r.Supersedes} {
			for _, ref := range list {
				if s.Lookup(ref.Rule) == nil {
					problems = append(problems, fmt.Sprintf("%s:%d: rule %s: unknown rule id %q", ref.File, ref.Line, r.ID, ref.Rule))
				}
			}
		}
	}
	state := map[string]int{}
	var visit func(r *Rule, path []string) string
	visit = func(r *Rule, path []string) string {
		switch state[r.ID] {
		case 1:
			return strings.Join(append(path, r.ID), " -> ")
		case 2:
			return ""
		}
		state[r.ID] = 1
		for _, ref := range r.Requires {
			if q := s.Lookup(ref.Rule); q != nil {
				if cyc := visit(q, append(path, r.ID)); cyc != "" {
					return cyc
				}
			}
		}
		state[r.ID] = 2
		return ""
	}
	for _, r := range s.Rules {
		if cyc := visit(r, nil); cyc != "" {
			problems = append(problems, fmt.Sprintf("%s:%d: rule %s: requires form a cycle: %s", r.File, r.Line, r.ID, cyc))
			break
		}
	}
	return problems
}

var (
	patchKeys = []string{"file", "scope", "set", "comments", "since", "moved"}
	movedKeys = []string{"file", "before"}
)

// patches loads a rule's `patches`.
func (c *compiler) patches(n *yaml.Node, r *Rule) {
	if n == nil {
		return
	}
	l := c.l
	for _, e := range l.list(n, c.what+": patches") {
		pm := l.mapping(e, c.what+": patch", patchKeys)
		ps := fix.PatchSpec{File: l.str(pm["file"], "file"), Scope: l.str(pm["scope"], "scope"), Set: map[string]string{}}
		if ps.File == "" || ps.Scope == "" || pm["set"] == nil || pm["set"].Kind != yaml.MappingNode {
			l.errf(e, "%s: patch: expected file, scope (Class.method) and set (a mapping of name: value)", c.what)
			continue
		}
		for i := 0; i+1 < len(pm["set"].Content); i += 2 {
			k, v := pm["set"].Content[i], pm["set"].Content[i+1]
			ps.Set[k.Value] = v.Value
			ps.Order = append(ps.Order, k.Value)
		}
		if n := pm["comments"]; n != nil {
			if n.Kind != yaml.MappingNode {
				l.errf(n, "%s: patch: comments: expected a mapping of name: comment (names of set)", c.what)
			} else {
				ps.Comments = map[string]string{}
				for i := 0; i+1 < len(n.Content); i += 2 {
					k, v := n.Content[i], n.Content[i+1]
					if _, ok := ps.Set[k.Value]; !ok {
						l.errf(k, "%s: patch: comments: %s is not a name of set", c.what, k.Value)
						continue
					}
					if v.Kind != yaml.ScalarNode || v.Value == "" || strings.ContainsAny(v.Value, "\n\r") {
						l.errf(v, "%s: patch: comments: %s: expected one line of text", c.what, k.Value)
						continue
					}
					ps.Comments[k.Value] = v.Value
				}
			}
		}
		if n := pm["since"]; n != nil {
			ps.Since = l.str(n, "since")
			if _, err := ParseVersion(ps.Since); err != nil {
				l.errf(n, "%s: patch: since: %v", c.what, err)
			}
		}
		if n := pm["moved"]; n != nil {
			for _, m := range l.list(n, c.what+": patch: moved") {
				mm := l.mapping(m, c.what+": patch: moved", movedKeys)
				mf := fix.MovedFile{File: l.str(mm["file"], "file"), Before: l.str(mm["before"], "before")}
				if mf.File == "" || mf.Before == "" {
					l.errf(m, "%s: patch: moved: expected file and before (the first release at the patch's file)", c.what)
					continue
				}
				if _, err := ParseVersion(mf.Before); err != nil {
					l.errf(mm["before"], "%s: patch: moved: before: %v", c.what, err)
				}
				ps.Moved = append(ps.Moved, mf)
			}
		}
		r.Patches = append(r.Patches, ps)
	}
}
