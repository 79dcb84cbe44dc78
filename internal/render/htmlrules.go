package render

import (
	"strings"

	"github.com/npuprof/npuprof/internal/results"
)

// ruleDocView is one rule's explanation, embedded in the report so that a
// finding's "docs" link opens it inside the page (the report is one file:
// a link into the repository would break wherever it is opened). The text
// is the rule catalog's, as the document's view records it
// (results.Detail.RuleSet): the same why that docs/rules.md generates its
// built-in sections from.
type ruleDocView struct {
	// ID is the element id the findings link to (ruleAnchor).
	ID, Rule, Summary, Severity string
	// Why is the rule's explanation, one paragraph per entry.
	Why []string
	// Findings link back: element id (K) and title (V).
	Findings []kv
}

// ruleAnchor is the element id of rule's explanation: "rule-" and the id,
// every character that is not a letter, digit, '-' or '_' replaced by '_'.
func ruleAnchor(rule string) string {
	var b strings.Builder
	b.WriteString("rule-")
	for _, r := range rule {
		if r < 128 && (r == '-' || r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}

// paragraphs splits a rule's why into paragraphs (blank lines), each one
// line of single-spaced words as docs/rules.md prints it.
func paragraphs(s string) []string {
	var out []string
	for _, p := range strings.Split(strings.ReplaceAll(s, "\r\n", "\n"), "\n\n") {
		if p = strings.Join(strings.Fields(p), " "); p != "" {
			out = append(out, cleanText(p, 0))
		}
	}
	return out
}

// buildRuleDocs embeds the explanation of every rule that has a finding,
// in the findings' order, and points each finding's docs at it. A rule the
// view does not describe (a document built without its rule set) keeps
// its docs reference as text, or as a link when it is an absolute http(s)
// address (any other scheme is dropped): never a relative link, which
// would resolve against wherever the report file lies.
func buildRuleDocs(v *htmlView, rs []results.RuleInfo) {
	info := map[string]*results.RuleInfo{}
	for i := range rs {
		if rs[i].Budget == "" {
			info[rs[i].ID] = &rs[i]
		}
	}
	byRule := map[string]*ruleDocView{}
	for i := range v.Findings {
		f := &v.Findings[i]
		ri := info[f.rule]
		if ri == nil || strings.TrimSpace(ri.Why+ri.Summary) == "" {
			d := f.Docs
			switch scheme, _, ok := strings.Cut(d, ":"); {
			case strings.HasPrefix(d, "https://") || strings.HasPrefix(d, "http://"):
				f.DocsURL, f.Docs = d, ""
			case ok && !strings.ContainsAny(scheme, "/#"):
				f.Docs = "" // another scheme (javascript:, file:): not shown
			}
			continue
		}
		rd := byRule[f.rule]
		if rd == nil {
			rd = &ruleDocView{ID: ruleAnchor(f.rule), Rule: cleanText(f.rule, 80), Summary: cleanText(ri.Summary, 0),
				Severity: cleanText(ri.Severity, 20), Why: paragraphs(ri.Why)}
			byRule[f.rule] = rd
			v.RuleDocs = append(v.RuleDocs, rd)
		}
		rd.Findings = append(rd.Findings, kv{f.ID, f.Title})
		f.DocsID = rd.ID
	}
}
