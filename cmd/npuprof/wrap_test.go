package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// squash drops all white space: the terminal summary wraps its lines at
// 100 columns (a long path even mid-word), so a test that looks for a
// sentence in it compares the text without line breaks and indents.
func squash(s string) string { return strings.Join(strings.Fields(s), "") }

// requireText requires want in the terminal output out, wrapped or not.
func requireText(t *testing.T, out, want string, msg ...any) {
	t.Helper()
	require.Contains(t, squash(out), squash(want), msg...)
}
