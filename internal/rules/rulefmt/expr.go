package rulefmt

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"sort"
	"strings"
	"sync"

	"github.com/expr-lang/expr"
	"github.com/expr-lang/expr/ast"
	"github.com/expr-lang/expr/checker"
	exprcompiler "github.com/expr-lang/expr/compiler"
	"github.com/expr-lang/expr/conf"
	"github.com/expr-lang/expr/file"
	"github.com/expr-lang/expr/optimizer"
	"github.com/expr-lang/expr/parser"
	"github.com/expr-lang/expr/vm"
	"go.yaml.in/yaml/v3"
)

// Expr is one compiled expression with where it came from.
type Expr struct {
	Source string
	// Metrics and Facts it names (for `rules explain` and reasons).
	Metrics []string
	Facts   []string

	prog *vm.Program
	lazy *lazy[*vm.Program] // a built-in rule's: compiled on first use
	vars []int              // Vars, set with prog
	// bySource is the program with the vars bound to their sources, for
	// a run where a var's value is not of its checked type (SourceProgram)
	bySource *lazy[*vm.Program]
	// idents are the identifiers it names, once each (the vars it uses)
	idents []string
}

// Names reports whether the expression names ident (a variable or a
// function).
func (e *Expr) Names(ident string) bool { return contains(e.idents, ident) }

// Program returns the compiled expression. A built-in rule's is compiled
// on first use (safe from several goroutines); the test suite compiles
// every one eagerly (TestBuiltinRulesCompileEagerly).
func (e *Expr) Program() (*vm.Program, error) {
	if e.lazy != nil {
		return e.lazy.get()
	}
	return e.prog, nil
}

// Vars are the rule's vars (indices into Rule.Vars, in declaration
// order) whose values the program reads, directly or through other vars:
// the engine computes each, once per run of the program and in this
// order, before running it (valid once Program returned).
func (e *Expr) Vars() []int { return e.vars }

// SourceProgram is the expression compiled with the vars it needs bound
// to their sources (`let v = (source); `), compiled when first asked: the
// engine runs it instead of Program when a var's value is not of the type
// the checker gave the var (`min(x, 1)` is typed as x and may return the
// int), so that the run is what the var's source in place gives.
func (e *Expr) SourceProgram() (*vm.Program, error) {
	if e.bySource == nil {
		return e.Program()
	}
	return e.bySource.get()
}

// Template is text with {{ expression }} parts, each compiled.
type Template struct {
	Source string
	parts  []Part
	lazy   *lazy[[]Part] // a built-in rule's: compiled on first use
}

// Parts returns the template's parts, compiling them on first use for a
// built-in rule.
func (t *Template) Parts() ([]Part, error) {
	if t.lazy != nil {
		return t.lazy.get()
	}
	return t.parts, nil
}

// lazy is a value built once, on first use, by build; build reports its
// problems as the loader would have at load time.
type lazy[T any] struct {
	once  sync.Once
	build func() (T, error)
	v     T
	err   error
}

func (z *lazy[T]) get() (T, error) {
	z.once.Do(func() {
		z.v, z.err = z.build()
		z.build = nil
	})
	return z.v, z.err
}

// deferred returns a copy of c that compiles into its own problem list,
// and the function that turns that list into an error.
func (c *compiler) deferred() (*compiler, func() error) {
	sub := &loader{file: c.l.file, lines: c.l.lines}
	cc := &compiler{l: sub, rule: c.rule, what: c.what, budget: c.budget, scope: c.scope}
	return cc, func() error {
		if len(sub.problems) == 0 {
			return nil
		}
		return errors.New(strings.Join(sub.problems, "; "))
	}
}

// Part is a piece of a template: Text as written, or (Expr non-nil) an
// expression whose value is rendered.
type Part struct {
	Text string
	Expr *Expr
}

type resultKind int

const (
	kindAny resultKind = iota
	kindBool
	kindFloat
)

// The function types of Env's fields that return an error are named:
// expr-lang's compiler looks every call of an unnamed function type up
// in its table of typed fast paths (~90 signatures compared by
// reflection), which none of these are in; a named type skips the search
// and compiles to the same call.
type (
	fn0[R any]       func() (R, error)
	fn1[A, R any]    func(A) (R, error)
	fn2[A, B, R any] func(A, B) (R, error)
	checkedOp[R any] func(any, any, string, string, string) (R, error)
)

