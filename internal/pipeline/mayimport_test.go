package pipeline

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/npuprof/npuprof/internal/testutil"
)

// reCodeSpan is one `name` of a table cell.
var reCodeSpan = regexp.MustCompile("`([^`]+)`")

// mayImport reads the table of docs/architecture.md's "What each package
// may import": package pattern -> the patterns it may import.
func mayImport(t *testing.T) map[string][]string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(testutil.RepoRoot(), "docs", "architecture.md"))
	require.NoError(t, err)
	_, sec, ok := strings.Cut(string(data), "\n## What each package may import\n")
	require.True(t, ok, "docs/architecture.md has no section \"What each package may import\"")
	sec, _, _ = strings.Cut(sec, "\n## ")
	rows := map[string][]string{}
	for _, line := range strings.Split(sec, "\n") {
		cells := strings.Split(line, "|")
		if len(cells) != 4 || !strings.Contains(cells[1], "`") {
			continue
		}
		var may []string
		for _, m := range reCodeSpan.FindAllStringSubmatch(cells[2], -1) {
			may = append(may, m[1])
		}
		for _, m := range reCodeSpan.FindAllStringSubmatch(cells[1], -1) {
			_, dup := rows[m[1]]
			require.False(t, dup, "docs/architecture.md: package %s has two rows", m[1])
			rows[m[1]] = may
		}
	}
	require.NotEmpty(t, rows, "docs/architecture.md: the may-import table has no rows")
	return rows
}

// matches is whether pattern (P or P/...) names pkg.
func matches(pattern, pkg string) bool {
	if p, ok := strings.CutSuffix(pattern, "/..."); ok {
		return pkg == p || strings.HasPrefix(pkg, p+"/")
	}
	return pkg == pattern
}

// rowOf is the row of docs/architecture.md that names pkg.
func rowOf(rows map[string][]string, pkg string) ([]string, bool) {
	for pattern, may := range rows {
		if matches(pattern, pkg) {
			return may, true
		}
	}
	return nil, false
}

// Every package imports only what its row of docs/architecture.md allows.
func TestLayoutMayImport(t *testing.T) {
	rows := mayImport(t)
	for _, line := range goList(t, "-f", `{{.ImportPath}}={{join .Imports ","}}`, "./...") {
		path, imports, _ := strings.Cut(line, "=")
		pkg := strings.TrimPrefix(path, module)
		may, ok := rowOf(rows, pkg)
		require.True(t, ok, "package %s has no row in docs/architecture.md's may-import table: add one", pkg)
		for _, imp := range strings.Split(imports, ",") {
			rel, ours := strings.CutPrefix(imp, module)
			if !ours {
				continue
			}
			allowed := false
			for _, pattern := range may {
				allowed = allowed || matches(pattern, rel)
			}
			require.True(t, allowed, "%s imports %s, outside its row of docs/architecture.md's may-import table (%s)",
				pkg, rel, strings.Join(may, ", "))
		}
	}
}

// The table's rules of the house: analysis reads only the model, compare
// writes nothing, rules get facts as data.
func TestLayoutMayImportKeepsTheOneWayRules(t *testing.T) {
	rows := mayImport(t)
	forbidden := map[string][]string{
		"internal/analysis":  {"internal/parser", "internal/parser/summary", "internal/pipeline", "internal/rules", "internal/results", "internal/render"},
		"internal/compare":   {"internal/render", "internal/analysis", "internal/rules", "internal/parser", "internal/deploy"},
		"internal/rules":     {"internal/deploy", "internal/render"},
		"internal/parser":    {"internal/analysis", "internal/rules", "internal/render"},
		"internal/results":   {"internal/render", "internal/compare", "internal/rules", "internal/analysis", "internal/results/assemble"},
		"internal/pipeline":  {"internal/rules", "internal/render", "internal/results"},
		"internal/fix":       {"internal/rules", "internal/deploy"},
		"internal/render":    {"internal/pipeline", "internal/parser", "internal/inputs/vllmserve", "internal/inputs/expertload", "internal/analysis", "internal/rules", "internal/compare", "internal/deploy", "internal/plan", "internal/results/assemble"},
		"internal/plan":      {"internal/render", "internal/deploy"},
		"internal/codepatch": {"internal/render"},
	}
	for pkg, bad := range forbidden {
		may, ok := rowOf(rows, pkg)
		require.True(t, ok, "no row for %s", pkg)
		for _, b := range bad {
			for _, pattern := range may {
				require.False(t, matches(pattern, b), "docs/architecture.md lets %s import %s", pkg, b)
			}
		}
	}
}
