package golden

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// Every package with tests accepts -update: `go test ./... -run Golden
// -update` fails in a test binary that does not define the flag. A package
// gets it by importing testutil (which imports this package) or this
// package, in any of its test files (flags_test.go by convention).
func TestEveryTestPackageAcceptsUpdate(t *testing.T) {
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Join(filepath.Dir(file), "..", "..")
	const testutil, golden = `"github.com/npuprof/npuprof/internal/testutil"`, `"github.com/npuprof/npuprof/internal/golden"`
	has := map[string]bool{}    // dir -> some test file imports one of them
	tested := map[string]bool{} // dir -> has test files
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if path != root && (strings.HasPrefix(name, ".") || name == "testdata") {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil && path != root {
				return filepath.SkipDir // another module: not in ./...
			}
			return nil
		}
		if !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		dir := filepath.Dir(path)
		tested[dir] = true
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if strings.Contains(string(b), testutil) || strings.Contains(string(b), golden) {
			has[dir] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	here := filepath.Dir(file)
	for dir := range tested {
		// testutil imports this package from a non-test file; this
		// package defines the flag
		if has[dir] || dir == here || filepath.Base(dir) == "testutil" {
			continue
		}
		rel, _ := filepath.Rel(root, dir)
		t.Errorf("%s: its tests do not accept -update; add a flags_test.go importing %s", rel, golden)
	}
	if len(tested) < 10 {
		t.Fatalf("found only %d test packages under %s", len(tested), root)
	}
}
