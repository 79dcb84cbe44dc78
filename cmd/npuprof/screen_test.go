package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/npuprof/npuprof/internal/golden"
	"github.com/npuprof/npuprof/internal/render"
	"github.com/npuprof/npuprof/internal/testutil"
	"github.com/npuprof/npuprof/internal/tracegen"
)

// screenCapture generates a capture and returns the terminal summary of
// analyze with extra flags.
func screenSummary(t *testing.T, dir string, args ...string) []string {
	t.Helper()
	code, out, errs := run(append([]string{"analyze", dir, "-q"}, args...)...)
	require.Equal(t, ExitOK, code, errs)
	return strings.Split(strings.TrimSuffix(out, "\n"), "\n")
}

// requireFits requires every line within render.TextWidth columns.
func requireFits(t *testing.T, lines []string) {
	t.Helper()
	for i, l := range lines {
		require.LessOrEqual(t, utf8.RuneCountInString(l), render.TextWidth, "line %d: %q", i+1, l)
	}
}

// A 3,700-step single-rank capture (tracegen): the summary gives the steps
// one line; --detail tables prints the 10 slowest steps and their
// statistics, not 3,700 rows: at most 150 lines of at most 100 columns;
// --steps all lists every step.
func TestSummaryFitsAScreenManySteps(t *testing.T) {
	if testing.Short() {
		t.Skip("generates a 3,700-step trace")
	}
	sc := testutil.Scenario(t, "clean-steps")
	sc.Ranks, sc.Layers, sc.Steps = 1, 1, 3700
	sc.SamplerCumsum, sc.EventWaits, sc.CommJSON = false, false, false
	dir, _ := testutil.Generate(t, sc)

	short := screenSummary(t, dir)
	require.LessOrEqual(t, len(short), 60)
	requireFits(t, short)
	require.Contains(t, strings.Join(short, "\n"), "\n  per step: 3700 steps, mean ")

	lines := screenSummary(t, dir, "--detail", "tables")
	require.LessOrEqual(t, len(lines), 150)
	requireFits(t, lines)
	text := strings.Join(lines, "\n")
	require.Contains(t, text, "  the 10 slowest of 3700 steps, then statistics over all of them (--steps all lists each)")
	for _, row := range []string{"\n    mean ", "\n  median ", "\n     p90 ", "\n     max "} {
		require.Contains(t, text, row)
	}
	all := screenSummary(t, dir, "--steps", "all", "--detail", "tables")
	require.Greater(t, len(all), 3700)
	require.NotContains(t, strings.Join(all, "\n"), "slowest of")
}

