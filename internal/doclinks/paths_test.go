package doclinks

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// reRepoPath is a path of this repository: it starts at a top-level folder
// of code, docs or inputs.
var reRepoPath = regexp.MustCompile(`^(cmd|docs|internal|scripts|testdata|tools)/[A-Za-z0-9_./*-]*$`)

// rePlaceholder is a path component that stands for any name (NAME.go,
// FORMAT/, ID.yaml, P/...).
var rePlaceholder = regexp.MustCompile(`^(NAME|FORMAT|ID|FILE)(\.[a-z]+)?$|^\.\.\.$`)

// lineOf is the 1-based line of offset i in s.
func lineOf(s string, i int) int { return strings.Count(s[:i], "\n") + 1 }

// existsOrPlaceholder reports whether p names a file or folder of the
// repository: a glob must match one, and a path with a placeholder
// component is checked up to that component.
func existsOrPlaceholder(p string) bool {
	parts := strings.Split(strings.TrimSuffix(p, "/"), "/")
	for i, c := range parts {
		if rePlaceholder.MatchString(c) {
			parts = parts[:i]
			break
		}
	}
	p = filepath.Join(append([]string{root}, parts...)...)
	if strings.Contains(p, "*") {
		m, _ := filepath.Glob(p)
		return len(m) > 0
	}
	_, err := os.Stat(p)
	return err == nil
}

// docs/architecture.md's recipes (add a pass, a metric, a rule, an input
// format, an output, ...) and its package tables name the files a change
// of that kind touches: every repository path in one of its code spans
// exists, so a file moved or renamed fails here until the page follows.
func TestArchitectureNamesFilesThatExist(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(root, "docs", "architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	checked := 0
	for _, loc := range reCode.FindAllStringIndex(doc, -1) {
		for _, f := range strings.Fields(strings.Trim(doc[loc[0]:loc[1]], "`")) {
			f = strings.TrimRight(strings.TrimPrefix(f, "./"), ".,;:)")
			if !reRepoPath.MatchString(f) {
				continue
			}
			checked++
			if !existsOrPlaceholder(f) {
				t.Errorf("docs/architecture.md:%d: `%s` does not exist", lineOf(doc, loc[0]), f)
			}
		}
	}
	if checked < 100 {
		t.Fatalf("only %d paths found in docs/architecture.md: the scanner is broken", checked)
	}
}

// reGoCommand is a go command run on a package path: `go test ./PATH`,
// `go generate ./PATH`, `go run ./PATH` (flags before the path allowed).
var reGoCommand = regexp.MustCompile(`\bgo (?:test|generate|run|build|vet|list) (?:-\S+ )*\./([A-Za-z0-9_./-]*)`)

// rePlaceholderDir is a folder name that stands for any (./PATH).
var rePlaceholderDir = regexp.MustCompile(`(^|/)[A-Z]+(/|$)`)

// sourceFiles are the repository's files ending in one of exts, outside
// testdata and the hidden folders.
func sourceFiles(t *testing.T, exts ...string) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); p != root && (n == "testdata" || strings.HasPrefix(n, ".")) {
				return filepath.SkipDir
			}
			return nil
		}
		for _, e := range exts {
			if strings.HasSuffix(p, e) {
				files = append(files, p)
				break
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// Every `go test ./PATH` (generate, run, build, vet, list) that the docs,
// the Makefile, the scripts and the code's comments and messages tell a
// reader to run names a folder that exists: from the repository root, or,
// for a //go:generate line, from the file's folder.
func TestGoCommandPathsExist(t *testing.T) {
	var files []string
	files = append(files, markdownFiles(t)...)
	files = append(files, filepath.Join(root, "Makefile"))
	files = append(files, sourceFiles(t, ".go", ".sh")...)
	checked := 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		s := string(b)
		for _, m := range reGoCommand.FindAllStringSubmatchIndex(s, -1) {
			p := strings.TrimRight(s[m[2]:m[3]], ".,;:)")
			p = strings.TrimSuffix(strings.TrimSuffix(p, "..."), "/")
			if rePlaceholderDir.MatchString(p) {
				continue // a placeholder: ./PATH
			}
			checked++
			fromRoot := filepath.Join(root, p)
			fromFile := filepath.Join(filepath.Dir(f), p)
			if st, err := os.Stat(fromRoot); err == nil && st.IsDir() {
				continue
			}
			if st, err := os.Stat(fromFile); err == nil && st.IsDir() && strings.HasSuffix(f, ".go") {
				continue
			}
			rel, _ := filepath.Rel(root, f)
			t.Errorf("%s:%d: %q names no folder of the repository", rel, lineOf(s, m[0]), s[m[0]:m[1]])
		}
	}
	if checked < 20 {
		t.Fatalf("only %d go commands found: the scanner is broken", checked)
	}
}
