package rules

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/npuprof/npuprof/rules/rulefmt"
)

// DocSections returns the generated parts of docs/rules.md, by marker
// name: metrics, facts, functions and builtin (the built-in rules).
func DocSections(set *Set) map[string]string {
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
		"metrics":   rulefmt.MetricTableMarkdown(),
		"facts":     rulefmt.FactTableMarkdown(),
		"functions": fn.String(),
		"builtin":   strings.TrimRight(bi.String(), "\n") + "\n",
		"versions":  VersionTableMarkdown(),
	}
}

var reGenerated = regexp.MustCompile(`(?s)(<!-- BEGIN GENERATED: (\w+) -->\n)(.*?)(<!-- END GENERATED: \w+ -->)`)

// UpdateDoc replaces every generated section of doc with sections[name].
func UpdateDoc(doc string, sections map[string]string) (string, error) {
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