// A 64-rank cluster (tracegen): the summary gives each section one line;
// --detail tables summarises each per-rank table in median, min and max
// rows with the outlier ranks: at most 150 lines of at most 100 columns;
// --ranks all lists every rank.
func TestSummaryFitsAScreenManyRanks(t *testing.T) {
	if testing.Short() {
		t.Skip("generates a 64-rank cluster")
	}
	sc := testutil.Scenario(t, "clean-steps")
	sc.Ranks, sc.Layers, sc.Steps = 64, 2, 4
	sc.SlowRank, sc.SlowFactor = 17, 1.5
	dir, _ := testutil.Generate(t, sc)

	short := screenSummary(t, dir)
	require.LessOrEqual(t, len(short), 60)
	requireFits(t, short)
	require.Contains(t, strings.Join(short, "\n"), "\n  slow ranks: rank 17;")

	lines := screenSummary(t, dir, "--detail", "tables")
	require.LessOrEqual(t, len(lines), 150)
	requireFits(t, lines)
	text := strings.Join(lines, "\n")
	require.Contains(t, text, "  64 ranks summarised (--ranks all lists each); outliers by window: ranks 17,")
	require.Contains(t, text, "group tp (ranks 16-23): rank 17 arrived last at 18 of 20 collectives", "the notable group is among those shown")
	require.Contains(t, text, "more group(s) (--ranks all lists each)")
	for _, row := range []string{"\n  median ", "\n     min ", "\n     max "} {
		require.Contains(t, text, row)
	}
	require.Contains(t, text, "  not applicable: host-bound, moe-dispatch-combine (--detail all says why)\n")
	require.Contains(t, text, "\n  (fixes cut to their first lines, no evidence: see --detail all, --format json or --html)\n")
	require.NotContains(t, text, "      evidence:\n")
	detail := strings.Join(screenSummary(t, dir, "--detail", "all"), "\n")
	require.Contains(t, detail, "  not applicable: moe-dispatch-combine: moe.dispatcher allgather (rule applies to")
	require.Contains(t, detail, "  not evaluated: mm-cache: fact serving.mm_cache_hit_rate unknown: give it with --fact")
	require.Contains(t, detail, "        hccl.total.count = 20  (mean of 64 ranks)")
	require.NotContains(t, detail, "more (--detail all lists each)")
	all := screenSummary(t, dir, "--ranks", "all", "--detail", "tables")
	require.Greater(t, len(all), 2*64)
	require.NotContains(t, strings.Join(all, "\n"), "ranks summarised")

	// the report collapses its per-rank tables under their charts
	page := filepath.Join(t.TempDir(), "r.html")
	code, _, errs := run("report", dir, "-q", "-o", page)
	require.Equal(t, ExitOK, code, errs)
	html, err := os.ReadFile(page)
	require.NoError(t, err)
	// (the per-rank tables, and the collectives by type and by group)
	require.Equal(t, 4, strings.Count(string(html), `<details class="per-rank"><summary>Per rank <span class="dim">64</span></summary>`))

	code, _, errs = run("analyze", dir, "--ranks", "some")
	require.Equal(t, ExitUsage, code)
	require.Equal(t, `npuprof: --ranks "some": expected all (every rank) or summary (the default). Run 'npuprof analyze --help'`+"\n", errs)
}

// Every tracegen scenario (tracegen -list) as a 64-rank cluster with more
// steps than the per-step table lists: its summary is at most 70 lines
// (five findings and their plan), with the tables (--detail tables) at
// most 150, of at most 100 columns, and still names each finding with the opening of
// its fix (the whole fix and the evidence are in --detail all and the JSON).
// Each scenario is generated small (2 MoE layers) to keep the test short.
func TestSummaryFitsAScreenEveryScenario(t *testing.T) {
	if testing.Short() {
		t.Skip("generates a 64-rank cluster per scenario")
	}
	for _, name := range tracegen.ScenarioNames() {
		t.Run(name, func(t *testing.T) {
			sc := testutil.Scenario(t, name)
			sc.Ranks, sc.Layers, sc.Steps = 64, 2, render.MaxStepRows+1
			dir, _ := testutil.Generate(t, sc)

			short := screenSummary(t, dir)
			require.LessOrEqual(t, len(short), 70, strings.Join(short, "\n"))
			requireFits(t, short)
			lines := screenSummary(t, dir, "--detail", "tables")
			require.LessOrEqual(t, len(lines), 150, strings.Join(lines, "\n"))
			requireFits(t, lines)
			text := strings.Join(lines, "\n")
			if sc.ProfilerSteps {
				require.Contains(t, text, fmt.Sprintf("  the 10 slowest of %d steps", sc.Steps), "the per-step table is at its cap")
			}

			// every finding fired is listed (its fix's opening: fixHead's test)
			fired := regexp.MustCompile(`\nRules: (\d+) fired`).FindStringSubmatch(text)
			require.NotNil(t, fired, text)
			heads := regexp.MustCompile(`\n  \[(HIGH|MEDIUM|LOW|INFO)\] `).FindAllString(text, -1)
			require.Equal(t, fired[1], strconv.Itoa(len(heads)))
			require.Contains(t, text, "\n  (fixes cut to their first lines, no evidence: see --detail all, --format json or --html)\n")
		})
	}
}