// Env is the typed environment expressions are checked against and the
// engine runs them in: the functions of the rule language, with their
// signatures; the engine fills them with its evaluation state.
type Env struct {
	Metric         fn1[string, float64]        `expr:"metric"`
	MeanRanks      fn1[string, float64]        `expr:"mean_ranks"`
	SumRanks       fn1[string, float64]        `expr:"sum_ranks"`
	MaxRanks       fn1[string, float64]        `expr:"max_ranks"`
	MinRanks       fn1[string, float64]        `expr:"min_ranks"`
	Count          fn1[string, int]            `expr:"count"`
	MaxRank        fn1[string, int]            `expr:"max_rank"`
	RankMetric     fn2[string, int, float64]   `expr:"rank_metric"`
	Has            fn1[string, bool]           `expr:"has"`
	RanksWith      fn2[string, float64, []int] `expr:"ranks_above"`
	BaseMetric     fn1[string, float64]        `expr:"baseline_metric"`
	Baseline       float64                     `expr:"baseline"`
	Known          fn1[string, bool]           `expr:"known"`
	Env            func(string) string         `expr:"env"`
	EnvKnown       func(string) bool           `expr:"env_known"`
	HaveEnv        fn0[bool]                   `expr:"have_env"`
	VersionLT      fn2[string, string, bool]   `expr:"version_lt"`
	Release        fn1[string, Release]        `expr:"release"`
	StackUpgrade   fn1[string, string]         `expr:"stack_upgrade"`
	ChangesSince   fn2[string, string, string] `expr:"changes_since"`
	ChangesFor     fn2[string, string, string] `expr:"changes_for"`
	ChangesNotFor  fn2[string, string, string] `expr:"changes_not_for"`
	WaitedOp       fn0[string]                 `expr:"waited_op"`
	TopCollectives fn1[int, string]            `expr:"top_collectives"`
	TopAICPU       fn1[int, string]            `expr:"top_aicpu"`
	Awaited        fn0[string]                 `expr:"awaited"`
	AwaitedKind    fn0[string]                 `expr:"awaited_kind"`
	PerStep        fn1[string, float64]        `expr:"per_step"`
	NoEstimate     fn1[string, float64]        `expr:"no_estimate"`
	Claimed        fn0[float64]                `expr:"claimed"`
	ClaimedStep    fn0[float64]                `expr:"claimed_per_step"`
	Ranks          []int                       `expr:"ranks"`
	Us             func(float64) string        `expr:"us"`
	Pct            func(float64) string        `expr:"pct"`
	Fixed          func(float64, int) string   `expr:"fixed"`
	JoinInts       fn2[any, string, string]    `expr:"join_ints"`

	FactInt    fn1[string, int]     `expr:"__fact_int"`
	FactBool   fn1[string, bool]    `expr:"__fact_bool"`
	FactString fn1[string, string]  `expr:"__fact_string"`
	FactInts   fn1[string, []int]   `expr:"__fact_ints"`
	FactFloat  fn1[string, float64] `expr:"__fact_float"`

	// a var's value, by its type (VarFuncs)
	VarFloat  fn1[int, float64] `expr:"__var_float"`
	VarInt    fn1[int, int]     `expr:"__var_int"`
	VarBool   fn1[int, bool]    `expr:"__var_bool"`
	VarString fn1[int, string]  `expr:"__var_string"`
	VarInts   fn1[int, []int]   `expr:"__var_ints"`

	// checked arithmetic (finite.go)
	Div       checkedOp[float64]            `expr:"__div"`
	Mod       checkedOp[int]                `expr:"__mod"`
	Finite    fn2[float64, string, float64] `expr:"__finite"`
	FiniteAny fn2[any, string, any]         `expr:"__finite_any"`
}

// metricFuncs take a metric name as their first argument.
var metricFuncs = map[string]bool{
	"metric": true, "mean_ranks": true, "sum_ranks": true, "max_ranks": true, "min_ranks": true,
	"count": true, "max_rank": true, "rank_metric": true, "has": true, "ranks_above": true, "baseline_metric": true, "per_step": true,
}

