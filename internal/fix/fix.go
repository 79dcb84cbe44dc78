// Package fix holds what a finding asks to change, as data: actions on the
// deployment (set or remove a flag, set or unset an environment variable,
// merge keys into a flag's JSON value) and changes outside it (code, an
// image, a kernel). Rules produce actions; package deploy turns the script
// actions into a diff after the rules have run; Combine and Conflicts let
// a plan gather the actions of several findings and find the ones that
// edit the same thing differently.
package fix

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// Kind is what an action does. The names are the `op` of a rule file's
// `edits` (docs/rules.md).
type Kind string

// Action kinds.
const (
	RemoveFlag Kind = "remove_flag" // drop --name (and its value)
	SetFlag    Kind = "set_flag"    // set --name VALUE (added when absent)
	MergeJSON  Kind = "merge_json"  // merge the keys of VALUE (a JSON object) into --name's JSON value
	UnsetEnv   Kind = "unset_env"   // drop the NAME=... assignment
	SetEnv     Kind = "set_env"     // export NAME=VALUE (added when absent)
	// CodeChange is a change no deployment script carries: Name says what
	// it touches (a kernel, a file, the image), Value what to do.
	CodeChange Kind = "code_change"
)

// ScriptKinds are the kinds that edit the deployment script, in the order
// rule files document them.
var ScriptKinds = []Kind{RemoveFlag, SetFlag, MergeJSON, UnsetEnv, SetEnv}

// Kinds lists every kind.
var Kinds = append(append([]Kind(nil), ScriptKinds...), CodeChange)

// Action is one change a finding asks for.
type Action struct {
	Kind Kind `json:"kind"`
	// Name is the flag (--name), the environment variable, or what a code
	// change touches.
	Name  string `json:"name"`
	Value string `json:"value,omitempty"`
	// Create: merge_json adds the flag when the script lacks it.
	Create bool `json:"create,omitempty"`
	// Rule is the rule whose finding asks for it.
	Rule string `json:"rule,omitempty"`
}

// EditsScript reports whether the action changes the deployment script.
func (a Action) EditsScript() bool { return a.Kind != CodeChange }

func (a Action) String() string {
	switch a.Kind {
	case RemoveFlag, UnsetEnv:
		return string(a.Kind) + " " + a.Name
	}
	return string(a.Kind) + " " + a.Name + " " + a.Value
}

// same reports whether a and b are the same change (whoever asks for it).
func (a Action) same(b Action) bool {
	a.Rule, b.Rule = "", ""
	return a == b
}

// Combine returns the actions of every list in order, each change once
// (the first finding that asks for it keeps it).
func Combine(lists ...[]Action) []Action {
	var out []Action
	for _, l := range lists {
		for _, a := range l {
			dup := false
			for _, b := range out {
				dup = dup || a.same(b)
			}
			if !dup {
				out = append(out, a)
			}
		}
	}
	return out
}

// Target is one thing an action edits: a flag, an environment variable,
// or one top-level key of a flag's JSON value.
type Target struct {
	// Of is "flag", "env" or "json".
	Of   string
	Name string
	// Key is the JSON key (Of "json").
	Key string
}

func (t Target) String() string {
	if t.Of == "json" {
		return fmt.Sprintf("%s key %q", t.Name, t.Key)
	}
	return t.Of + " " + t.Name
}

// Conflict is two actions that edit one target differently: applied in
// order, the second undoes or overrides the first.
type Conflict struct {
	Target Target
	A, B   Action
}

func (c Conflict) String() string {
	return fmt.Sprintf("%s: %s (%s) and %s (%s)", c.Target, c.A, c.A.Rule, c.B, c.B.Rule)
}

// effect is what one action does to one target: the value it leaves, or
// removed.
type effect struct {
	target  Target
	value   string
	removed bool
	whole   bool // set_flag/remove_flag: the flag's whole value, every JSON key
}

// effects lists what a does; a merge_json whose value is not a JSON object
// has none (the script editor refuses it).
func (a Action) effects() []effect {
	switch a.Kind {
	case SetFlag:
		return []effect{{target: Target{Of: "flag", Name: a.Name}, value: a.Value, whole: true}}
	case RemoveFlag:
		return []effect{{target: Target{Of: "flag", Name: a.Name}, removed: true, whole: true}}
	case SetEnv:
		return []effect{{target: Target{Of: "env", Name: a.Name}, value: a.Value}}
	case UnsetEnv:
		return []effect{{target: Target{Of: "env", Name: a.Name}, removed: true}}
	case MergeJSON:
		var obj map[string]json.RawMessage
		if json.Unmarshal([]byte(a.Value), &obj) != nil {
			return nil
		}
		var out []effect
		for k, v := range obj {
			var b bytes.Buffer
			if json.Compact(&b, v) != nil {
				b.Reset()
				b.Write(v)
			}
			out = append(out, effect{target: Target{Of: "json", Name: a.Name, Key: k}, value: b.String()})
		}
		return out
	}
	return nil
}

// JSONValue is the compact JSON value a merge_json action gives key ("" when
// it gives none).
func JSONValue(a Action, key string) string {
	for _, e := range a.effects() {
		if e.target.Of == "json" && e.target.Key == key {
			return e.value
		}
	}
	return ""
}

// clash reports whether two effects conflict: the same target left in two
// states, or a flag set or removed whole while another action merges keys
// into its JSON value.
func clash(x, y effect) (Target, bool) {
	switch {
	case x.target == y.target:
		return x.target, x.removed != y.removed || x.value != y.value
	case x.whole && y.target.Of == "json" && y.target.Name == x.target.Name:
		return y.target, true
	case y.whole && x.target.Of == "json" && x.target.Name == y.target.Name:
		return x.target, true
	}
	return Target{}, false
}

// Conflicts returns every pair of actions (in list order) that edit one
// target differently; the same change asked twice is no conflict.
func Conflicts(actions []Action) []Conflict {
	var out []Conflict
	for i, a := range actions {
		ea := a.effects()
		for _, b := range actions[i+1:] {
			if a.same(b) {
				continue
			}
			if t, ok := firstClash(ea, b.effects()); ok {
				out = append(out, Conflict{Target: t, A: a, B: b})
			}
		}
	}
	return out
}

// firstClash returns the first clashing target of two effect lists, by
// target name (the effects of a JSON value come in map order).
func firstClash(xs, ys []effect) (Target, bool) {
	var best Target
	found := false
	for _, x := range xs {
		for _, y := range ys {
			if t, ok := clash(x, y); ok && (!found || strings.Compare(t.String(), best.String()) < 0) {
				best, found = t, true
			}
		}
	}
	return best, found
}

// PatchSpec is a code change a rule can make as a patch of the user's
// source tree (--source): in Scope ("Class.method") of File, set each
// keyword argument or assignment named in Set to its value.
type PatchSpec struct {
	File, Scope string
	Set         map[string]string
	// Order is the names of Set in the rule file's order.
	Order []string
	// Comments are, by name of Set, the comment a line the patch changes
	// for that name ends with in place of its own trailing comment, which
	// described the old value (a line without a comment gets none).
	Comments map[string]string
	// Moved are the paths older releases keep File at, tried after it:
	// the tree decides which one it has.
	Moved []MovedFile
	// Since is the first vLLM-Ascend release whose Scope holds the names
	// of Set ("" when not said): an error names it, as a tree older than
	// that has no such code to patch.
	Since string
}

// MovedFile is an earlier path of a patch's file: releases before Before
// keep it at File.
type MovedFile struct {
	File, Before string
}

// Names returns the names of Set in the rule file's order.
func (p PatchSpec) Names() []string { return p.Order }
