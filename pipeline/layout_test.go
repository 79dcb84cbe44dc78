package pipeline

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/npuprof/npuprof/internal/testutil"
)

const module = "github.com/npuprof/npuprof/"

// goList runs go list in the repository with args and returns its lines.
func goList(t *testing.T, args ...string) []string {
	t.Helper()
	cmd := exec.Command("go", append([]string{"list"}, args...)...)
	cmd.Dir = testutil.RepoRoot()
	out, err := cmd.Output()
	require.NoError(t, err, "go list %v", args)
	return strings.Fields(string(out))
}

// The pipeline is the one place readers meet passes: analysis depends on
// nothing of this module but the model and itself, and the command reaches
// the profile readers (parser) only through the pipeline and the model;
// the inputs beside a profile (inputs/...: expert loads, serving logs) it
// reads itself.
func TestLayoutLoadingGoesThroughPipeline(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command")
	}
	for _, p := range goList(t, "-deps", "./analysis/...") {
		if !strings.HasPrefix(p, module) {
			continue
		}
		rel := strings.TrimPrefix(p, module)
		ok := rel == "parser/model" || rel == "analysis" || strings.HasPrefix(rel, "analysis/")
		require.True(t, ok, "analysis depends on %s", rel)
	}
	for _, p := range goList(t, "-f", `{{join .Imports " "}}`, "./cmd/npuprof") {
		rel := strings.TrimPrefix(p, module)
		ok := !strings.HasPrefix(p, module) || rel == "parser/model" || (rel != "parser" && !strings.HasPrefix(rel, "parser/"))
		require.True(t, ok, "cmd/npuprof imports %s", rel)
	}
}

// Renderers read only the results document: render imports no analysis,
// pipeline, rules or parser package (the document's types, its view and
// the metric names reach it through results and results/metric; the diff
// writers read the diff document, results/diff, that compare fills).
func TestLayoutRenderersReadOnlyResults(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command")
	}
	imports := goList(t, "-f", `{{join .Imports " "}}`, "./render")
	require.Contains(t, imports, module+"results")
	for _, p := range imports {
		rel := strings.TrimPrefix(p, module)
		bad := rel == "analysis" || strings.HasPrefix(rel, "analysis/") || rel == "pipeline" || rel == "rules" ||
			rel == "parser" || strings.HasPrefix(rel, "parser/")
		require.False(t, bad, "render imports %s", rel)
	}
	for _, p := range goList(t, "-deps", "./render") {
		require.NotEqual(t, module+"pipeline", p, "render depends on the pipeline")
	}
	// the document holds the contract alone: results/assemble meets the analysis
	for _, p := range goList(t, "-f", `{{join .Imports " "}}`, "./results") {
		rel := strings.TrimPrefix(p, module)
		bad := rel == "analysis" || strings.HasPrefix(rel, "analysis/") || rel == "pipeline" ||
			rel == "parser" || (strings.HasPrefix(rel, "parser/") && rel != "parser/model")
		require.False(t, bad, "results imports %s", rel)
	}
}

// The one-way rules of the house, on every package each one depends on
// (go list -deps, so an indirect path counts too): pkg's dependencies
// hold none of the module's packages under the forbidden prefixes
// (a prefix P names P and every package below it), apart from allowed.
func TestLayoutDependsOneWay(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command")
	}
	deps := map[string][]string{}
	for _, line := range goList(t, "-f", `{{.ImportPath}}={{join .Deps ","}}`, "./...") {
		pkg, list, _ := strings.Cut(line, "=")
		deps[strings.TrimPrefix(pkg, module)] = strings.Split(list, ",")
	}
	under := func(rel, prefix string) bool { return rel == prefix || strings.HasPrefix(rel, prefix+"/") }
	for _, c := range []struct {
		pkg, why      string
		forbid, allow []string
	}{
		{"rules", "facts reach the rules as data; script edits are made after evaluation",
			[]string{"deploy", "codepatch", "plan", "render", "pipeline", "parser", "inputs"}, []string{"parser/model"}},
		{"compare", "compare takes two documents and only computes",
			[]string{"render", "analysis", "rules", "pipeline", "parser", "inputs", "deploy", "plan"}, []string{"parser/model"}},
		{"results", "the document is the contract: rules and plan fill it, results/assemble meets the analysis",
			[]string{"rules", "analysis", "pipeline", "parser", "inputs", "deploy", "plan", "compare", "render", "results/assemble"}, []string{"parser/model"}},
		{"results/diff", "the diff document holds the comparison alone",
			[]string{"compare", "render", "rules", "analysis", "pipeline", "parser", "inputs", "deploy"}, nil},
		{"render", "renderers read only the results documents",
			[]string{"analysis", "rules", "compare", "pipeline", "parser", "inputs", "deploy", "plan", "codepatch", "results/assemble"}, []string{"parser/model"}},
	} {
		list, ok := deps[c.pkg]
		require.True(t, ok, "no package %s", c.pkg)
		for _, d := range list {
			rel, ours := strings.CutPrefix(d, module)
			if !ours {
				continue
			}
			allowed := false
			for _, a := range c.allow {
				allowed = allowed || rel == a
			}
			for _, f := range c.forbid {
				require.False(t, under(rel, f) && !allowed, "%s depends on %s (%s)", c.pkg, rel, c.why)
			}
		}
	}
}
