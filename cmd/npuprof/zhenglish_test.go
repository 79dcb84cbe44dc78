package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/npuprof/npuprof/internal/lang"
	"github.com/npuprof/npuprof/internal/tracegen"
)

// zhOutputs are every output of analyze, check, report and diff on one
// input under --lang zh, by name: the terminal summary with every table
// and the evidence, the JSON document, check's text, JUnit and SARIF, the
// HTML report, and diff's text, JSON and HTML against other.
func zhOutputs(t *testing.T, path, other string, extra ...string) map[string]string {
	t.Helper()
	dir := t.TempDir()
	out := map[string]string{}
	runOK := func(name string, args ...string) string {
		args = append(args, "-q", "--lang", "zh")
		if args[0] != "diff" {
			args = append(args, extra...)
		}
		code, o, errs := run(args...)
		require.Contains(t, []int{ExitOK, ExitFindings}, code, "%s: %s", name, errs)
		out[name+" (stderr)"] = errs
		return o
	}
	out["analyze"] = runOK("analyze", "analyze", path, "--detail", "all", "--steps", "all", "--ranks", "all")
	out["analyze (default)"] = runOK("analyze", "analyze", path)
	out["json"] = jsonStrings(runOK("json", "analyze", path, "--format", "json"))
	junit, sarif, html := filepath.Join(dir, "c.xml"), filepath.Join(dir, "c.sarif"), filepath.Join(dir, "r.html")
	out["check"] = runOK("check", "check", path, "--junit", junit, "--sarif", sarif)
	out["junit"] = string(readFile(t, junit))
	out["sarif"] = jsonStrings(string(readFile(t, sarif)))
	runOK("report", "report", path, "-o", html)
	out["html"] = htmlText(string(readFile(t, html)))
	if other != "" {
		dhtml := filepath.Join(dir, "d.html")
		out["diff"] = runOK("diff", "diff", other, path, "--all", "--html", dhtml)
		out["diff json"] = jsonStrings(runOK("diff json", "diff", other, path, "--format", "json"))
		out["diff html"] = htmlText(string(readFile(t, dhtml)))
	}
	return out
}

// jsonStrings are the string values of a JSON text, one a line (the
// keys are the contract's names, never translated).
func jsonStrings(s string) string {
	var v any
	if json.Unmarshal([]byte(s), &v) != nil {
		return s
	}
	var b strings.Builder
	var walk func(any)
	walk = func(v any) {
		switch x := v.(type) {
		case string:
			b.WriteString(x)
			b.WriteByte('\n')
		case []any:
			for _, e := range x {
				walk(e)
			}
		case map[string]any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(v)
	return b.String()
}

var (
	reStyle  = regexp.MustCompile(`(?s)<style.*?</style>`)
	reScript = regexp.MustCompile(`(?s)<script(?: [^>]*)?>(.*?)</script>`)
	reTag    = regexp.MustCompile(`(?s)<[^>]*>`)
	reAttr   = regexp.MustCompile(`(?:title|aria-label|placeholder|alt)="([^"]*)"`)
)

// htmlText is what a reader of an HTML page sees: its text, its titles
// and labels, and the human strings of its JSON data (the charts' titles,
// tooltips and labels); the page's own script and style are code.
func htmlText(page string) string {
	var b strings.Builder
	page = reStyle.ReplaceAllString(page, "")
	for _, m := range reScript.FindAllStringSubmatch(page, -1) {
		if strings.HasPrefix(strings.TrimSpace(m[1]), "[") || strings.HasPrefix(strings.TrimSpace(m[1]), "{") {
			b.WriteString(jsonStrings(m[1]))
		}
	}
	page = reScript.ReplaceAllString(page, "")
	for _, m := range reAttr.FindAllStringSubmatch(page, -1) {
		b.WriteString(m[1] + "\n")
	}
	b.WriteString(reTag.ReplaceAllString(page, "\n"))
	return b.String()
}

// apacheNotice is the bundled ECharts NOTICE the pages quote: a licence
// text, never translated.
var apacheNotice = regexp.MustCompile(`Apache ECharts[^\n]*|The Apache Software Foundation[^\n]*|This product includes software developed at[^\n]*`)

// Under --lang zh no output holds an English sentence (three English
// words in a row: lang.EnglishSentences; names, flags, kernels and paths
// never count): every output of analyze, check, report and diff on the
// committed traces and on tracegen scenarios with expert loads, a
// prediction, a truncated file, a deployment script and the what-if at a
// target concurrency.
func TestZHOutputsHaveNoEnglish(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every output of four captures")
	}
	t.Chdir("../..")
	gen := func(name string) string {
		sc, ok := tracegen.Lookup(name)
		require.True(t, ok)
		dir := t.TempDir()
		_, err := tracegen.Generate(dir, sc)
		require.NoError(t, err)
		return dir
	}
	found := map[string][]string{}
	hot := gen("hot-experts")
	// eplb plan's summary (on standard error when the map goes to a file)
	code, out, errs := run("eplb", "plan", "--experts", filepath.Join(hot, "expert_hotspot"), "-o", filepath.Join(t.TempDir(), "map.json"), "--lang", "zh")
	require.Equal(t, ExitOK, code, errs)
	require.Contains(t, out+errs, "EPLB 方案")
	found["eplb plan"] = lang.EnglishSentences(out + errs)
	for _, c := range [][2]string{
		{"testdata/traces/ep-fc1-cumsum", "testdata/traces/clean-2ranks"},
		{"testdata/broken/truncated-mid-event", "testdata/traces/no-collectives"},
		{hot, gen("ep-fc1-cumsum-steps")},
		{gen("uncaptured-batch"), ""},
	} {
		for name, o := range zhOutputs(t, c[0], c[1], "--deploy", "testdata/deploy/field-report-1.sh") {
			for _, s := range lang.EnglishSentences(apacheNotice.ReplaceAllString(o, "")) {
				found[name] = append(found[name], s)
			}
		}
	}
	// the target-concurrency what-if (plan.whatif, findings[].revisit)
	for _, sc := range []string{"hot-rank-mc2", "host-bound"} {
		for name, o := range zhOutputs(t, gen(sc), "", "--fact", "concurrency=90") {
			found[name] = append(found[name], lang.EnglishSentences(apacheNotice.ReplaceAllString(o, ""))...)
		}
	}
	var report []string
	for name, ss := range found {
		if len(ss) == 0 {
			continue
		}
		sort.Strings(ss)
		report = append(report, fmt.Sprintf("%s: %q", name, slices.Compact(ss)))
	}
	sort.Strings(report)
	require.Empty(t, report, "English in a Chinese output")
}
