package rules

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	"github.com/npuprof/npuprof/internal/analysis"
	"github.com/npuprof/npuprof/internal/rules/rulefmt"
)

// The generated sections of docs/rules.md and docs/json.md (TestDocsInSync
// checks them; -update rewrites them): the metric, fact, function, version
// and built-in rule tables, from the catalogs.

// docSections returns the generated parts of docs/rules.md, by marker
// name: metrics, facts, functions and builtin (the built-in rules).
func docSections(set *Set) map[string]string {
	var fn strings.Builder
	fn.WriteString("| in an expression | meaning |\n|---|---|\n")
	for _, f := range rulefmt.Functions {
		fmt.Fprintf(&fn, "| `%s` | %s |\n", f[0], f[1])
	}
	var bi strings.Builder
	for _, r := range set.Rules {
		if !r.Builtin {
			continue
		}
		fmt.Fprintf(&bi, "### %s\n\n%s\n\nSeverity: %s. `npuprof rules explain %s` shows the expression, thresholds and fix.\n\n",
			r.ID, strings.Join(strings.Fields(r.Why), " "), r.Severity, r.ID)
	}
	return map[string]string{
		"metrics":   metricTableMarkdown(),
		"facts":     factTableMarkdown(),
		"functions": fn.String(),
		"builtin":   strings.TrimRight(bi.String(), "\n") + "\n",
		"versions":  versionTableMarkdown(),
	}
}

var reGenerated = regexp.MustCompile(`(?s)(<!-- BEGIN GENERATED: (\w+) -->\n)(.*?)(<!-- END GENERATED: \w+ -->)`)

// updateDoc replaces every generated section of doc with sections[name].
func updateDoc(doc string, sections map[string]string) (string, error) {
	var err error
	seen := map[string]bool{}
	out := reGenerated.ReplaceAllStringFunc(doc, func(m string) string {
		sm := reGenerated.FindStringSubmatch(m)
		body, ok := sections[sm[2]]
		if !ok {
			err = fmt.Errorf("unknown generated section %q", sm[2])
			return m
		}
		seen[sm[2]] = true
		return sm[1] + body + sm[4]
	})
	for name := range sections {
		if !seen[name] && err == nil {
			err = fmt.Errorf("no <!-- BEGIN GENERATED: %s --> section", name)
		}
	}
	return out, err
}

// metricTableMarkdown renders the metric table as docs/rules.md and
// docs/json.md hold it.
func metricTableMarkdown() string {
	var b strings.Builder
	b.WriteString("| metric | unit | scope | pass | meaning |\n|---|---|---|---|---|\n")
	for _, m := range analysis.MetricTable() {
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s |\n", m.Name, m.Unit, m.Kind, m.Pass, m.Doc)
	}
	return b.String()
}

// factTableMarkdown renders the fact catalog for docs/rules.md.
func factTableMarkdown() string {
	var b strings.Builder
	b.WriteString("| fact | type | meaning | from |\n|---|---|---|---|\n")
	for _, f := range rulefmt.Facts {
		ref := "fact." + f.Name
		if strings.Contains(f.Name, ".") {
			ref = `fact["` + f.Name + `"]`
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", ref, f.Type, f.Doc, f.From)
	}
	return b.String()
}

// versionTableMarkdown renders the table for docs/rules.md.
func versionTableMarkdown() string {
	var b strings.Builder
	b.WriteString("| vLLM-Ascend | date | vLLM | CANN | torch / torch_npu | triton-ascend | changes rules name [dispatchers; models] |\n|---|---|---|---|---|---|---|\n")
	sources := map[string]bool{}
	for _, r := range Releases() {
		var ch []string
		for _, c := range r.Changes {
			ch = append(ch, fmt.Sprintf("#%d %s [%s; %s]", c.PR, c.What, strings.Join(c.Dispatchers, "/"), strings.Join(c.Models, "/")))
			sources[c.Source] = true
		}
		sources[r.Source] = true
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s / %s | %s | %s |\n", r.Version, r.Date, r.VLLM, r.CANN, r.Torch, r.TorchNPU, r.TritonAscend, strings.Join(ch, "; "))
	}
	b.WriteString("\nSources: ")
	b.WriteString(strings.Join(slices.Sorted(maps.Keys(sources)), "; "))
	b.WriteString(".\n")
	return b.String()
}
