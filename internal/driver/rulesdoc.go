package driver

// npuprof rules list and explain: the rule set described for people.

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	langpkg "github.com/npuprof/npuprof/internal/lang"
	"github.com/npuprof/npuprof/internal/rules"
)

// ListRules writes every rule and budget of the built-in rules and the
// rule files: its id, severity and source, and the first sentence of its
// why in lang.
func ListRules(w io.Writer, files []string, lang string) error {
	set, err := LoadRules(RuleSelection{Files: files})
	if err != nil {
		return err
	}
	for _, r := range set.Rules {
		src := "built-in"
		if !r.Builtin {
			src = fmt.Sprintf("%s:%d", r.File, r.Line)
		}
		why := strings.TrimSpace(r.WhyIn(lang))
		if i := strings.Index(why, ". "); i > 0 {
			why = why[:i+1]
		} else if i := strings.Index(why, "。"); i > 0 {
			why = why[:i+len("。")]
		}
		fmt.Fprintf(w, "%-22s %-7s %s\n", r.ID, r.Severity, src)
		if why != "" {
			fmt.Fprintf(w, "    %s\n", wrap(why, "    "))
		}
	}
	for _, b := range set.Budgets {
		fmt.Fprintf(w, "%-22s %-7s %s:%d\n    budget: %s\n", b.ID, b.Severity, b.File, b.Line, b.Text)
	}
	return nil
}

// ExplainRule writes what rule id checks (see explain); an unknown id is a
// usage error that suggests the nearest.
func ExplainRule(w io.Writer, files []string, id, lang string) error {
	set, err := LoadRules(RuleSelection{Files: files})
	if err != nil {
		return err
	}
	r := set.Lookup(id)
	if r == nil {
		var ids []string
		for _, x := range set.Rules {
			ids = append(ids, x.ID)
		}
		if near := rules.Suggest(id, ids, 3); len(near) > 0 {
			return usageErr("no rule %q; did you mean %s?", id, strings.Join(near, ", "))
		}
		return usageErr("no rule %q; 'npuprof rules list' lists the %d rules", id, len(ids))
	}
	explain(w, r, lang)
	return nil
}