// Functions documents the expression functions (for docs/rules.md and
// `rules explain`).
var Functions = [][2]string{
	{`metric("m")`, "mean over ranks of a per-rank metric (ranks that measured it); a cluster metric's value"},
	{`mean_ranks("m")`, "same as metric"},
	{`sum_ranks("m")`, "sum over ranks"},
	{`max_ranks("m")`, "maximum over ranks"},
	{`min_ranks("m")`, "minimum over ranks"},
	{`count("m")`, "number of ranks that measured m"},
	{`max_rank("m")`, "the rank holding the maximum of m (lowest on ties)"},
	{`rank_metric("m", r)`, "m on rank r"},
	{`ranks_above("m", x)`, "ranks whose m is above x"},
	{`has("m")`, "m was measured on at least one rank (never makes a rule not-evaluated; from a truncated file, it marks the finding partial as metric does)"},
	{`baseline`, "in a budget: the same metric in the --baseline document (mean over its ranks)"},
	{`baseline_metric("m")`, "m in the --baseline document"},
	{`fact.NAME`, "a fact (typed; an unknown fact makes the rule not-evaluated unless guarded by known)"},
	{`known("NAME")`, "the fact is known"},
	{`env("NAME")`, "an environment variable from the deployment script or profiler_metadata.json (\"\" when unset)"},
	{`env_known("NAME")`, "the variable was seen (set, even if empty)"},
	{`have_env()`, "true when any environment variable is known; else the rule is not evaluated"},
	{`version_lt(a, b)`, "vLLM-Ascend version a is older than b (v0.13.0rc1 < v0.13.0rc2 < v0.13.0)"},
	{`release(v)`, "vLLM-Ascend release v's line of the version table (" + VersionTableFile + ", see Versions below): .version, .date, .vllm, .cann, .torch, .torch_npu, .triton_ascend, .source, .changes (each .pr, .what, .dispatchers, .models, .kernels, .shrinks, .needs_on, .source); a version not in the table makes the rule not evaluated"},
	{`stack_upgrade(v)`, "the CANN and torch_npu release v needs, each from what runs now (facts cann_version and torch_npu_version, else the running vllm_ascend_version's line of the table), as text: \"CANN 8.3.RC2 → 8.5.0 and torch_npu 2.8.0 → 2.8.0.post1\", with the triton-ascend v's matrix lists when it lists one"},
	{`changes_since(a, b)`, "the changes the version table lists for the releases after a up to b, as text: \"#5848 FLASHCOMM1 for Qwen3-VL; ...\""},
	{`changes_for(a, b)`, "those of the changes that meet the profile (the dispatcher that ran, the served model's family, something measured above 0 to shrink), each with its kernels, the evidence it would shrink and the key it needs on, as text"},
	{`changes_not_for(a, b)`, "the changes that do not meet the profile, each with why, as text (\"\" when none)"},
	{`waited_op()`, "the op after the most EVENT_WAIT time, over all ranks"},
	{`top_collectives(n)`, "the n collective types and groups with the most time (mean per rank), as text: type, group, time, ops and share of the window"},
	{`top_aicpu(n)`, "the n kernels with the most AI CPU time (mean per rank), as text: name, count and time"},
	{`awaited()`, "what the main compute streams' EVENT_WAITs (each rank's stream with the most compute-kernel time) waited for most (the record that ended each wait and the task before it), as text with its share, then the next when it takes a fifth of the waits"},
	{`awaited_kind()`, "its kind: collective, kernel (a side stream), memcpy or host"},
	{`per_step("m")`, "m per decode step: on each rank m over decode.steps.count, then the mean over ranks (a per-step budget without dividing by hand)"},
	{`claimed()`, "the rule's claimed ledger entries (claims) summed over the ledger's steps, in µs: a saving over the capture that never counts a microsecond twice; not evaluated when a claim filters by stream, kernel, peer or op and the profile has no ledger records"},
	{`claimed_per_step()`, "the same, per step (mean over the ledger's steps), in µs"},
	{`no_estimate("why")`, "in a saving: no estimate, with the reason (the finding says \"saving not estimated: why\"; an auto severity is then medium)"},
	{`ranks`, "the analyzed ranks"},
	{`threshold.NAME`, "a number from the rule's thresholds"},
	{`us(x)`, "format µs for people (812.5µs, 12.35ms)"},
	{`pct(x)`, "format a ratio as a percentage"},
	{`fixed(x, n)`, "format x with n decimals"},
	{`join_ints(list, sep)`, "join integers (join(strings, sep) joins text)"},
}

