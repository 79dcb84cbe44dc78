// Package golden compares test output with golden files and rewrites them
// when the tests run with -update. The flag lives here, and only the
// packages whose tests hold goldens import it: cmd/npuprof (every output on
// the committed traces, testdata/golden) and rules (the generated sections
// of docs/rules.md and docs/json.md). `make golden` rewrites them all:
//
//	go test ./cmd/npuprof ./rules -run 'Golden|TestDocs' -update
package golden

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// Update is the -update flag: rewrite the golden files instead of
// comparing with them.
var Update = flag.Bool("update", false, "rewrite golden files instead of comparing with them")

// Check compares got with the file at path, or writes got there under
// -update. A difference fails the test with the first differing line.
func Check(tb testing.TB, path string, got []byte) {
	tb.Helper()
	if *Update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			tb.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		tb.Fatalf("%v (run the test with -update to write it)", err)
	}
	if !bytes.Equal(got, want) {
		tb.Errorf("%s differs from the output (run with -update if the change is intended):\n%s", path, firstDiff(want, got))
	}
}

// firstDiff names the first line where want and got differ, and shows both.
func firstDiff(want, got []byte) string {
	wl := bytes.Split(want, []byte("\n"))
	gl := bytes.Split(got, []byte("\n"))
	for i := 0; i < len(wl) || i < len(gl); i++ {
		var w, g []byte
		if i < len(wl) {
			w = wl[i]
		}
		if i < len(gl) {
			g = gl[i]
		}
		if !bytes.Equal(w, g) || (i >= len(wl)) != (i >= len(gl)) {
			return "line " + strconv.Itoa(i+1) + ":\n  golden: " + clip(w) + "\n  output: " + clip(g)
		}
	}
	return "(same lines, different bytes)"
}

func clip(b []byte) string {
	const max = 300
	if len(b) > max {
		return string(b[:max]) + "..."
	}
	return string(b)
}
