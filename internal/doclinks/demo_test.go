package doclinks

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// demoCommand is the command docs/cli.md shows the "real output" of; its
// golden (cmd/npuprof golden tests) is what that command prints.
const demoCommand = "$ ./bin/npuprof analyze testdata/traces/ep-fc1-cumsum\n"

// TestCLIDemoOutputIsReal checks that the output docs/cli.md calls "real
// output" of `make demo` is the output: every shown line (a "..." line
// stands for lines left out) is a line of the command's golden, in order.
func TestCLIDemoOutputIsReal(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join(root, "docs", "cli.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, block, ok := strings.Cut(string(doc), demoCommand)
	if !ok {
		t.Fatalf("docs/cli.md no longer shows %q", strings.TrimSpace(demoCommand))
	}
	block, _, _ = strings.Cut(block, "```")
	golden, err := os.ReadFile(filepath.Join(root, "testdata", "golden", "ep-fc1-cumsum.analyze.txt"))
	if err != nil {
		t.Fatal(err)
	}
	out := strings.Split(string(golden), "\n")
	next, shown := 0, 0
	for _, line := range strings.Split(strings.TrimRight(block, "\n"), "\n") {
		if strings.TrimSpace(line) == "..." {
			continue
		}
		shown++
		found := false
		for next < len(out) {
			next++
			if out[next-1] == line {
				found = true
				break
			}
		}
		if !found {
			t.Fatalf("docs/cli.md shows %q, which `npuprof analyze testdata/traces/ep-fc1-cumsum` does not print (or not in this order): copy the output from testdata/golden/ep-fc1-cumsum.analyze.txt", line)
		}
	}
	if shown < 20 {
		t.Fatalf("docs/cli.md shows %d lines of the demo's output, want at least 20", shown)
	}
}
