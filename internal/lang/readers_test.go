package lang

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// readerSources are the packages whose messages reach users as warnings,
// partial and unavailable reasons, notes and errors: the readers, the
// other inputs' readers, the pipeline around them and the driver.
var readerSources = []string{"../parser", "../pipeline", "../inputs", "../driver"}

// readerMessages are the message formats of readerSources' non-test code:
// the format of every Warn(file, format, ...), fmt.Sprintf, fmt.Errorf,
// errkind.Errorf, errors.New and usageErr (the driver's usage errors), every model.Warning's Message, and every
// reason of a skipped row (RowIssues.Skip, written "skipped malformed rows
// (reason: n)"). Keyed by format, valued by where it is.
func readerMessages(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	fset := token.NewFileSet()
	consts := map[string]string{} // string constants, by name
	add := func(e ast.Expr, wrap string) {
		s, ok := formatOf(e, consts)
		// a clause appended to another message ("; analyzed the ...")
		s = strings.TrimPrefix(s, "; ")
		if !ok || !strings.Contains(s, " ") || strings.HasPrefix(s, "%s%s%s") {
			// (a message that begins with three values is composed
			// from parts: TestZHReaderMessages gives it whole)
			return
		}
		if wrap != "" {
			s = strings.Replace(wrap, "%s", s, 1)
		}
		if _, seen := out[s]; !seen {
			out[s] = fset.Position(e.Pos()).String()
		}
	}
	var files []*ast.File
	for _, root := range readerSources {
		require.NoError(t, filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && d.Name() == "testdata" {
				return filepath.SkipDir
			}
			if d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
				return nil
			}
			f, err := parser.ParseFile(fset, p, nil, 0)
			if err != nil {
				return err
			}
			files = append(files, f)
			return nil
		}))
	}
	for _, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			if v, ok := n.(*ast.ValueSpec); ok && len(v.Names) == len(v.Values) {
				for i, name := range v.Names {
					if s, ok := formatOf(v.Values[i], nil); ok {
						consts[name.Name] = s
					}
				}
			}
			return true
		})
	}
	for _, f := range files {
		{
			ast.Inspect(f, func(n ast.Node) bool {
				switch x := n.(type) {
				case *ast.CallExpr:
					if id, ok := x.Fun.(*ast.Ident); ok && id.Name == "usageErr" && len(x.Args) > 0 {
						add(x.Args[0], "") // the driver's usage errors
						return true
					}
					sel, ok := x.Fun.(*ast.SelectorExpr)
					if !ok || len(x.Args) == 0 {
						return true
					}
					pkg, _ := sel.X.(*ast.Ident)
					switch {
					case sel.Sel.Name == "Warn" && len(x.Args) >= 2:
						add(x.Args[1], "")
					case sel.Sel.Name == "Skip" && len(x.Args) == 2:
						add(x.Args[1], "skipped malformed rows (%s: 3)")
					case pkg != nil && pkg.Name == "fmt" && (sel.Sel.Name == "Sprintf" || sel.Sel.Name == "Errorf"):
						add(x.Args[0], "")
					case pkg != nil && pkg.Name == "errors" && sel.Sel.Name == "New":
						add(x.Args[0], "")
					case pkg != nil && pkg.Name == "errkind" && sel.Sel.Name == "Errorf" && len(x.Args) >= 2:
						add(x.Args[1], "")
					}
				case *ast.KeyValueExpr:
					if k, ok := x.Key.(*ast.Ident); ok && k.Name == "Message" {
						add(x.Value, "")
					}
				}
				return true
			})
		}
	}
	return out
}

// formatOf is the format an expression gives: a string literal or a
// constant of consts, or those joined by + with anything else as %s.
func formatOf(e ast.Expr, consts map[string]string) (string, bool) {
	switch x := e.(type) {
	case *ast.Ident:
		s, ok := consts[x.Name]
		return s, ok
	case *ast.BasicLit:
		if x.Kind != token.STRING {
			return "", false
		}
		s, err := strconv.Unquote(x.Value)
		return s, err == nil
	case *ast.BinaryExpr:
		if x.Op != token.ADD {
			return "", false
		}
		a, okA := formatOf(x.X, consts)
		b, okB := formatOf(x.Y, consts)
		if !okA && !okB {
			return "", false
		}
		if !okA {
			a = "%s"
		}
		if !okB {
			b = "%s"
		}
		return a + b, true
	case *ast.ParenExpr:
		return formatOf(x.X, consts)
	}
	return "", false
}

// sampleOf is a message the format could give: names, paths and numbers
// where its verbs are (what a verb takes is checked on its own).
func sampleOf(format string) string {
	return reFormatVerb().ReplaceAllStringFunc(strings.ReplaceAll(format, "%w", "%v"), func(v string) string {
		switch v[len(v)-1] {
		case 'd':
			return "3"
		case 'f', 'g':
			return "1.5"
		case 'q':
			return `"X_1"`
		}
		return "/p/x_1"
	})
}

// Every message the readers and the pipeline write has its Chinese (issue
// 32): under --lang zh none stays an English sentence. The test walks the
// code, so a new warning fails it before any capture produces it.
func TestZHReaderMessages(t *testing.T) {
	msgs := readerMessages(t)
	require.Greater(t, len(msgs), 100, "the walk finds the readers' messages")
	// composed from parts the walk does not join (gather.worldNote)
	for _, m := range []string{
		"ranks 8-15 missing (world of 16); the world size is from profiler_metadata.json parallel_group_info; the analysis covers the 8 rank(s) present",
		"rank 3 missing (world of 4); the world size is from x_1; the analysis covers the 3 rank(s) present",
	} {
		msgs[m] = "gather.worldNote"
	}
	// returned as a plain string, which the walk does not read: the expert
	// pass's reason (analysis.predictEPLB; eplb plan refuses the same dumps
	// with a driver.usageErr, which the walk reads)
	msgs["the loads of some experts are unknown (dumps of some ranks only): a plan needs every expert's load"] = "analysis.predictEPLB"
	var english []string
	for format, at := range msgs {
		zh := Translate(ZH, sampleOf(format))
		if s := EnglishSentences(zh); len(s) > 0 || strings.Contains(zh, "%!") {
			// (%! is a verb its value does not fit: %[2]d where the
			// captured text is a string)
			english = append(english, at+": "+strconv.Quote(format)+" -> "+strconv.Quote(zh))
		}
	}
	sort.Strings(english)
	require.Empty(t, english, "%d reader message(s) without Chinese", len(english))
}
