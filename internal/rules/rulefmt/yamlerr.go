package rulefmt

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/npuprof/npuprof/internal/lazyre"
)

// The YAML library reports a syntax error by the line where the enclosing
// block began (a typo on line 9 of a rule is "line 2"), with no column and
// in the scanner's words. syntaxProblem finds the line itself: the first
// line at which the file, cut there, fails with the same problem (at or
// after the line the library names, which never comes after the
// problem), then the column on it, and says it in plain words.

// reYAMLErr splits the library's "yaml: line N: problem".
var reYAMLErr = lazyre.New(`^(?:yaml: )?(?:line (\d+): )?(.*)$`)

// maxProbe bounds how many cut files syntaxProblem decodes (a rule file is
// far shorter); past it the library's line stands.
const maxProbe = 2000

// syntaxProblem is the YAML syntax error err of file's data as
// FILE:LINE:COL: what is wrong.
func syntaxProblem(file string, data []byte, err error) string {
	m := reYAMLErr().FindStringSubmatch(err.Error())
	problem := m[2]
	from, _ := strconv.Atoi(m[1])
	from = max(from, 1)
	lines := bytes.SplitAfter(data, []byte("\n"))
	line := from
	for k := from; k <= len(lines) && k < from+maxProbe; k++ {
		var n yaml.Node
		cut := data[:len(bytes.Join(lines[:k], nil))]
		if e := yaml.NewDecoder(bytes.NewReader(cut)).Decode(&n); e != nil && reYAMLErr().FindStringSubmatch(e.Error())[2] == problem {
			line = k
			break
		}
	}
	text := ""
	if line <= len(lines) {
		text = strings.TrimRight(string(lines[line-1]), "\r\n")
	}
	col, words := plainYAML(problem, text)
	return fmt.Sprintf("%s:%d:%d: %s", file, line, col, words)
}

// plainYAML says the library's problem in plain words and finds its column
// on the line (1-based; the first character that is not a space when
// nothing better is known).
func plainYAML(problem, text string) (int, string) {
	col := len(text) - len(strings.TrimLeft(text, " ")) + 1
	switch problem {
	case "found a tab character that violates indentation", "found character that cannot start any token":
		if i := strings.IndexByte(text, '\t'); i >= 0 && strings.TrimLeft(text[:i], " ") == "" {
			return i + 1, "a tab in the indentation: indent with spaces"
		}
		return col, "a character that cannot start a value here (` @ and % must be quoted: \"...\")"
	case "found unexpected end of stream":
		if i := unclosedQuote(text); i >= 0 {
			return i + 1, fmt.Sprintf("the text opened with %c here is never closed", text[i])
		}
		return col, "the file ends inside an unfinished value"
	case "mapping values are not allowed in this context":
		if i := lastColon(text); i >= 0 {
			col = i + 1
		}
		return col, "unexpected ':' here: quote a value that holds ': ' (title: \"a: b\"), or indent this line as its siblings"
	case "did not find expected ',' or ']'":
		return flowOpen(text, '[', col), "a list opened with [ is not closed with ]"
	case "did not find expected ',' or '}'":
		return flowOpen(text, '{', col), "a mapping opened with { is not closed with } (quote a text that holds {{ }})"
	case "did not find expected key":
		return col, "this line does not continue the mapping above it: check its indentation, and that nothing follows a closing quote"
	case "did not find expected '-' indicator":
		return col, "this line is not indented as the list above it: align it with its siblings"
	case "could not find expected ':'":
		return col, "expected NAME: value"
	case "did not find expected node content":
		if i := unclosedFlow(text); i >= 0 && text[i] == '[' {
			return i + 1, "a list opened with [ is not closed with ]"
		} else if i >= 0 {
			return i + 1, "a mapping opened with { is not closed with } (quote a text that holds {{ }})"
		}
		return col, "a value is missing here"
	case "block sequence entries are not allowed in this context":
		return col, "a list item where a value is expected: put it on its own line, under its key"
	}
	return col, problem
}

// unclosedQuote is the index of the quote on text that opens a quoted
// value and is not closed on the line, or -1.
func unclosedQuote(text string) int {
	open := -1
	var q byte
	for i := 0; i < len(text); i++ {
		c := text[i]
		switch {
		case open < 0 && (c == '"' || c == '\''):
			open, q = i, c
		case open >= 0 && c == '\\' && q == '"':
			i++
		case open >= 0 && c == q:
			if q == '\'' && i+1 < len(text) && text[i+1] == '\'' {
				i++ // '' is a quote inside single quotes
				continue
			}
			open = -1
		case open < 0 && c == '#' && (i == 0 || text[i-1] == ' '):
			return -1
		}
	}
	return open
}

// lastColon is the index of the last ':' on text that ends a key (a space
// or the end of the line after it), outside quotes, or -1.
func lastColon(text string) int {
	last := -1
	unquoted(text, func(i int) {
		if text[i] == ':' && (i+1 == len(text) || text[i+1] == ' ') {
			last = i
		}
	})
	return last
}

// unquoted calls f with the index of each byte of text outside quotes.
func unquoted(text string, f func(i int)) {
	var q byte
	for i := 0; i < len(text); i++ {
		switch c := text[i]; {
		case q != 0:
			if c == q {
				q = 0
			}
		case c == '"' || c == '\'':
			q = c
		default:
			f(i)
		}
	}
}

// flowOpen is the column of the first open on text, else col.
func flowOpen(text string, open byte, col int) int {
	if i := strings.IndexByte(text, open); i >= 0 {
		return i + 1
	}
	return col
}

// unclosedFlow is the index of the last [ or { on text, outside quotes,
// that the line does not close, or -1.
func unclosedFlow(text string) int {
	var open []int
	unquoted(text, func(i int) {
		switch text[i] {
		case '[', '{':
			open = append(open, i)
		case ']', '}':
			if len(open) > 0 {
				open = open[:len(open)-1]
			}
		}
	})
	if len(open) == 0 {
		return -1
	}
	return open[len(open)-1]
}