// compiler compiles the expressions of one rule.
type compiler struct {
	l      *loader
	rule   *Rule
	what   string
	budget bool
	// lazy: a built-in rule; names are checked at load, expr.Compile and
	// templates wait for first use.
	lazy bool
	// scope is how many of the rule's vars the expression may name: the
	// vars before it for a var, all (-1) for the rest.
	scope int
}

func (c *compiler) errAt(n *yaml.Node, off int, format string, args ...any) {
	line, col := c.l.position(n, off)
	c.l.problems = append(c.l.problems, fmt.Sprintf("%s:%d:%d: %s: %s", c.l.file, line, col, c.what, fmt.Sprintf(format, args...)))
}

func (c *compiler) expr(n *yaml.Node, field string, kind resultKind) *Expr {
	if n.Kind != yaml.ScalarNode {
		c.l.errf(n, "%s: %s: expected an expression, found %s", c.what, field, kindName(n))
		return nil
	}
	return c.exprAt(n, n.Value, 0, field, kind)
}

// exprAt compiles src, which starts at rune offset off inside node n's value.
func (c *compiler) exprAt(n *yaml.Node, src string, off int, field string, kind resultKind) *Expr {
	e := &Expr{Source: src}
	if c.l.names != nil && c.lazy {
		if nm, ok := c.l.names.names(src); ok {
			e.idents, e.Metrics, e.Facts = nm.Idents, nm.Metrics, nm.Facts
			return c.deferCompile(e, n, src, off, field, kind)
		}
	}
	tree, err := parser.Parse(src)
	if err != nil {
		c.fileErr(n, off, field, err)
		return nil
	}
	ok := true
	ast.Find(tree.Node, func(node ast.Node) bool {
		switch x := node.(type) {
		case *ast.CallNode:
			id, isID := x.Callee.(*ast.IdentifierNode)
			if isID && id.Value == "known" && len(x.Arguments) == 1 {
				if s, isStr := x.Arguments[0].(*ast.StringNode); isStr {
					if _, known := LookupFact(s.Value); !known {
						c.errAt(n, off+s.Location().From, "%s: unknown fact %q (closest: %s)", field, s.Value, strings.Join(Closest(s.Value, FactNames(), 3), ", "))
						ok = false
					}
				}
				return false
			}
			if !isID || !metricFuncs[id.Value] || len(x.Arguments) == 0 {
				return false
			}
			s, isStr := x.Arguments[0].(*ast.StringNode)
			if !isStr {
				c.errAt(n, off+x.Arguments[0].Location().From, "%s: %s needs the metric name as a string literal, so it can be checked", field, id.Value)
				ok = false
				return false
			}
			if _, known := LookupMetric(s.Value); !known {
				c.errAt(n, off+s.Location().From, "%s: unknown metric %q (closest: %s)", field, s.Value, strings.Join(Closest(s.Value, MetricNames(), 3), ", "))
				ok = false
				return false
			}
			if !contains(e.Metrics, s.Value) {
				e.Metrics = append(e.Metrics, s.Value)
			}
		case *ast.MemberNode:
			id, isID := x.Node.(*ast.IdentifierNode)
			p, isStr := x.Property.(*ast.StringNode)
			if !isID || !isStr {
				return false
			}
			switch id.Value {
			case "fact":
				if _, known := LookupFact(p.Value); !known {
					c.errAt(n, off+p.Location().From, "%s: unknown fact %q (closest: %s)", field, p.Value, strings.Join(Closest(p.Value, FactNames(), 3), ", "))
					ok = false
				} else if !contains(e.Facts, p.Value) {
					e.Facts = append(e.Facts, p.Value)
				}
			case "threshold":
				if _, known := c.rule.Thresholds[p.Value]; !known {
					var names []string
					for k := range c.rule.Thresholds {
						names = append(names, k)
					}
					sort.Strings(names)
					c.errAt(n, off+p.Location().From, "%s: unknown threshold %q (this rule's thresholds: %s)", field, p.Value, strings.Join(names, ", "))
					ok = false
				}
			}
		case *ast.IdentifierNode:
			if !contains(e.idents, x.Value) {
				e.idents = append(e.idents, x.Value)
			}
			if x.Value == "baseline" && !c.budget {
				c.errAt(n, off+x.Location().From, "%s: `baseline` is only defined in budgets; use baseline_metric(\"m\")", field)
				ok = false
			}
		}
		return false
	})
	if !ok {
		return nil
	}
	if c.l.record != nil {
		c.l.record(ExprNames{Src: src, Idents: e.idents, Metrics: e.Metrics, Facts: e.Facts})
	}
	if c.lazy {
		return c.deferCompile(e, n, src, off, field, kind)
	}
	e.prog, e.vars, e.bySource = c.compileTree(n, e.idents, src, tree, off, field, kind)
	if e.prog == nil {
		return nil
	}
	return e
}

