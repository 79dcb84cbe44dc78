package rulefmt

import (
	"fmt"
	"io/fs"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/npuprof/npuprof/internal/errkind"
)

// A YAML typo in a rule file is named by the line and column of the typo,
// in plain words, never by the line where the enclosing block began nor in
// the YAML library's own words.
func TestYAMLSyntaxErrorPosition(t *testing.T) {
	for _, tc := range []struct{ name, src, want string }{
		{"unclosed quote", "rules:\n  - id: a-b\n    title: t\n    when: \"true\n    fix: f\n",
			`u.yaml:4:11: the text opened with " here is never closed`},
		{"dedented key", "rules:\n  - id: a-b\n    title: t\n   when: true\n    fix: f\n",
			"u.yaml:4:4: this line is not indented as the list above it: align it with its siblings"},
		{"tab", "rules:\n  - id: a-b\n\ttitle: t\n", "u.yaml:3:1: a tab in the indentation: indent with spaces"},
		{"unclosed list", "rules:\n  - id: a-b\n    title: [t\n    when: true\n", "u.yaml:3:12: a list opened with [ is not closed with ]"},
		{"colon in a value", "rules:\n  - id: a-b\n    title: t: x\n", `u.yaml:3:13: unexpected ':' here: quote a value that holds ': '`},
		{"over-indented key", "rules:\n  - id: a-b\n    title: t\n      when: x\n", "u.yaml:4:11: unexpected ':' here"},
		{"text after a quote", "rules:\n- id: a\n  title: \"x\" y\n", "u.yaml:3:3: this line does not continue the mapping above it"},
		{"unclosed single quote", "rules:\n  - id: a-b\n    title: 'it''s\n", "u.yaml:3:12: the text opened with ' here is never closed"},
		// a quoted text over several lines before the typo: the cut file
		// fails there in other words, which are not the typo's
		{"after a multi-line text", "rules:\n  - id: a-b\n    title: \"one\n      two\"\n    why: w\n   when: true\n",
			"u.yaml:6:4: this line is not indented as the list above it"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("u.yaml", []byte(tc.src))
			p := errkind.Problems(err)
			require.Len(t, p, 1, "%v", err)
			require.True(t, strings.HasPrefix(p[0], tc.want), "got  %s\nwant %s", p[0], tc.want)
			require.NotContains(t, p[0], "yaml: ")
			require.NotContains(t, p[0], "did not find")
		})
	}
}

// A typo deep inside a built-in rule file (the YAML library names the
// rule's first line) is named at its own line.
func TestYAMLSyntaxErrorInALongFile(t *testing.T) {
	data, err := fs.ReadFile(testBuiltin.FS, "builtin/graph-capture-sizes.yaml")
	require.NoError(t, err)
	lines := strings.Split(string(data), "\n")
	at := -1
	for i, l := range lines {
		if i > 20 && strings.HasPrefix(l, "    why:") {
			at = i
			break
		}
	}
	require.Positive(t, at, "no why: key past line 20")
	lines[at] = "   " + strings.TrimPrefix(lines[at], "    ") // one space short
	_, err = Parse("g.yaml", []byte(strings.Join(lines, "\n")))
	p := errkind.Problems(err)
	require.Len(t, p, 1, "%v", err)
	require.True(t, strings.HasPrefix(p[0], fmt.Sprintf("g.yaml:%d:4: ", at+1)), p[0])
}
