package testutil

import (
	"os"
	"strings"
	"testing"
)

// SkipLogEnv names the file `make test` collects skips in: go test prints
// a skip only with -v, so a test skipped for a missing tool would go by
// unseen. `make test` prints each distinct line of that file at its end.
const SkipLogEnv = "NPUPROF_SKIP_LOG"

// Skip skips t, saying why, and appends "what: why" to $NPUPROF_SKIP_LOG
// when it is set. what names the tests skipped (the same for all of them,
// so the summary has one line per cause).
func Skip(t testing.TB, what, why string) {
	t.Helper()
	logSkip(what, why)
	t.Skip(oneLine(why))
}

// logSkip appends "what: why" to $NPUPROF_SKIP_LOG when it is set.
func logSkip(what, why string) {
	if p := os.Getenv(SkipLogEnv); p != "" {
		if f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644); err == nil {
			f.WriteString(what + ": " + oneLine(why) + "\n")
			f.Close()
		}
	}
}

// oneLine is s on one line.
func oneLine(s string) string { return strings.ReplaceAll(s, "\n", " ") }