// deferCompile makes e compile on first use.
func (c *compiler) deferCompile(e *Expr, n *yaml.Node, src string, off int, field string, kind resultKind) *Expr {
	cc, problems := c.deferred()
	e.lazy = &lazy[*vm.Program]{build: func() (*vm.Program, error) {
		prog, vars, bySource := cc.compile(n, e.idents, src, off, field, kind)
		e.vars, e.bySource = vars, bySource
		return prog, problems()
	}}
	return e
}

// compile type-checks and compiles src (naming idents), which starts at
// rune offset off inside n's value, with the vars it uses in front.
func (c *compiler) compile(n *yaml.Node, idents []string, src string, off int, field string, kind resultKind) (*vm.Program, []int, *lazy[*vm.Program]) {
	return c.compileTree(n, idents, src, nil, off, field, kind)
}

// compileTree is compile given src's parsed tree (nil: not parsed yet),
// which it takes as the program's when no var goes in front: exprAt
// parsed src for its names, and the tree is not parsed again.
func (c *compiler) compileTree(n *yaml.Node, idents []string, src string, tree *parser.Tree, off int, field string, kind resultKind) (*vm.Program, []int, *lazy[*vm.Program]) {
	// the rule's vars this expression names, as let-bindings in front
	prefix, binds, vars, ok := c.varPrefix(n, off, field, idents)
	if !ok {
		return nil, nil, nil
	}
	var prog *vm.Program
	var err error
	if len(binds) > 0 {
		// the bindings by value go in front as nodes, not as text to parse:
		// src's positions are its own
		prog, err = compileParsed(prefix+src, src, tree, binds, kind, c.rule.Thresholds)
		prefix = ""
	} else {
		if prefix != "" {
			tree = nil
		}
		prog, err = compileParsed(prefix+src, prefix+src, tree, nil, kind, c.rule.Thresholds)
	}
	if err != nil {
		var fe *file.Error
		if errors.As(err, &fe) && fe.From < len([]rune(prefix)) {
			c.errAt(n, off, "%s: %s (in a var it uses)", field, fe.Message)
			return nil, nil, nil
		}
		if errors.As(err, &fe) {
			fe.From -= len([]rune(prefix))
		}
		c.fileErr(n, off, field, err)
		return nil, nil, nil
	}
	if len(vars) == 0 {
		return prog, nil, nil
	}
	need := make([]bool, len(c.rule.Vars))
	for _, v := range vars {
		need[v] = true
	}
	// the prefix is written when the program is first asked for: it
	// rarely is, and printing the vars' sources cost more than the rest
	ruleVars, thresholds := c.rule.Vars, c.rule.Thresholds
	return prog, vars, &lazy[*vm.Program]{build: func() (*vm.Program, error) {
		return compileExpr(sourcePrefix(ruleVars, need)+src, kind, thresholds)
	}}
}

// exprOptions are the options expr.Compile would be given for one
// expression: the env, the patch visitors (checked arithmetic, facts and
// thresholds) and the result kind. compileExpr must compile the same
// program (TestCompileExprIsExprCompile).
func exprOptions(kind resultKind, thresholds map[string]float64) []expr.Option {
	texts := map[*ast.BinaryNode]opText{}
	opts := []expr.Option{expr.Env(EnvMap(&Env{})), expr.Patch(&arithTexts{texts}), expr.Patch(&patcher{thresholds: thresholds}),
		expr.Patch(&checkArith{texts})}
	switch kind {
	case kindBool:
		opts = append(opts, expr.AsBool())
	case kindFloat:
		opts = append(opts, expr.AsFloat64())
	}
	return opts
}

