package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/npuprof/npuprof/internal/render"
)

// rules explain fills a rule's "Why" to 79 columns in either language: a
// Chinese line is not cut at its few spaces after 76 bytes (26 characters),
// nor left wider than the terminal, nor opened with a comma.
func TestRulesExplainWhyFills(t *testing.T) {
	for _, l := range []string{"en", "zh"} {
		for _, id := range []string{"comm-bound", "comm-ep-flashcomm", "expert-imbalance", "moe-dispatch-combine", "vllm-ascend-upgrade"} {
			code, out, errs := run("rules", "explain", id, "--lang", l)
			require.Equal(t, ExitOK, code, errs)
			_, rest, ok := strings.Cut(out, "\nWhy\n")
			require.True(t, ok, out)
			why, _, _ := strings.Cut(rest, "\n\n")
			lines := strings.Split(why, "\n")
			for i, line := range lines {
				assert.LessOrEqual(t, render.DisplayWidth(line), 79, "%s %s: %q", l, id, line)
				assert.False(t, strings.HasPrefix(line, "  ，"), "%s %s: %q", l, id, line)
				if i < len(lines)-1 {
					assert.GreaterOrEqual(t, render.DisplayWidth(line), 60, "%s %s: %q", l, id, line)
				}
			}
		}
	}
}

// rules list fits an 80-column terminal in either language: each rule's
// first sentence is wrapped under it (a 156-column line of Chinese, a
// 172-column one of English otherwise).
func TestRulesListFits80(t *testing.T) {
	for _, l := range []string{"en", "zh"} {
		code, out, errs := run("rules", "list", "--lang", l)
		require.Equal(t, ExitOK, code, errs)
		require.Contains(t, out, "comm-ep-flashcomm")
		for _, line := range strings.Split(out, "\n") {
			assert.LessOrEqual(t, render.DisplayWidth(line), 80, "%s: %q", l, line)
		}
	}
}
