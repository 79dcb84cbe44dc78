package render

import (
	"html"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/npuprof/npuprof/internal/results"
	"github.com/npuprof/npuprof/internal/results/assemble"
	"github.com/npuprof/npuprof/internal/rules"
)

// ruleDoc evaluates the built-in rules on the committed trace and builds
// its document with the rule set, as `npuprof report` does.
func ruleDoc(t *testing.T, name string) (*results.Document, *rules.Set) {
	t.Helper()
	res := committedResult(t, name)
	set, err := rules.Load()
	require.NoError(t, err)
	rep := rules.Evaluate(set, &rules.Input{Result: res})
	doc := assemble.New(res, rep, nil)
	assemble.AddRuleSet(doc, set)
	require.NotEmpty(t, doc.Findings, "the committed trace has findings")
	return doc, set
}

var hrefRe = regexp.MustCompile(`href="([^"]*)"`)

// Each finding's docs link is an anchor to its rule's explanation in the
// page, whose text is the rule catalog's why (the text docs/rules.md
// generates its section from); no link is relative to the repository.
func TestHTMLRuleDocsEmbedded(t *testing.T) {
	doc, set := ruleDoc(t, "ep-fc1-cumsum")
	page := renderHTML(t, htmlInput{Doc: doc, Version: "test"})
	for _, m := range hrefRe.FindAllStringSubmatch(page, -1) {
		h := m[1]
		require.True(t, strings.HasPrefix(h, "#") || strings.HasPrefix(h, "https://") || strings.HasPrefix(h, "http://"),
			"href %q is relative: it would resolve against wherever the report file is", h)
	}
	require.NotContains(t, page, `href="docs/`)
	seen := map[string]bool{}
	for _, f := range doc.Findings {
		id := ruleAnchor(f.Rule)
		require.Contains(t, page, `<a class="docs" href="#`+id+`">docs</a>`, "finding of %s links to its rule", f.Rule)
		if seen[id] {
			continue
		}
		seen[id] = true
		require.Equal(t, 1, strings.Count(page, `id="`+id+`"`), "one explanation of %s", f.Rule)
		r := set.Lookup(f.Rule)
		require.NotNil(t, r)
		why := cleanText(strings.Join(strings.Fields(r.Why), " "), 0)
		require.NotEmpty(t, why)
		sec := page[strings.Index(page, `id="`+id+`"`):]
		sec = html.UnescapeString(sec[:strings.Index(sec, "</details>")])
		require.Contains(t, sec, why, "the explanation of %s is its why", f.Rule)
		require.Contains(t, sec, cleanText(r.Summary, 0))
	}
	require.Positive(t, len(seen))
	checkSections(t, page, false)
	present(t, page, `data-section="rules"`)
}

func TestRuleAnchor(t *testing.T) {
	require.Equal(t, "rule-moe-routing-cumsum", ruleAnchor("moe-routing-cumsum"))
	require.Equal(t, "rule-my_rule_x__", ruleAnchor(`my.rule x"<`))
}
