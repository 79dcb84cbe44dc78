package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/npuprof/npuprof/internal/lazyre"
	"github.com/npuprof/npuprof/internal/render"
	"github.com/npuprof/npuprof/internal/results"
)

// rangeAnnotation is the flag annotation holding a numeric flag's expected
// values, as its errors print them ("0 (one per CPU) or more").
const rangeAnnotation = "npuprof-range"

// workersRange is the expected values of every command's --workers.
const workersRange = "0 (one per CPU) or more"

// intFlag defines an int flag with the expected values its errors name.
func intFlag(f *pflag.FlagSet, p *int, name string, value int, expected, usage string) {
	f.IntVar(p, name, value, usage)
	_ = f.SetAnnotation(name, rangeAnnotation, []string{expected})
}

// workersFlag defines --workers.
func workersFlag(f *pflag.FlagSet, p *int, usage string) {
	intFlag(f, p, "workers", 0, workersRange, usage)
}

// checkWorkers refuses a negative --workers.
func checkWorkers(n int) error {
	if n < 0 {
		return usageErr("--workers %d: out of range: expected %s", n, workersRange)
	}
	return nil
}

// reInvalidArg is pflag's message for a value its type cannot parse:
// invalid argument "abc" for "-w, --workers" flag: strconv.ParseInt: ...
var reInvalidArg = lazyre.New(`^invalid argument "((?:[^"\\]|\\.)*)" for "(?:-\w, )?--([^"]+)" flag: `)

// flagError turns pflag's parse errors into usage errors that name the
// flag, the value and what the flag expects, instead of Go's
// "strconv.ParseInt: parsing "abc": invalid syntax".
func flagError(cmd *cobra.Command, err error) error {
	m := reInvalidArg().FindStringSubmatch(err.Error())
	if m == nil {
		return err
	}
	f := cmd.Flags().Lookup(m[2])
	if f == nil {
		return err
	}
	if _, ok := f.Value.(choiceValue); ok {
		_, why, _ := strings.Cut(err.Error(), " flag: ")
		return usageErr("--%s %q: %s", m[2], m[1], why)
	}
	want := f.Value.Type()
	if r := f.Annotations[rangeAnnotation]; len(r) > 0 {
		want = r[0]
	}
	if strings.Contains(err.Error(), "value out of range") {
		return usageErr("--%s %s: out of range: expected %s", m[2], m[1], want)
	}
	return usageErr("--%s %q: not %s; expected %s", m[2], m[1], article(f.Value.Type()), want)
}

// article names a pflag type for "not a ...".
func article(typ string) string {
	switch typ {
	case "int", "int64", "int32", "uint", "uint64":
		return "a whole number"
	case "float64", "float32":
		return "a number"
	case "duration":
		return "a duration (e.g. 30s)"
	case "bool":
		return "true or false"
	}
	return "a " + typ
}

// withHelpHint ends an unknown-flag, unknown-command or bad flag value
// error, still one line, with where to read the command's usage; cobra's
// "\n\nDid you mean this?\n\tanalyze\n" becomes "(did you mean analyze?)".
func withHelpHint(msg string, cmd *cobra.Command) string {
	if head, alts, ok := strings.Cut(msg, "\n\nDid you mean this?\n"); ok {
		msg = head + " (did you mean " + strings.Join(strings.Fields(alts), " or ") + "?)"
	}
	path := "npuprof"
	if cmd != nil {
		path = cmd.CommandPath()
	}
	return fmt.Sprintf("%s. Run '%s --help'", strings.TrimRight(msg, ". \n"), path)
}

// needsHelpHint reports whether err is a parse error of the command line
// (not of an input): one the command's --help answers.
func needsHelpHint(err error) bool {
	if isFlagError(err) {
		return true
	}
	s := err.Error()
	return strings.HasPrefix(s, "--") && (strings.Contains(s, ": not a") || strings.Contains(s, ": out of range") ||
		strings.Contains(s, ": expected all ") || strings.Contains(s, ": expected summary "))
}

// kernelsRange and deployLineRange are the expected values of diff's
// --kernels and of --deploy-line.
const (
	kernelsRange    = "0 or more"
	deployLineRange = "a line number of the --deploy script, 1 or more"
)

// capFlag is --steps or --ranks: the terminal summary's cap (def) or all.
type capFlag struct {
	all  *bool
	def  string
	what string
}

func (c capFlag) String() string {
	if c.all != nil && *c.all {
		return "all"
	}
	return c.def
}

func (c capFlag) Set(s string) error {
	switch s {
	case "all":
		*c.all = true
	case c.def:
		*c.all = false
	default:
		return fmt.Errorf("expected all (%s) or %s (the default)", c.what, c.def)
	}
	return nil
}

// Type names the values in --help ("slowest|all").
func (c capFlag) Type() string { return "all|" + c.def }

func (c capFlag) choice() {}

// choiceValue is a flag of a few named values: a bad value's error is the
// flag's own (flagError).
type choiceValue interface{ choice() }

// summaryFlags are the terminal summary's --steps, --ranks and --detail.
type summaryFlags struct {
	AllSteps, AllRanks bool
	Detail             detailFlag
}

// detailFlag is --detail: summary (the default), tables or all.
type detailFlag struct{ tables, all bool }

func (d *detailFlag) String() string {
	switch {
	case d.all:
		return "all"
	case d.tables:
		return "tables"
	}
	return "summary"
}

func (d *detailFlag) Set(s string) error {
	switch s {
	case "summary":
		*d = detailFlag{}
	case "tables":
		*d = detailFlag{tables: true}
	case "all":
		*d = detailFlag{tables: true, all: true}
	default:
		return fmt.Errorf("expected summary (the default), tables or all")
	}
	return nil
}

func (d *detailFlag) Type() string { return "summary|tables|all" }

func (d *detailFlag) choice() {}

func (s *summaryFlags) register(f *pflag.FlagSet) {
	f.Var(capFlag{&s.AllSteps, "slowest", "every step"}, "steps",
		fmt.Sprintf("per-step table (--detail tables): slowest (the %d slowest steps, then mean, median, p90 and max) or all", render.MaxStepRows))
	f.Var(capFlag{&s.AllRanks, "summary", "every rank"}, "ranks",
		fmt.Sprintf("per-rank tables (--detail tables) above %d ranks: summary (median, min, max and the outlier ranks) or all", render.MaxRankRows))
	f.Var(&s.Detail, "detail",
		"what the summary shows: summary (the plan, the findings' first lines, one line a section), tables (and each section's table) or all (and every fix and evidence whole)")
}

func (s summaryFlags) text(io *streams) results.TextOptions {
	return results.TextOptions{AllSteps: s.AllSteps, AllRanks: s.AllRanks, AllDetail: s.Detail.all, Tables: s.Detail.tables,
		ASCIIUnits: io.asciiUnits, Width: io.width, Colour: io.colour, Terminal: io.outIsTerminal}
}
