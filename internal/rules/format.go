package rules

import (
	"embed"
	"errors"
	"path"
	"slices"

	"github.com/npuprof/npuprof/internal/rules/rulefmt"
)

// The rule-file format (parsing, validation, compiling the expressions
// and templates, and their file:line:col errors) is package rulefmt; the
// engine evaluates what it loads. These names are the engine's view of
// what its callers and most of its code handle; the rest it names as
// rulefmt's.
type (
	Set       = rulefmt.Set
	Rule      = rulefmt.Rule
	Expr      = rulefmt.Expr
	Selection = rulefmt.Selection
	Release   = rulefmt.Release
	// env is what expressions run in: the engine fills its functions; one
	// whose input is not available returns an error wrapping
	// errUnavailable, and the rule is then "not evaluated", with the
	// reason.
	env = rulefmt.Env
)

// envMap is rulefmt.EnvMap.
var envMap = rulefmt.EnvMap

var errUnavailable = errors.New("input unavailable")

//go:embed builtin/*.yaml builtin/zh/*.yaml
var builtinFS embed.FS

// builtinRules are the rule files embedded in npuprof: internal/rules/builtin/*.yaml,
// compiled on first use.
var builtinRules = rulefmt.Builtin{FS: builtinFS, Dir: "builtin", Prefix: "internal/rules/", Decoded: builtinDecoded}

// Load loads the built-in rules and the given rule files (rulefmt.Load).
func Load(files ...string) (*Set, error) { return rulefmt.Load(&builtinRules, files...) }

// Parse loads one rule file from memory, without the built-in rules.
func Parse(name string, data []byte) (*Set, error) { return rulefmt.Parse(name, data) }

// Builtin returns the names of the embedded rule files.
func Builtin() []string {
	e, _ := builtinRules.Files()
	for i := range e {
		e[i] = path.Base(e[i])
	}
	return e
}

// LookupMetric returns the declaration a metric name belongs to.
func LookupMetric(name string) (rulefmt.MetricDoc, bool) { return rulefmt.LookupMetric(name) }

// LookupFact returns a fact's catalog entry.
func LookupFact(name string) (rulefmt.FactDoc, bool) { return rulefmt.LookupFact(name) }

// Suggest returns the candidates name looks like a misspelling of
// (rulefmt.Suggest).
func Suggest(name string, candidates []string, n int) []string {
	return rulefmt.Suggest(name, candidates, n)
}

// CompareVersions returns -1, 0 or 1 (rulefmt.CompareVersions).
func CompareVersions(a, b string) (int, error) { return rulefmt.CompareVersions(a, b) }

// ParseVersion turns v0.13.0rc2 into comparable numbers (rulefmt.ParseVersion).
func ParseVersion(v string) ([4]int, error) { return rulefmt.ParseVersion(v) }

func inRange(v, rng string) (bool, error) { return rulefmt.InRange(v, rng) }

func contains(s []string, v string) bool { return slices.Contains(s, v) }

// VersionTableFile is where the version table lives in the source tree.
const VersionTableFile = rulefmt.VersionTableFile

// format renders a template value (rulefmt.Format).
func format(v any) string { return rulefmt.Format(v) }

// joinInts is join_ints (rulefmt.JoinInts).
func joinInts(list any, sep string) (string, error) { return rulefmt.JoinInts(list, sep) }
