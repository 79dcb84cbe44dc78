package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/npuprof/npuprof/internal/testutil"
)

// junitSchema is the Jenkins xUnit JUnit schema, junit-10.xsd in the
// shared formats folder beside the repository (testutil.SharedFile: from a
// clone or a worktree); "" and where it looked when absent.
func junitSchema() (path, looked string) { return testutil.SharedFile("junit-10.xsd") }

// needTool returns a tool's path. Without it the test skips, except under
// CI (CI=true), where .ci/run installs it and a skip would hide a report CI
// systems reject.
func needTool(t *testing.T, name, install string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err == nil {
		return p
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s not found under CI: .ci/run must install it (%s)", name, install)
	}
	testutil.Skip(t, "the JUnit schema test (cmd/npuprof, JUnitValidates)", name+" not found (install it with: "+install+")")
	return ""
}

// check --junit validates against junit-10.xsd with xmllint, on a run with
// failures, skips and system-out, on a partial input and on a rank without
// collectives.
func TestJUnitValidatesAgainstSchema(t *testing.T) {
	xmllint := needTool(t, "xmllint", "apt-get install -y libxml2-utils")
	xsd, looked := junitSchema()
	if xsd == "" {
		if os.Getenv("CI") == "true" {
			t.Fatalf("the JUnit schema is missing under CI: no junit-10.xsd: %s", looked)
		}
		testutil.Skip(t, "the JUnit schema test (cmd/npuprof, JUnitValidates)", "no junit-10.xsd: "+looked)
	}
	dir := t.TempDir()
	for _, c := range []struct{ name, path string }{
		{"ep-fc1-cumsum", "../../testdata/traces/ep-fc1-cumsum"},
		{"truncated-mid-event", "../../testdata/broken/truncated-mid-event"},
		{"no-collectives", "../../testdata/traces/no-collectives"},
	} {
		out := filepath.Join(dir, c.name+".xml")
		code, _, errs := run("check", c.path, "-q", "--fail-on", "medium", "--junit", out)
		require.Contains(t, []int{ExitOK, ExitFindings}, code, errs)
		b, err := exec.Command(xmllint, "--noout", "--schema", xsd, out).CombinedOutput()
		require.NoError(t, err, "%s: %s", c.name, b)
		require.Contains(t, string(b), "validates", c.name)
	}
}
