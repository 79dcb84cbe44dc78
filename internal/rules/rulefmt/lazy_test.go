package rulefmt

import (
	"os"
	"testing"

	"github.com/expr-lang/expr"
	"github.com/expr-lang/expr/parser"
	"github.com/stretchr/testify/require"

	"github.com/npuprof/npuprof/internal/lang"
)

// testBuiltin is npuprof's built-in rule files, read from the source tree.
var testBuiltin = Builtin{FS: os.DirFS(".."), Dir: "builtin", Prefix: "internal/rules/"}

// builtinEager loads the built-in rules compiling every expression and
// template at load time, as user rule files are.
func builtinEager(t testing.TB) *Set {
	t.Helper()
	b := testBuiltin
	b.Eager = true
	set, err := Load(&b)
	require.NoError(t, err)
	files, err := b.Files()
	require.NoError(t, err)
	require.NotEmpty(t, files)
	require.Len(t, set.Rules, len(files), "one rule per built-in file")
	return set
}

// compileAll compiles every expression and template of set that waits
// for first use, and returns the errors and how many it compiled.
func compileAll(set *Set) (errs []error, n int) {
	ex := func(e *Expr) {
		if e == nil {
			return
		}
		n++
		if _, err := e.Program(); err != nil {
			errs = append(errs, err)
		}
	}
	tm := func(tp *Template) {
		if tp == nil {
			return
		}
		n++
		if _, err := tp.Parts(); err != nil {
			errs = append(errs, err)
		}
	}
	for _, r := range set.Rules {
		tm(r.Title)
		ex(r.When)
		ex(r.Saving)
		ex(r.Ranks)
		tm(r.Fix)
		for _, e := range r.Evidence {
			tm(e.Note)
		}
		for _, e := range r.Edits {
			tm(e.Value)
			ex(e.If)
		}
		zh, err := r.textsErr(lang.ZH)
		if err != nil {
			errs = append(errs, err)
		}
		if zh != nil {
			tm(zh.Title)
			tm(zh.Fix)
			for _, n := range zh.Notes {
				tm(n)
			}
		}
	}
	for _, b := range set.Budgets {
		ex(b.Bound)
	}
	return errs, n
}

// Built-in rules compile their templates and expressions on first use, so
// a broken one would only show when it fires; this test compiles every
// one (each var on its own too) and fails on any error, so a broken
// built-in rule fails `make test`.
func TestBuiltinRulesCompileEagerly(t *testing.T) {
	eager := builtinEager(t)
	errs, n := compileAll(eager)
	require.Empty(t, errs)
	require.Greater(t, n, 50)

	lazySet, err := Load(&testBuiltin)
	require.NoError(t, err)
	require.Len(t, lazySet.Rules, len(eager.Rules))
	errs, m := compileAll(lazySet)
	require.Empty(t, errs, "the deferred compile of a built-in rule failed")
	require.Equal(t, n, m)
	for i, r := range lazySet.Rules {
		require.NotNil(t, r.When.lazy, "%s: when is compiled on first use", r.ID)
		require.NotNil(t, r.Title.lazy, "%s: title is compiled on first use", r.ID)
		require.Equal(t, eager.Rules[i].When.Metrics, r.When.Metrics, r.ID)
		require.Equal(t, eager.Rules[i].When.Facts, r.When.Facts, r.ID)
		pe, err := eager.Rules[i].When.Program()
		require.NoError(t, err)
		pl, err := r.When.Program()
		require.NoError(t, err)
		require.Equal(t, pe.Disassemble(), pl.Disassemble(), "%s: the same program compiled now or later", r.ID)
	}
}