// runWidth runs npuprof as on a terminal of width columns (COLUMNS):
// standard output is not one, so there is no colour.
func runWidth(width int, args ...string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	s := newStreams(strings.NewReader(""), &out, &errb)
	s.width = width
	code = runMain(s, args)
	return code, out.String(), errb.String()
}

// The terminal summary at COLUMNS=80 and 120 for 8, 256 and 2,048 ranks
// (tracegen, small ranks: one MoE layer, two steps; rank 5 slow), golden
// byte for byte: no line is wider than the terminal, and the 2,048-rank
// summary is at most 60 lines. Each capture is analyzed once (--format
// json-full) and the saved document rendered at each width.
func TestGoldenScreen(t *testing.T) {
	if testing.Short() {
		t.Skip("generates a 2,048-rank capture")
	}
	root, err := os.Getwd()
	require.NoError(t, err)
	for _, n := range []int{8, 256, 2048} {
		t.Run(strconv.Itoa(n), func(t *testing.T) {
			sc := testutil.Scenario(t, "noep-cumsum")
			sc.Ranks, sc.Layers, sc.Steps = n, 1, 2
			sc.CommJSON, sc.SamplerCumsum = false, false
			sc.SlowRank, sc.SlowFactor = 5, 1.5
			dir, _ := testutil.Generate(t, sc)
			doc := filepath.Join(t.TempDir(), "doc.json")
			t.Chdir(dir) // the summary names the capture "."
			code, _, errs := run("analyze", ".", "-q", "--format", "json-full="+doc)
			require.Equal(t, ExitOK, code, errs)
			for _, width := range []int{80, 120} {
				code, out, errs := runWidth(width, "analyze", doc, "-q")
				require.Equal(t, ExitOK, code, errs)
				lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
				for i, l := range lines {
					require.LessOrEqual(t, render.DisplayWidth(l), width, "line %d: %q", i+1, l)
				}
				if n == 2048 {
					require.LessOrEqual(t, len(lines), 60, out)
				}
				golden.Check(t, filepath.Join(root, "../..", goldenDir, fmt.Sprintf("screen-%d-ranks-%d-columns.analyze.txt", n, width)), []byte(out))

				// the tables fit too: cut, never wrapped
				code, out, errs = runWidth(width, "analyze", doc, "-q", "--detail", "tables")
				require.Equal(t, ExitOK, code, errs)
				for i, l := range strings.Split(out, "\n") {
					require.LessOrEqual(t, render.DisplayWidth(l), width, "--detail tables line %d: %q", i+1, l)
				}
			}
		})
	}
}

// The summary's width is COLUMNS when it is a number, else the terminal's,
// else 0 (100); colour needs a terminal and no NO_COLOR or TERM=dumb.
func TestWidthAndColourFromEnvironment(t *testing.T) {
	env := func(kv ...string) func(string) string {
		return func(k string) string {
			for i := 0; i+1 < len(kv); i += 2 {
				if kv[i] == k {
					return kv[i+1]
				}
			}
			return ""
		}
	}
	var buf bytes.Buffer
	require.Equal(t, 80, termWidth(env("COLUMNS", "80"), &buf))
	require.Equal(t, 0, termWidth(env("COLUMNS", "wide"), &buf), "not a number, not a terminal: the default")
	require.Equal(t, 0, termWidth(env(), &buf))
	require.False(t, useColour(env(), &buf), "a pipe or a file has no colour")
	require.False(t, useColour(env("NO_COLOR", "1"), os.Stdout))
	require.False(t, useColour(env("TERM", "dumb"), os.Stdout))

	// off a terminal, the summary has no escape at any width
	code, out, errs := runWidth(80, "analyze", "../../testdata/traces/ep-fc1-cumsum", "-q")
	require.Equal(t, ExitOK, code, errs)
	require.NotContains(t, out, "\x1b")
}
