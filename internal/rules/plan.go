package rules

import (
	"errors"
	"fmt"

	"github.com/npuprof/npuprof/internal/rules/rulefmt"
)

// planOf evaluates a fired rule's transforms, relations and needs into its
// finding. A relation or need whose `when` cannot be evaluated (an unknown
// fact) holds: the plan then keeps the safe order or names the need.
func (st *state) planOf(r *Rule, fd *Fired) error {
	fd.Patches = r.Patches
	for _, ts := range r.Transforms {
		if ts.When != nil {
			ok, err := st.run(ts.When)
			if err != nil {
				return err
			}
			if !ok.(bool) {
				continue
			}
		}
		t := Transform{Kind: ts.Kind, Op: ts.Op, After: ts.After, Group: ts.Group}
		if ts.To != nil {
			v, err := st.run(ts.To)
			if err != nil {
				return err
			}
			f, ok := toFloat(v)
			if !ok {
				return fmt.Errorf("transform to: %v is not a number", v)
			}
			t.To = int(f)
		}
		fd.Transforms = append(fd.Transforms, t)
	}
	var err error
	if fd.Requires, err = st.holding(r.Requires); err != nil {
		return err
	}
	if fd.Conflicts, err = st.holding(r.Conflicts); err != nil {
		return err
	}
	if fd.Supersedes, err = st.holding(r.Supersedes); err != nil {
		return err
	}
	for _, ns := range r.Needs {
		if ok, err := st.holds(ns.When); err != nil {
			return err
		} else if !ok {
			continue
		}
		fd.Needs = "vllm-ascend >= " + ns.VllmAscend
		if r, ok := LookupRelease(ns.VllmAscend); ok {
			fd.Needs += fmt.Sprintf(" (CANN %s, torch_npu %s)", r.CANN, r.TorchNPU)
		}
		if v, ok := st.in.Facts.Get("vllm_ascend_version"); ok {
			if cmp, err := CompareVersions(v.Value.(string), ns.VllmAscend); err == nil && cmp < 0 {
				fd.NeedsUnmet = fmt.Sprintf("needs vllm-ascend >= %s; the deployment runs %s", ns.VllmAscend, v.Value)
			}
		}
	}
	return nil
}

// holding returns the relations whose `when` holds.
func (st *state) holding(refs []rulefmt.RefSpec) ([]Ref, error) {
	var out []Ref
	for _, ref := range refs {
		ok, err := st.holds(ref.When)
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, Ref{Rule: ref.Rule, Reason: ref.Reason})
		}
	}
	return out, nil
}

// holds evaluates an optional condition; nil or not evaluable (an unknown
// fact or metric) holds.
func (st *state) holds(e *Expr) (bool, error) {
	if e == nil {
		return true, nil
	}
	v, err := st.run(e)
	if err != nil {
		var ne *errNotEvaluated
		if errors.As(err, &ne) {
			return true, nil
		}
		return false, err
	}
	b, _ := v.(bool)
	return b, nil
}
