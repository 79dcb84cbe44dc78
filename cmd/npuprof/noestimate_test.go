package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// A finding whose rule gives no saving estimate (comm-bound: its saving
// cannot be evaluated; env-hygiene: it has no saving expression) says so in
// every output, never as 0: saving_us null in the JSON document and in
// SARIF, "no saving estimated" in the summary, "no estimate" in JUnit, and
// in the diff's predicted column (text and HTML; predicted_saving_us null
// in its JSON), with no measured/predicted ratio.
func TestNoEstimateIsNeverZero(t *testing.T) {
	t.Chdir("../..")
	before, after := "testdata/traces/ep-fc1-cumsum", "testdata/traces/clean-2ranks"

	code, out, errs := run("analyze", before, "-q", "--format", "json")
	require.Equal(t, ExitOK, code, errs)
	var doc struct{ Findings []map[string]any }
	require.NoError(t, json.Unmarshal([]byte(out), &doc))
	estimated := map[string]bool{}
	for _, f := range doc.Findings {
		v, ok := f["saving_us"]
		require.True(t, ok, "saving_us is always present: %v", f["rule"])
		estimated[f["rule"].(string)] = v != nil
	}
	require.False(t, estimated["comm-bound"], "null, not 0")
	require.True(t, estimated["moe-routing-cumsum"])

	code, out, _ = run("analyze", before, "-q")
	require.Equal(t, ExitOK, code)
	require.Contains(t, out, "(comm-bound, no saving estimated)")

	dir := t.TempDir()
	junit, sarif := filepath.Join(dir, "c.xml"), filepath.Join(dir, "c.sarif")
	run("check", before, "-q", "--junit", junit, "--sarif", sarif)
	b, err := os.ReadFile(junit)
	require.NoError(t, err)
	require.Regexp(t, `Communication not overlapped[^<]*estimated saving: no estimate&#xA;`, string(b))
	b, err = os.ReadFile(sarif)
	require.NoError(t, err)
	props := sarifResults(t, b)["comm-bound"].Properties
	require.Contains(t, props, "saving_us")
	require.Nil(t, props["saving_us"])
	require.Equal(t, 269.519, sarifResults(t, b)["moe-routing-cumsum"].Properties["saving_us"])

	html := filepath.Join(dir, "d.html")
	code, out, errs = run("diff", before, after, "-q", "--html", html)
	require.Equal(t, ExitOK, code, errs)
	require.Regexp(t, `\n  resolved  comm-bound +no estimate +558\.0µs +- `, out)
	require.Regexp(t, `\n  new +env-hygiene +no estimate +n/a `, out)
	require.NotRegexp(t, `(comm-bound|env-hygiene) +0\.0µs`, out)
	b, err = os.ReadFile(html)
	require.NoError(t, err)
	require.Regexp(t, `comm-bound</td><td[^>]*>[^<]*</td><td class="num">no estimate</td>`, string(b))

	code, out, errs = run("diff", before, after, "-q", "--format", "json")
	require.Equal(t, ExitOK, code, errs)
	var d struct{ Findings []map[string]any }
	require.NoError(t, json.Unmarshal([]byte(out), &d))
	for _, f := range d.Findings {
		if f["rule"] == "comm-bound" {
			require.Contains(t, f, "predicted_saving_us")
			require.Nil(t, f["predicted_saving_us"])
			require.NotContains(t, f, "measured_over_predicted")
			require.NotNil(t, f["measured_saving_us"], "the effect is still measured")
		}
	}
}