// explain prints what rule r checks; its why and fix template in lang.
func explain(w io.Writer, r *rules.Rule, lang string) {
	src := "built-in (" + r.File + ")"
	if !r.Builtin {
		src = fmt.Sprintf("%s:%d", r.File, r.Line)
	}
	fmt.Fprintf(w, "%s  [%s]  %s\n\n", r.ID, r.Severity, src)
	if why := strings.TrimSpace(r.WhyIn(lang)); why != "" {
		fmt.Fprintf(w, "Why\n  %s\n\n", wrap(why, "  "))
	}
	a := r.AppliesTo
	if a.VllmAscend != "" || len(a.Phase) > 0 || len(a.ModelFamily) > 0 {
		fmt.Fprintf(w, "Applies to\n")
		if a.VllmAscend != "" {
			fmt.Fprintf(w, "  vllm_ascend_version %s\n", a.VllmAscend)
		}
		if len(a.Phase) > 0 {
			fmt.Fprintf(w, "  phase %s\n", strings.Join(a.Phase, ", "))
		}
		if len(a.ModelFamily) > 0 {
			fmt.Fprintf(w, "  model %s\n", strings.Join(a.ModelFamily, ", "))
		}
		fmt.Fprintln(w)
	}
	if len(r.Thresholds) > 0 {
		fmt.Fprintf(w, "Thresholds\n")
		names := slices.Sorted(maps.Keys(r.Thresholds))
		for _, k := range names {
			fmt.Fprintf(w, "  threshold.%s = %g\n", k, r.Thresholds[k])
		}
		fmt.Fprintln(w)
	}
	if len(r.Vars) > 0 {
		fmt.Fprintf(w, "Values\n")
		for _, v := range r.Vars {
			fmt.Fprintf(w, "  %s = %s\n", v.Name, indentRest(strings.TrimSpace(v.Source), "      "))
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "Fires when\n  %s\n\n", indentRest(strings.TrimSpace(r.When.Source), "  "))
	if r.Saving != nil {
		fmt.Fprintf(w, "Estimated saving (µs per rank over the capture)\n  %s\n\n", indentRest(strings.TrimSpace(r.Saving.Source), "  "))
	}
	if r.Severity == "auto" {
		fmt.Fprintf(w, "Severity\n  from the saving's share of the device window: >= 5%% high, >= 1%% medium, else low\n\n")
	}
	metrics := map[string]bool{}
	facts := map[string]bool{}
	collect := func(e *rules.Expr) {
		if e == nil {
			return
		}
		for _, m := range e.Metrics {
			metrics[m] = true
		}
		for _, f := range e.Facts {
			facts[f] = true
		}
	}
	collect(r.When)
	collect(r.Saving)
	for _, e := range r.Evidence {
		metrics[e.Metric] = true
	}
	if len(metrics) > 0 {
		fmt.Fprintf(w, "Metrics it reads\n")
		for _, m := range slices.Sorted(maps.Keys(metrics)) {
			d, _ := rules.LookupMetric(m)
			fmt.Fprintf(w, "  %-40s %s\n", m, d.Doc)
		}
		fmt.Fprintln(w)
	}
	if len(facts) > 0 {
		fmt.Fprintf(w, "Facts it reads\n")
		for _, f := range slices.Sorted(maps.Keys(facts)) {
			d, _ := rules.LookupFact(f)
			fmt.Fprintf(w, "  fact.%-30s %s (from %s)\n", f, d.Doc, d.From)
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "Fix (template)\n  %s\n", indentRest(strings.TrimSpace(r.FixIn(lang).Source), "  "))
	if len(r.Edits) > 0 {
		fmt.Fprintf(w, "\nChanges to the --deploy script\n")
		for _, e := range r.Edits {
			line := "  " + e.Op + " " + e.Name
			if e.Value != nil {
				line += " " + e.Value.Source
			}
			if e.If != nil {
				line += "   (if " + strings.TrimSpace(e.If.Source) + ")"
			}
			fmt.Fprintln(w, line)
		}
	}
	if r.Docs != "" {
		fmt.Fprintf(w, "\nDocs: %s\n", r.Docs)
	}
}

func indentRest(s, ind string) string {
	return strings.ReplaceAll(s, "\n", "\n"+ind)
}

// wrap fills s into lines of at most 79 columns with ind before each
// (a wide rune, Chinese, takes two columns).
func wrap(s, ind string) string {
	limit := 78 - len(ind)
	// tokens: the words, and each wide rune (Chinese) on its own, so that a
	// line of Chinese breaks between two characters
	type token struct {
		s     string
		space bool // a space before it
	}
	var toks []token
	open := "" // an opening mark waits for what it opens: it never ends a line
	add := func(t token) {
		if open != "" {
			t.s, open = open+t.s, ""
		}
		toks = append(toks, t)
	}
	for i, w := range strings.Fields(s) {
		space, run := i > 0, ""
		for _, r := range w {
			if !langpkg.IsWide(r) {
				run += string(r)
				continue
			}
			if run != "" {
				add(token{run, space})
				space, run = false, ""
			}
			switch {
			case strings.ContainsRune("，。、；：）！？」》", r) && !space && len(toks) > 0:
				toks[len(toks)-1].s += string(r) // never opens a line
			case strings.ContainsRune("（「《", r):
				if open == "" && space {
					toks = append(toks, token{"", true}) // keeps the space before it
				}
				open += string(r)
			default:
				add(token{string(r), space})
			}
			space = false
		}
		if run != "" {
			add(token{run, space})
		}
	}
	if open != "" {
		add(token{"", false})
	}
	var b strings.Builder
	n := 0
	for _, t := range toks {
		w := langpkg.Width(t.s)
		if n > 0 && n+w > limit {
			b.WriteString("\n" + ind)
			n = 0
		} else if n > 0 && t.space {
			b.WriteByte(' ')
			n++
		}
		b.WriteString(t.s)
		n += w
	}
	return b.String()
}

// RuleIDs are the ids of the built-in rules and of the rules and budgets
// of files, in their order (the shell completion of --only, --disable and
// `rules explain`).
func RuleIDs(files []string) ([]string, error) {
	set, err := LoadRules(RuleSelection{Files: files})
	if err != nil {
		return nil, err
	}
	var ids []string
	for _, r := range set.Rules {
		ids = append(ids, r.ID)
	}
	for _, b := range set.Budgets {
		ids = append(ids, b.ID)
	}
	return ids, nil
}
