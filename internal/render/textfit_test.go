package render

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/npuprof/npuprof/internal/results"
	"github.com/npuprof/npuprof/internal/results/assemble"
)

func TestWrapLine(t *testing.T) {
	long := "  [HIGH] " + strings.Repeat("word ", 30)
	got := strings.Split(wrapLine(long, 40), "\n")
	for _, l := range got {
		require.LessOrEqual(t, len(l), 40, l)
	}
	require.True(t, strings.HasPrefix(got[1], "      word"), "continuation indented by 4: %q", got[1])
	require.Equal(t, strings.Fields(long), strings.Fields(strings.Join(got, " ")), "no word lost")

	// a quoted JSON value is not broken: the break comes before or after it
	flag := `        - graph mode: --compilation-config '{"cudagraph_mode": "FULL_DECODE_ONLY"}' (one launch per decode step)`
	got = strings.Split(wrapLine(flag, 100), "\n")
	require.Equal(t, []string{`        - graph mode: --compilation-config '{"cudagraph_mode": "FULL_DECODE_ONLY"}' (one launch per`,
		`            decode step)`}, got)
	require.Equal(t, "short", wrapLine("short", 100))

	// an apostrophe inside a word is not a quote: the line still breaks at
	// spaces after it, never inside a word
	apos := "      - upgrade: vLLM-Ascend's next release carries the fused dispatch and combine kernels for this path"
	got = strings.Split(wrapLine(apos, 60), "\n")
	require.Equal(t, []string{"      - upgrade: vLLM-Ascend's next release carries the",
		"          fused dispatch and combine kernels for this path"}, got)

	// a plural possessive opens no quote: the line breaks after it
	poss := "  [HIGH] MoE dispatch + combine take 85.0% of the MoE kernels' time at decode batch 1: 181.1µs per MoE layer"
	got = strings.Split(wrapLine(poss, 100), "\n")
	require.Equal(t, "  [HIGH] MoE dispatch + combine take 85.0% of the MoE kernels' time at decode batch 1: 181.1µs per", got[0])

	// a quote that never closes does not make the rest unbreakable
	open := "    - set '" + strings.Repeat("value ", 15)
	for _, l := range strings.Split(wrapLine(open, 40), "\n") {
		require.LessOrEqual(t, len(l), 40, l)
		require.False(t, strings.HasSuffix(l, "valu"), "word cut: %q", l)
	}
}

func TestSlowestStepsAndStats(t *testing.T) {
	var rows []stepRow
	for i := 1; i <= 20; i++ {
		rows = append(rows, stepRow{id: i, key: float64(i % 7)})
	}
	top, capped := slowestSteps(rows, false)
	require.True(t, capped)
	var ids []int
	for _, r := range top {
		ids = append(ids, r.id)
	}
	// keys 6 (6, 13, 20), 5 (5, 12, 19), 4 (4, 11, 18), then the first 3
	// (3; ties keep step order), listed in step order
	require.Equal(t, []int{3, 4, 5, 6, 11, 12, 13, 18, 19, 20}, ids)
	all, capped := slowestSteps(rows, true)
	require.False(t, capped)
	require.Len(t, all, 20)

	require.Equal(t, []float64{5.5, 5, 9, 10}, summaryStats([]float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}))
	require.Equal(t, []int{3}, outliers([]float64{10, 10.5, 9.5, 40, 10.2, 9.8}, 3.5))
}

// The summary shows a fix through its first command block, within
// MaxFixLines terminal lines, never cutting a command line.
func TestFixHead(t *testing.T) {
	const ind = "      "
	// the opening line and its commands, not the prose after them
	fc1 := "Turn FLASHCOMM1 and expert parallel off:\n  - unset VLLM_ASCEND_ENABLE_FLASHCOMM1\n  - drop --enable-expert-parallel\nEach MoE layer then runs one TP all-reduce.\nMore prose."
	head, rest := fixHead(fc1, ind, TextWidth)
	require.Equal(t, []string{"Turn FLASHCOMM1 and expert parallel off:", "  - unset VLLM_ASCEND_ENABLE_FLASHCOMM1", "  - drop --enable-expert-parallel"}, head)
	require.Equal(t, 2, rest)

	// prose before the command: the command still shows, whole, though
	// it wraps past the budget
	long := strings.Repeat("x", 120)
	eplb := "Rank 5 hosts the hot experts.\nEvery other rank waits.\nBalance the experts with EPLB:\n  --additional-config '" + long + "'\nor a static placement."
	head, rest = fixHead(eplb, ind, TextWidth)
	require.Equal(t, []string{"Rank 5 hosts the hot experts.", "Every other rank waits.", "Balance the experts with EPLB:", "  --additional-config '" + long + "'"}, head)
	require.Equal(t, 1, rest)

	// prose only: the first MaxFixLines terminal lines, whole lines
	three := "Three " + strings.Repeat("word ", 19) + "word" // two terminal lines
	prose := "One.\nTwo.\n" + three + "\nFour.\nFive."
	head, rest = fixHead(prose, ind, TextWidth)
	require.Equal(t, []string{"One.", "Two.", three}, head)
	require.Equal(t, 2, rest)

	// a line that opens a block not shown is dropped with it
	levers := strings.Repeat("a ", 60) + "\n" + strings.Repeat("b ", 60) + "\nLevers:\n  - overlap " + strings.Repeat("c ", 60)
	head, rest = fixHead(levers, ind, TextWidth)
	require.Len(t, head, 2)
	require.Equal(t, 2, rest)

	// a short fix is shown whole
	head, rest = fixHead("Set:\n  export HCCL_OP_EXPANSION_MODE=AIV", ind, TextWidth)
	require.Equal(t, []string{"Set:", "  export HCCL_OP_EXPANSION_MODE=AIV"}, head)
	require.Zero(t, rest)
}

