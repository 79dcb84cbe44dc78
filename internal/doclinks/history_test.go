package doclinks

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// reHistory is what reads as a diary rather than a reference: a date, a
// numbered round or a lesson.
var reHistory = regexp.MustCompile(`\b20\d\d-\d\d-\d\d\b|(?i)\bround \d+|(?i)\blessons?\b`)

// reLessonCite is a code comment citing a numbered lesson.
var reLessonCite = regexp.MustCompile(`(?i)\blessons? \d+`)

// The pages of measurements state the current figures and how they are
// measured, with no dates, rounds or lesson numbers (the history is in
// git); no Go file cites a lesson or the FORMATS file that is not in the
// repository (docs/formats.md is the reference).
func TestDocsCarryNoHistory(t *testing.T) {
	for _, name := range []string{"performance.md", "robustness.md"} {
		b, err := os.ReadFile(filepath.Join(root, "docs", name))
		if err != nil {
			t.Fatal(err)
		}
		s := string(b)
		for _, loc := range reHistory.FindAllStringIndex(s, -1) {
			t.Errorf("docs/%s:%d: %q: state the figure as it is now, without its history", name, lineOf(s, loc[0]), s[loc[0]:loc[1]])
		}
	}
	formats := "FORMATS" + ".md"
	files := sourceFiles(t, ".go")
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		s := string(b)
		rel, _ := filepath.Rel(root, p)
		for _, loc := range reLessonCite.FindAllStringIndex(s, -1) {
			t.Errorf("%s:%d: %q: say the why in one line, not the lesson", rel, lineOf(s, loc[0]), s[loc[0]:loc[1]])
		}
		if i := strings.Index(s, formats); i >= 0 {
			t.Errorf("%s:%d: %s is not in this repository: link docs/formats.md", rel, lineOf(s, i), formats)
		}
	}
	if len(files) < 300 {
		t.Fatalf("only %d Go files found: the walk is broken", len(files))
	}
}