// compileExpr starts from a configuration built once; it must compile
// exactly what expr.Compile compiles from the same options, for every
// expression of the built-in rules, and fail with the same errors.
func TestCompileExprIsExprCompile(t *testing.T) {
	set := builtinEager(t)
	budgets, err := Parse("budgets.yaml", []byte("budgets:\n  - \"hccl.allgather.time_us <= baseline * 1.05 + 2\"\n"))
	require.NoError(t, err)
	type one struct {
		src        string
		kind       resultKind
		thresholds map[string]float64
	}
	var all []one
	for _, r := range set.Rules {
		add := func(e *Expr, kind resultKind) {
			if e != nil {
				all = append(all, one{sourcePrefix(r.Vars, neededVars(r.Vars, e.idents)) + e.Source, kind, r.Thresholds})
			}
		}
		tmpl := func(tp *Template) {
			if tp == nil {
				return
			}
			parts, err := tp.Parts()
			require.NoError(t, err)
			for _, p := range parts {
				add(p.Expr, kindAny)
			}
		}
		for _, v := range r.Vars {
			all = append(all, one{sourcePrefix(r.Vars, neededVars(r.Vars, v.idents)) + v.Source, kindAny, r.Thresholds})
		}
		add(r.When, kindBool)
		add(r.Saving, kindFloat)
		add(r.Ranks, kindAny)
		tmpl(r.Title)
		tmpl(r.Fix)
		for _, e := range r.Evidence {
			tmpl(e.Note)
		}
		for _, e := range r.Edits {
			tmpl(e.Value)
			add(e.If, kindBool)
		}
	}
	add := budgets.Budgets[0].Bound
	all = append(all, one{add.Source, kindFloat, nil})
	require.Greater(t, len(all), 100)
	for _, x := range all {
		want, err := expr.Compile(x.src, exprOptions(x.kind, x.thresholds)...)
		require.NoError(t, err, x.src)
		got, err := compileExpr(x.src, x.kind, x.thresholds)
		require.NoError(t, err, x.src)
		require.Equal(t, want.Disassemble(), got.Disassemble(), x.src)
	}
	for _, bad := range []one{
		{`metric("hccl.total.time_us") + "a"`, kindAny, nil},
		{`us(1) > 2`, kindBool, nil},
		{`pct(1)`, kindFloat, nil},
		{`nosuch(1)`, kindAny, nil},
		{`1 +`, kindAny, nil},
		{`let a = threshold.x; a + "x"`, kindFloat, map[string]float64{"x": 1}},
	} {
		_, want := expr.Compile(bad.src, exprOptions(bad.kind, bad.thresholds)...)
		_, got := compileExpr(bad.src, bad.kind, bad.thresholds)
		require.Error(t, want, bad.src)
		require.Error(t, got, bad.src)
		require.Equal(t, want.Error(), got.Error(), bad.src)
	}
}

// TestCompileParsedIsExprCompile holds compileParsed to expr.Compile when
// given parser.Parse's tree (which reads count(...) as expr-lang's builtin,
// where Env overrides it) and when its programs are reused: a source
// compiled with other thresholds is another program.
func TestCompileParsedIsExprCompile(t *testing.T) {
	for _, x := range []struct {
		src        string
		kind       resultKind
		thresholds map[string]float64
	}{
		{`count("kernels.total.count") >= 2 && true`, kindBool, nil},
		{`max(metric("kernels.total.count"), 2) + 0.5`, kindFloat, nil},
		{`metric("kernels.total.count") > threshold.test_reuse`, kindBool, map[string]float64{"test_reuse": 1}},
		{`metric("kernels.total.count") > threshold.test_reuse`, kindBool, map[string]float64{"test_reuse": 2}},
	} {
		want, err := expr.Compile(x.src, exprOptions(x.kind, x.thresholds)...)
		require.NoError(t, err, x.src)
		for range 2 {
			tree, err := parser.Parse(x.src)
			require.NoError(t, err, x.src)
			got, err := compileParsed(x.src, x.src, tree, nil, x.kind, x.thresholds)
			require.NoError(t, err, x.src)
			require.Equal(t, want.Disassemble(), got.Disassemble(), x.src)
		}
	}
}

// TestBoundVarsCompileAsText holds every built-in expression that binds
// vars by value to the program of its text with the bindings written in
// front (`let v = __var_float(i); ` + source), which compileTree builds as
// nodes instead (bindLets).
func TestBoundVarsCompileAsText(t *testing.T) {
	set := builtinEager(t)
	n := 0
	for _, r := range set.Rules {
		check := func(e *Expr, kind resultKind, scope int) {
			if e == nil {
				return
			}
			c := &compiler{l: &loader{}, rule: r, scope: scope}
			prefix, binds, _, ok := c.varPrefix(nil, 0, "", e.idents)
			require.True(t, ok, e.Source)
			if len(binds) == 0 {
				return
			}
			n++
			want, err := expr.Compile(prefix+e.Source, exprOptions(kind, r.Thresholds)...)
			require.NoError(t, err, prefix+e.Source)
			got, err := e.Program()
			require.NoError(t, err, e.Source)
			require.Equal(t, want.Disassemble(), got.Disassemble(), prefix+e.Source)
		}
		tmpl := func(tp *Template) {
			if tp == nil {
				return
			}
			parts, err := tp.Parts()
			require.NoError(t, err)
			for _, p := range parts {
				check(p.Expr, kindAny, -1)
			}
		}
		for i, v := range r.Vars {
			check(v.expr, kindAny, i)
		}
		check(r.When, kindBool, -1)
		check(r.Saving, kindFloat, -1)
		check(r.Ranks, kindAny, -1)
		tmpl(r.Title)
		tmpl(r.Fix)
		for _, e := range r.Evidence {
			tmpl(e.Note)
		}
		for _, e := range r.Edits {
			tmpl(e.Value)
			check(e.If, kindBool, -1)
		}
	}
	require.Greater(t, n, 50)
}