// shared is the expr configuration every expression starts from, built
// once: expr.Compile builds a new one per call (the built-in function
// table, and the env's type information, looked up again field by field),
// which was a fifth of compiling a rule's expression. Its type cache is
// filled as expressions are checked, so compiles take turns (mu).
var shared struct {
	mu   sync.Mutex
	conf *conf.Config
	// compiled are the programs compiled so far (compileParsed)
	compiled map[compiledKey]*vm.Program
}

// compileExpr is expr.Compile(src, exprOptions(kind, thresholds)...)
// starting from the shared configuration.
func compileExpr(src string, kind resultKind, thresholds map[string]float64) (*vm.Program, error) {
	return compileParsed(src, src, nil, nil, kind, thresholds)
}

// compiledKey is what a compiled program depends on: its source, its
// result kind and, when the source names a threshold, the thresholds.
type compiledKey struct {
	src        string
	kind       resultKind
	thresholds string
}

// keyOf is the compiledKey of compiling src.
func keyOf(src string, kind resultKind, thresholds map[string]float64) compiledKey {
	k := compiledKey{src: src, kind: kind}
	if strings.Contains(src, "threshold") && len(thresholds) > 0 {
		names := make([]string, 0, len(thresholds))
		for name := range thresholds {
			names = append(names, name)
		}
		sort.Strings(names)
		var b strings.Builder
		for _, name := range names {
			fmt.Fprintf(&b, "%s=%v;", name, math.Float64bits(thresholds[name]))
		}
		k.thresholds = b.String()
	}
	return k
}

// compileParsed is compileExpr given src's tree as parser.Parse returns
// it (nil: parse src), which is the configuration's parse unless it holds
// a builtin call Env overrides. A program compiled before from the same source,
// kind and thresholds is returned again (programs are not changed by
// running them): a rule's title and fix often hold the same part, "{{ n }}".
//
// body is what is parsed (src less the bindings binds puts in front of
// its tree, bindLets: src is then their text and body's); tree, when not
// nil, is body's.
func compileParsed(src, body string, tree *parser.Tree, binds []letBind, kind resultKind, thresholds map[string]float64) (*vm.Program, error) {
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if shared.conf == nil {
		shared.conf = conf.CreateNew()
		expr.Env(EnvMap(&Env{}))(shared.conf)
	}
	key := keyOf(src, kind, thresholds)
	if prog, ok := shared.compiled[key]; ok {
		return prog, nil
	}
	cfg := *shared.conf // the tables are shared, read-only
	// exprOptions' patch visitors, in their order: the two that read no
	// types (the arithmetic texts, then facts and thresholds) walk the
	// parsed tree, then the checker types it for checkArith, which patches
	// it, and types it again. expr-lang's PatchAndCheck would type-check
	// the whole tree before each visitor, twice over (7 checks instead of
	// 2), for the same program (TestCompileExprIsExprCompile).
	texts := map[*ast.BinaryNode]opText{}
	cfg.Visitors = nil
	switch kind {
	case kindBool:
		expr.AsBool()(&cfg)
	case kindFloat:
		expr.AsFloat64()(&cfg)
	}
	if tree != nil && ast.Find(tree.Node, func(n ast.Node) bool {
		b, ok := n.(*ast.BuiltinNode)
		return ok && cfg.IsOverridden(b.Name)
	}) != nil {
		// parser.Parse read a call of a function Env overrides (count) as
		// the builtin: the configuration's parse reads the Env's
		tree = nil
	}
	if tree == nil {
		var err error
		if tree, err = parser.ParseWithConfig(body, &cfg); err != nil {
			return nil, err
		}
	}
	if len(binds) > 0 {
		tree.Node = bindLets(tree.Node, binds)
	}
	ast.Walk(&tree.Node, &arithTexts{texts})
	ast.Walk(&tree.Node, &patcher{thresholds: thresholds})
	var ck checker.Checker
	_, _ = ck.Check(tree, &cfg) // the types checkArith reads; errors are the final check's
	ast.Walk(&tree.Node, &checkArith{texts})
	if _, err := ck.Check(tree, &cfg); err != nil {
		return nil, err
	}
	if cfg.Optimize {
		if err := optimizer.Optimize(&tree.Node, &cfg); err != nil {
			var fe *file.Error
			if errors.As(err, &fe) {
				return nil, fe.Bind(tree.Source)
			}
			return nil, err
		}
	}
	prog, err := exprcompiler.Compile(tree, &cfg)
	if err == nil {
		if shared.compiled == nil {
			shared.compiled = map[compiledKey]*vm.Program{}
		}
		shared.compiled[key] = prog
	}
	return prog, err
}

