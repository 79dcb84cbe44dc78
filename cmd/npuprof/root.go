package main

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/npuprof/npuprof/internal/buildinfo"
	"github.com/npuprof/npuprof/internal/errkind"
	"github.com/npuprof/npuprof/internal/lang"
	"github.com/npuprof/npuprof/internal/render"
)

// Exit codes: a public contract, documented in the README.
const (
	ExitOK       = 0 // nothing at or above --fail-on fired
	ExitFindings = 1 // check: findings at or above --fail-on
	ExitUsage    = 2 // usage or input error
	ExitInternal = 3 // an analysis pass or rule failed to run
)

// exitError carries the findings exit code through cobra; every other code
// comes from the error's kind (exitCode).
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

func usageErr(format string, args ...any) error {
	return errkind.Errorf(errkind.Usage, format, args...)
}

// exitCode is the one place an error becomes an exit code: usage and input
// errors exit 2, internal errors (and errors of no kind: a bug until
// proven otherwise) exit 3.
func exitCode(err error) int {
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	switch errkind.Of(err) {
	case errkind.Usage, errkind.Input:
		return ExitUsage
	case errkind.Internal:
		return ExitInternal
	}
	if isFlagError(err) {
		return ExitUsage
	}
	return ExitInternal
}

// atLeastArgs is cobra.MinimumNArgs(n) with exactArgs's error: analyze,
// check and report take one PATH, or several export folders merged.
func atLeastArgs(n int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) >= n {
			return nil
		}
		return exactArgs(n)(cmd, args)
	}
}

// exactArgs is cobra.ExactArgs(n) with an error that names the expected
// arguments (the placeholders of the command's Use line) and points to
// --help: "npuprof check: expected PATH, got no argument".
func exactArgs(n int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) == n {
			return nil
		}
		var want []string
		words := strings.Fields(cmd.Use)[1:]
		for i := 0; i < len(words); i++ {
			switch w := words[i]; {
			case strings.HasPrefix(w, "-"):
				i++ // a flag and its value ("-o OUTDIR")
			case w == strings.ToUpper(w):
				want = append(want, w)
			}
		}
		got := "no argument"
		switch {
		case len(args) == 1:
			got = fmt.Sprintf("1 argument (%q)", args[0])
		case len(args) > 1:
			q := make([]string, len(args))
			for i, a := range args {
				q[i] = strconv.Quote(a)
			}
			got = fmt.Sprintf("%d arguments (%s)", len(args), strings.Join(q, " "))
		}
		name := strings.TrimPrefix(cmd.CommandPath(), cmd.Root().Name()+" ")
		return usageErr("%s: expected %s, got %s; see '%s --help'", name, strings.Join(want, " and "), got, cmd.CommandPath())
	}
}

// streams are the command's I/O, replaced by buffers in tests.
type streams struct {
	in       io.Reader
	out, err io.Writer
	// errIsTerminal enables the progress display.
	errIsTerminal bool
	// outIsTerminal: report refuses to write HTML to a terminal.
	outIsTerminal bool
	// progressDelay is how long work runs before a progress bar appears.
	progressDelay time.Duration
	// asciiUnits: the locale is not UTF-8, the summary spells µs as us.
	asciiUnits bool
	// lang is the locale's language (lang.FromLocale), the default of
	// --lang; "" is English.
	lang string
	// width is the summary's width in columns (COLUMNS, else the
	// terminal's; 0: 100) and errWidth the progress line's (standard
	// error's terminal; 0: 100).
	width, errWidth int
	// colour: standard output is a terminal and NO_COLOR is not set; the
	// summary colours the findings' severities.
	colour bool
}

// Main runs npuprof with args and returns the exit code.
func Main(args []string, in io.Reader, out, errw io.Writer) int {
	return runMain(newStreams(in, out, errw), args)
}

// newStreams are the streams of a run: progress and the HTML refusal
// follow whether out and errw are terminals.
func newStreams(in io.Reader, out, errw io.Writer) *streams {
	return &streams{in: in, out: out, err: errw, errIsTerminal: isTerminal(errw), outIsTerminal: isTerminal(out),
		progressDelay: 700 * time.Millisecond}
}

