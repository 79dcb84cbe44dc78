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
// the readers only through the pipeline and the model.
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
// writers read compare's comparison of two documents).
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
	// the document holds the contract alone: results/build meets the analysis
	for _, p := range goList(t, "-f", `{{join .Imports " "}}`, "./results") {
		rel := strings.TrimPrefix(p, module)
		bad := rel == "analysis" || strings.HasPrefix(rel, "analysis/") || rel == "pipeline" ||
			rel == "parser" || (strings.HasPrefix(rel, "parser/") && rel != "parser/model")
		require.False(t, bad, "results imports %s", rel)
	}
}