// VarFuncs are the functions that read a var's value, by the var's type:
// `let v = __var_float(i); ` in front of an expression binds v to the
// value of the rule's var i, which is compiled once (Rule.VarProgram)
// instead of again in front of every expression that names it.
var VarFuncs = map[reflect.Type]string{
	reflect.TypeFor[float64](): "__var_float",
	reflect.TypeFor[int]():     "__var_int",
	reflect.TypeFor[bool]():    "__var_bool",
	reflect.TypeFor[string]():  "__var_string",
	reflect.TypeFor[[]int]():   "__var_ints",
}

// varPrefix returns the let-bindings of the vars named in idents, and
// the vars to evaluate before the expression runs (Expr.Vars): those
// named, with the vars those name, in declaration order. Each var named
// is bound to its value (VarFuncs), which the engine computed from the
// var's own program; when a var's type has no such function, the prefix
// binds every var needed to its source instead ("let v = (source); ") and
// no var is evaluated before. False when a var it needs does not compile
// (reported at n).
func (c *compiler) varPrefix(n *yaml.Node, off int, field string, idents []string) (string, []letBind, []int, bool) {
	vars := c.rule.Vars
	if c.scope >= 0 && c.scope < len(vars) {
		vars = vars[:c.scope]
	}
	if len(vars) == 0 {
		return "", nil, nil, true
	}
	need := neededVars(vars, idents)
	var b strings.Builder
	var order []int
	var binds []letBind
	for i := range vars {
		if !need[i] {
			continue
		}
		fn := ""
		if vars[i].expr != nil {
			prog, err := vars[i].expr.Program()
			if err != nil {
				c.errAt(n, off, "%s: %v (in a var it uses)", field, err)
				return "", nil, nil, false
			}
			fn = VarFuncs[prog.Node().Type()]
		}
		if fn == "" {
			return sourcePrefix(vars, need), nil, nil, true
		}
		order = append(order, i)
		if contains(idents, vars[i].Name) {
			fmt.Fprintf(&b, "let %s = %s(%d); ", vars[i].Name, fn, i)
			binds = append(binds, letBind{vars[i].Name, fn, i})
		}
	}
	return b.String(), binds, order, true
}

// letBind is `let name = fn(index); ` in front of an expression, a var
// bound to its value (varPrefix).
type letBind struct {
	name, fn string
	index    int
}

// bindLets puts binds in front of node as the parser reads their text:
// `let a = f(0); let b = g(1); node` is a's declaration around b's
// around node.
func bindLets(node ast.Node, binds []letBind) ast.Node {
	for k := len(binds) - 1; k >= 0; k-- {
		b := binds[k]
		call := &ast.CallNode{Callee: &ast.IdentifierNode{Value: b.fn}, Arguments: []ast.Node{&ast.IntegerNode{Value: b.index}}}
		node = &ast.VariableDeclaratorNode{Name: b.name, Value: call, Expr: node}
	}
	return node
}

// VarType is the type the checker gave the rule's var i, which an
// expression binding it by value reads it as (nil: bound by its source).
func (r *Rule) VarType(i int) reflect.Type {
	prog, err := r.Vars[i].expr.Program()
	if err != nil {
		return nil
	}
	t := prog.Node().Type()
	if VarFuncs[t] == "" {
		return nil
	}
	return t
}

// neededVars marks the vars named in idents, with the vars those name.
func neededVars(vars []Var, idents []string) []bool {
	need := make([]bool, len(vars))
	var mark func(idents []string)
	mark = func(idents []string) {
		for _, id := range idents {
			for i := range vars {
				if vars[i].Name == id && !need[i] {
					need[i] = true
					mark(vars[i].idents)
				}
			}
		}
	}
	mark(idents)
	return need
}