// runMain runs npuprof on the given streams (tests fake a terminal here).
func runMain(io *streams, args []string) int {
	errw := io.err
	root := newRootCmd(io)
	if isCompletion(args) {
		// registered only for it: visiting every command's flags cost
		// each run ~0.4 M instructions
		for _, c := range allCmds(root) {
			addCompletions(c)
		}
	}
	localizeHelp(root, errLang(io, args))
	root.SetArgs(args)
	cmd, err := root.ExecuteC()
	if err == nil {
		return ExitOK
	}
	code := exitCode(err)
	if problems := errkind.Problems(err); problems != nil {
		// every problem in every rule file, one per line
		for _, p := range problems {
			fmt.Fprintf(errw, "npuprof: %s\n", render.Safe(fmt.Sprint(p), 0))
		}
		return code
	}
	// messages quote paths and file content: no control characters reach
	// the terminal
	msg := err.Error()
	if code == ExitInternal {
		msg = render.FirstLine(msg) // the rest is a stack, for --debug readers of the JSON
	}
	if needsHelpHint(err) {
		if h := flagHint(msg, cmd); h != "" {
			msg = strings.TrimRight(msg, ". \n") + " (" + h + ")"
		}
		msg = withHelpHint(msg, cmd)
	}
	fmt.Fprintf(errw, "npuprof: %s\n", render.Safe(lang.Translate(errLang(io, args), msg), 0))
	return code
}

func isFlagError(err error) bool {
	s := err.Error()
	return strings.HasPrefix(s, "unknown flag") || strings.HasPrefix(s, "unknown shorthand flag") ||
		strings.HasPrefix(s, "unknown command") || strings.Contains(s, "flag needs an argument") ||
		strings.HasPrefix(s, "invalid argument") || strings.Contains(s, "accepts ") || strings.Contains(s, "requires at least")
}

func newRootCmd(io *streams) *cobra.Command {
	root := &cobra.Command{
		Use:   "npuprof",
		Short: "Find where Ascend NPU inference time goes, and the exact fix",
		Long: `npuprof reads Huawei Ascend profiler output (torch_npu *_ascend_pt folders,
text or db export, and msprof PROF_* folders, one per rank) and measures what
matters for MoE serving with vLLM-Ascend: communication by collective type and
group, the MoE routing Cumsum, EVENT_WAIT per stream, the
computing/communication/free breakdown, and the top kernels;
then rules name the fix (the flag, env var, config or code change) with the
measured numbers and the estimated saving.

Exit codes:
  0  ok
  1  check: findings at or above --fail-on
  2  usage or input error (bad flag, no profile at the path)
  3  internal error: an analysis pass or rule failed to run`,
		Example: `  # The summary of a capture: one *_ascend_pt folder per rank, any depth up to two
  $ npuprof analyze ./profiles/ --deploy serve.sh

  # The HTML report, opening on the findings and their fixes
  $ npuprof report ./profiles/ --deploy serve.sh -o report.html

  # A CI gate with JUnit and SARIF reports (exit 1 on a high finding)
  $ npuprof check ./profiles/ --fail-on high --junit npuprof.xml --sarif npuprof.sarif`,
		SilenceUsage:  true,
		SilenceErrors: true,
		// --version prints what `npuprof version` prints
		Version: tool.Version,
	}
	root.SetVersionTemplate(tool.String() + "\n")
	root.SetFlagErrorFunc(flagError)
	root.SetOut(io.out)
	root.SetErr(io.err)
	root.AddCommand(newAnalyzeCmd(io), newCheckCmd(io), newRulesCmd(io), newReportCmd(io), newDiffCmd(io), newEPLBCmd(io), newExportCmd(io), newVersionCmd(io), newDocsCmd(io), newManCmd(io))
	addExitCodes(root)
	setHelp(root, io)
	return root
}

// exitCodesHelp ends the help of every command that runs (check lists its
// own, with 1): what a script calling it can test.
const exitCodesHelp = `

Exit codes:
  0  ok
  2  usage or input error (bad flag or argument, no profile or an unreadable file at a path)
  3  internal error: an analysis pass or rule failed to run`

// addExitCodes appends exitCodesHelp to the help of each command below
// root that runs (not a group such as rules) and does not list its exit
// codes itself.
func addExitCodes(root *cobra.Command) {
	for _, c := range root.Commands() {
		addExitCodes(c)
		if !c.Runnable() || c.HasSubCommands() || c.Name() == "help" || c.Name() == "completion" || strings.Contains(c.Long, "\n  2  usage or input error") {
			continue
		}
		if c.Long == "" {
			c.Long = c.Short + "."
		}
		c.Long += exitCodesHelp
	}
}

// tool is npuprof's name, version and revision from the binary's build
// information (internal/buildinfo); every output names it.
var tool = buildinfo.Get()

// Version is npuprof's module version (buildinfo.Unknown when the build
// recorded none).
var Version = tool.Version

func newVersionCmd(io *streams) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print npuprof's version and the VCS revision it was built from",
		Long: `Version prints npuprof's module version and the VCS revision the binary
was built from (` + "`make build`" + ` stamps the revision; "revision unknown"
otherwise). Every output (the JSON document, the HTML report, JUnit, SARIF)
names them too.`,
		Example: `  $ npuprof version
  $ npuprof --version`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			fmt.Fprintln(io.out, tool)
			return nil
		},
	}
}