func TestRankRunsAndFitLine(t *testing.T) {
	require.Equal(t, "0, 2-5, 7, 8", rankRuns([]int{0, 2, 3, 4, 5, 7, 8}))
	require.Equal(t, "ranks 4-63", ranksText([]int{4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60, 61, 62, 63}))
	require.Equal(t, "rank 3", ranksText([]int{3}))

	head := "  flashcomm1 = true  ("
	src := "profile: rank 0 runs 3 all-gather, 2 reduce-scatter, 0 all-reduce per MoE layer and more words here"
	got := head + fitLine(head, src, ")", TextWidth) + ")"
	require.Equal(t, TextWidth, utf8.RuneCountInString(got), got)
	require.True(t, strings.HasSuffix(got, "…)"), got)
	require.Equal(t, "short", fitLine(head, "short", ")", TextWidth))
}

// A title too long for the summary is cut after its last whole clause, or
// word, never inside one: "over 10 o…" read as a number that is not there.
func TestCutTitleKeepsWholeClauses(t *testing.T) {
	title := "Communication not overlapped with compute takes 25.9% of the window; the top collective is all-gather (group tp) 397.2µs over 10 ops, 7.6% of the window"
	require.Equal(t, "Communication not overlapped with compute takes 25.9% of the window…", cutTitle(title, 130))
	require.Equal(t, title, cutTitle(title, 200))
	words := "Decode batch 32 has no captured graph and the largest captured size is 16 while the steady batch is 32 tokens per step at concurrency 25 over many steps"
	require.Equal(t, "Decode batch 32 has no captured graph and the largest captured size is 16 while the steady batch is…", cutTitle(words, 100))
	require.Equal(t, "通信未与计算重叠，占窗口的 25.9%…", cutTitle("通信未与计算重叠，占窗口的 25.9%；最大的集合通信是 all-gather（tp 组）397.2µs，共 10 次，占窗口的 7.6%，还有更多的文字", 40))
}

func TestCutTitleKeepsWholeListItems(t *testing.T) {
	require.Equal(t, "no captured graph (capture sizes 1,2,4,8,16,…", cutTitle("no captured graph (capture sizes 1,2,4,8,16,24,32)", 45))
}

// A finding's "(rule, saving)" is never split by wrapping: "(comm-bound,
// no" then "saving estimated)" on the next line.
func TestTitleLineKeepsTheRuleWhole(t *testing.T) {
	head := "  [MEDIUM] Communication not overlapped with compute takes 25.9% of the window…"
	require.Equal(t, head+"\n      (comm-bound, no saving estimated)", titleLine(head, "  (comm-bound, no saving estimated)", TextWidth))
	require.Equal(t, "  [HIGH] short  (r, est. saving 1.0µs)", titleLine("  [HIGH] short", "  (r, est. saving 1.0µs)", TextWidth))
}

// A table row wider than the screen is cut, not wrapped; a severity tag
// is coloured after the line is laid out (the escapes take no column).
func TestCutAndColourLines(t *testing.T) {
	row := "  aclnnGroupedMatmulV4_GroupedMatmul  GroupedMatmul  AI_CORE  128  13.69ms  106.9µs"
	require.Equal(t, "  aclnnGroupedMatmulV4_GroupedMatmul  GroupedMatmul  AI_CORE…", cutLine(row, 62))
	require.LessOrEqual(t, DisplayWidth(cutLine(row, 62)), 62)
	require.Equal(t, row, cutLine(row+"   ", 100), "trailing padding is dropped, a row that fits is kept")
	require.Equal(t, "  \x1b[1;31m[HIGH]\x1b[0m Decode batch 25", colourLine("  [HIGH] Decode batch 25"))
	require.Equal(t, "  \x1b[1;33m[MEDIUM]\x1b[0m x", colourLine("  [MEDIUM] x"))
	require.Equal(t, "      call [HIGH] here", colourLine("      call [HIGH] here"), "only a line's opening tag")

	var b strings.Builder
	doc := assemble.Doc(committedResult(t, "ep-fc1-cumsum"), synthFindings()[:1])
	doc.Run.Text = results.TextOptions{Width: 70, Colour: true}
	require.NoError(t, WriteText(&b, doc))
	require.Contains(t, b.String(), "\n  \x1b[1;33m[MEDIUM]\x1b[0m ")
	for _, l := range strings.Split(b.String(), "\n") {
		plain := strings.NewReplacer("\x1b[1;33m", "", "\x1b[0m", "").Replace(l)
		require.LessOrEqual(t, DisplayWidth(plain), 70, l)
	}
}