// sourcePrefix is "let v = (source); " for each needed var.
func sourcePrefix(vars []Var, need []bool) string {
	var b strings.Builder
	for i, v := range vars {
		if need[i] {
			fmt.Fprintf(&b, "let %s = (%s); ", v.Name, v.Source)
		}
	}
	return b.String()
}

func (c *compiler) fileErr(n *yaml.Node, off int, field string, err error) {
	var fe *file.Error
	if errors.As(err, &fe) {
		c.errAt(n, off+fe.From, "%s: %s", field, fe.Message)
		return
	}
	c.errAt(n, off, "%s: %v", field, err)
}

// template compiles a text with {{ expression }} parts.
func (c *compiler) template(n *yaml.Node, field string) *Template {
	if n.Kind != yaml.ScalarNode {
		c.l.errf(n, "%s: %s: expected text, found %s", c.what, field, kindName(n))
		return nil
	}
	if c.lazy {
		cc, problems := c.deferred()
		return &Template{Source: n.Value, lazy: &lazy[[]Part]{build: func() ([]Part, error) {
			var parts []Part
			if t := cc.template(n, field); t != nil {
				parts = t.parts
			}
			return parts, problems()
		}}}
	}
	t := &Template{Source: n.Value}
	src := n.Value
	runeOff := 0
	for {
		i := strings.Index(src, "{{")
		if i < 0 {
			t.parts = append(t.parts, Part{Text: src})
			break
		}
		j := strings.Index(src[i:], "}}")
		if j < 0 {
			c.errAt(n, runeOff+len([]rune(src[:i])), "%s: {{ without }}", field)
			return nil
		}
		t.parts = append(t.parts, Part{Text: src[:i]})
		inner := src[i+2 : i+j]
		start := runeOff + len([]rune(src[:i+2]))
		e := c.exprAt(n, inner, start, field, kindAny)
		if e == nil {
			return nil
		}
		t.parts = append(t.parts, Part{Expr: e})
		runeOff = start + len([]rune(inner)) + 2
		src = src[i+j+2:]
	}
	return t
}

// patcher rewrites fact.NAME into a typed fact lookup and threshold.NAME
// into its number, before type checking.
type patcher struct{ thresholds map[string]float64 }

func (p *patcher) Visit(node *ast.Node) {
	m, ok := (*node).(*ast.MemberNode)
	if !ok {
		return
	}
	id, ok1 := m.Node.(*ast.IdentifierNode)
	s, ok2 := m.Property.(*ast.StringNode)
	if !ok1 || !ok2 {
		return
	}
	switch id.Value {
	case "fact":
		f, ok := LookupFact(s.Value)
		if !ok {
			return
		}
		fn := map[FactType]string{FactInt: "__fact_int", FactBool: "__fact_bool", FactString: "__fact_string", FactInts: "__fact_ints", FactFloat: "__fact_float"}[f.Type]
		call := &ast.CallNode{Callee: &ast.IdentifierNode{Value: fn}, Arguments: []ast.Node{&ast.StringNode{Value: s.Value}}}
		ast.Patch(node, call)
	case "threshold":
		if v, ok := p.thresholds[s.Value]; ok {
			ast.Patch(node, &ast.FloatNode{Value: v})
		}
	}
}

// envFields are Env's fields by their expression names.
var envFields = sync.OnceValue(func() []struct {
	name  string
	index int
} {
	t := reflect.TypeFor[Env]()
	out := make([]struct {
		name  string
		index int
	}, 0, t.NumField())
	for i := range t.NumField() {
		out = append(out, struct {
			name  string
			index int
		}{t.Field(i).Tag.Get("expr"), i})
	}
	return out
})

// EnvMap is e as the map expressions are compiled against and run in:
// expr-lang compiles a name of a map to a map lookup, where a struct's
// field costs a reflected field index and a printed constant (~7k
// instructions) per name in every compile.
func EnvMap(e *Env) map[string]any {
	v := reflect.ValueOf(e).Elem()
	fields := envFields()
	m := make(map[string]any, len(fields))
	for _, f := range fields {
		m[f.name] = v.Field(f.index).Interface()
	}
	return m
}
