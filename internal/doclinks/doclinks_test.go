package doclinks

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

const root = "../.."

// reLink finds Markdown links and images: [text](target) and ![alt](target).
var reLink = regexp.MustCompile(`!?\[[^\]]*\]\(([^)\s]+)\)`)

// reCode is an inline code span, whose text is not a link.
var reCode = regexp.MustCompile("`[^`]*`")

// markdownFiles returns README.md and every .md file under docs/.
func markdownFiles(t *testing.T) []string {
	files := []string{filepath.Join(root, "README.md")}
	err := filepath.WalkDir(filepath.Join(root, "docs"), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".md") {
			files = append(files, p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// scan returns the link targets of a Markdown file outside code, with their
// line numbers, and the anchors of its headings.
func scan(t *testing.T, path string) (links map[int][]string, anchors map[string]bool) {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	links, anchors = map[int][]string{}, map[string]bool{}
	seen := map[string]int{}
	fenced := false
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			continue
		}
		if fenced {
			continue
		}
		if strings.HasPrefix(line, "#") {
			a := slug(strings.TrimLeft(line, "# "))
			if k := seen[a]; k > 0 {
				anchors[a+"-"+itoa(k)] = true
			} else {
				anchors[a] = true
			}
			seen[a]++
		}
		for _, m := range reLink.FindAllStringSubmatch(reCode.ReplaceAllString(line, ""), -1) {
			links[n] = append(links[n], m[1])
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return links, anchors
}

func itoa(k int) string { return strconv.Itoa(k) }

// slug is GitHub's heading anchor: lower case, letters, digits, '-' and
// '_' kept, spaces to '-', everything else dropped.
func slug(h string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(h)) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

func TestRelativeLinks(t *testing.T) {
	files := markdownFiles(t)
	anchorsOf := map[string]map[string]bool{}
	linksOf := map[string]map[int][]string{}
	for _, f := range files {
		linksOf[f], anchorsOf[f] = scan(t, f)
	}
	checked := 0
	for _, f := range files {
		for n, targets := range linksOf[f] {
			for _, target := range targets {
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				checked++
				file, anchor, _ := strings.Cut(target, "#")
				dest := f
				if file != "" {
					dest = filepath.Join(filepath.Dir(f), file)
					if _, err := os.Stat(dest); err != nil {
						t.Errorf("%s:%d: link %q: no such file", f, n, target)
						continue
					}
				}
				if anchor == "" || !strings.HasSuffix(dest, ".md") {
					continue
				}
				a, ok := anchorsOf[dest]
				if !ok {
					_, a = scan(t, dest)
				}
				if !a[anchor] {
					t.Errorf("%s:%d: link %q: %s has no heading with anchor #%s", f, n, target, dest, anchor)
				}
			}
		}
	}
	if checked < 20 {
		t.Fatalf("only %d relative links found: the scanner is broken", checked)
	}
}

func TestSlug(t *testing.T) {
	for h, want := range map[string]string{
		"Partial inputs: findings from a truncated file":     "partial-inputs-findings-from-a-truncated-file",
		"Every input: msprof, SQLite exports, clusters":      "every-input-msprof-sqlite-exports-clusters",
		"The JSON document (`npuprof.analysis/v1`)":          "the-json-document-npuprofanalysisv1",
		"`device_tasks` — every task of the device timeline": "device_tasks--every-task-of-the-device-timeline",
	} {
		if got := slug(h); got != want {
			t.Errorf("slug(%q) = %q, want %q", h, got, want)
		}
	}
}

// The README stays a short start: at most 200 lines, its sections in the
// order a newcomer needs them.
func TestREADMEShape(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > 200 {
		t.Errorf("README.md has %d lines, more than 200: move reference material to docs/", len(lines))
	}
	var got []string
	fenced := false
	for _, l := range lines {
		if strings.HasPrefix(l, "```") {
			fenced = !fenced
		}
		if !fenced && strings.HasPrefix(l, "## ") {
			got = append(got, strings.TrimPrefix(l, "## "))
		}
	}
	want := []string{"Install", "Capture a profile", "Try it", "Read the output", "Use it in CI", "Documentation"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("README.md sections = %q, want %q", got, want)
	}
}

// The README's layout table has one line for every top-level folder of the
// repository (hidden ones such as .ci included, .git and ignored output
// folders such as out/ and bin/ left out), and names no folder that is gone.
func TestREADMELayoutListsEveryFolder(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(b), "\n### Layout\n")
	if !ok {
		t.Fatal("README.md has no ### Layout section")
	}
	listed := map[string]bool{}
	for _, m := range regexp.MustCompile("(?m)^\\| `([^`/]+)/` \\|").FindAllStringSubmatch(table, -1) {
		listed[m[1]] = true
	}
	entries, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	ignored := map[string]bool{".git": true, "out": true, "bin": true, ".cache": true}
	for _, e := range entries {
		if !e.IsDir() || ignored[e.Name()] {
			continue
		}
		if !listed[e.Name()] {
			t.Errorf("README.md's layout does not list the top-level folder %s/", e.Name())
		}
		delete(listed, e.Name())
	}
	for name := range listed {
		t.Errorf("README.md's layout lists %s/, which does not exist", name)
	}
}
