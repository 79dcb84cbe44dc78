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
// the inputs beside a profile (internal/inputs/...: expert loads, serving logs) it
// reads itself.
func TestLayoutLoadingGoesThroughPipeline(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command")
	}
	for _, p := range goList(t, "-deps", "./internal/analysis/...") {
		if !strings.HasPrefix(p, module) {
			continue
		}
		rel := strings.TrimPrefix(p, module)
		ok := rel == "internal/parser/model" || rel == "internal/analysis" || strings.HasPrefix(rel, "internal/analysis/")
		require.True(t, ok, "analysis depends on %s", rel)
	}
	for _, p := range goList(t, "-f", `{{join .Imports " "}}`, "./cmd/npuprof") {
		rel := strings.TrimPrefix(p, module)
		ok := !strings.HasPrefix(p, module) || rel == "internal/parser/model" || (rel != "internal/parser" && !strings.HasPrefix(rel, "internal/parser/"))
		require.True(t, ok, "cmd/npuprof imports %s", rel)
	}
}

// Renderers read only the results document: render imports no analysis,
// pipeline, rules or parser package (the document's types, its view and
// the metric names reach it through results and internal/results/metric; the diff
// writers read the diff document, internal/results/diff, that compare fills).
func TestLayoutRenderersReadOnlyResults(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command")
	}
	imports := goList(t, "-f", `{{join .Imports " "}}`, "./internal/render")
	require.Contains(t, imports, module+"internal/results")
	for _, p := range imports {
		rel := strings.TrimPrefix(p, module)
		bad := rel == "internal/analysis" || strings.HasPrefix(rel, "internal/analysis/") || rel == "internal/pipeline" || rel == "internal/rules" ||
			rel == "internal/parser" || strings.HasPrefix(rel, "internal/parser/")
		require.False(t, bad, "render imports %s", rel)
	}
	for _, p := range goList(t, "-deps", "./internal/render") {
		require.NotEqual(t, module+"internal/pipeline", p, "render depends on the pipeline")
	}
	// the document holds the contract alone: internal/results/assemble meets the analysis
	for _, p := range goList(t, "-f", `{{join .Imports " "}}`, "./internal/results") {
		rel := strings.TrimPrefix(p, module)
		bad := rel == "internal/analysis" || strings.HasPrefix(rel, "internal/analysis/") || rel == "internal/pipeline" ||
			rel == "internal/parser" || (strings.HasPrefix(rel, "internal/parser/") && rel != "internal/parser/model")
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
		{"internal/rules", "facts reach the rules as data; script edits are made after evaluation",
			[]string{"internal/deploy", "internal/codepatch", "internal/plan", "internal/render", "internal/pipeline", "internal/parser", "internal/inputs"}, []string{"internal/parser/model"}},
		{"internal/compare", "compare takes two documents and only computes",
			[]string{"internal/render", "internal/analysis", "internal/rules", "internal/pipeline", "internal/parser", "internal/inputs", "internal/deploy", "internal/plan"}, []string{"internal/parser/model"}},
		{"internal/results", "the document is the contract: rules and plan fill it, results/assemble meets the analysis",
			[]string{"internal/rules", "internal/analysis", "internal/pipeline", "internal/parser", "internal/inputs", "internal/deploy", "internal/plan", "internal/compare", "internal/render", "internal/results/assemble"}, []string{"internal/parser/model"}},
		{"internal/results/diff", "the diff document holds the comparison alone",
			[]string{"internal/compare", "internal/render", "internal/rules", "internal/analysis", "internal/pipeline", "internal/parser", "internal/inputs", "internal/deploy"}, nil},
		{"internal/render", "renderers read only the results documents",
			[]string{"internal/analysis", "internal/rules", "internal/compare", "internal/pipeline", "internal/parser", "internal/inputs", "internal/deploy", "internal/plan", "internal/codepatch", "internal/results/assemble"}, []string{"internal/parser/model"}},
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
