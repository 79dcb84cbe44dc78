package render

import (
	"bytes"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/npuprof/npuprof/internal/results"
)

// parallelStrategyFix is parallel-strategy's fix as the a3-tp4dp4-rc1
// capture renders it: its YAML breaks lines mid-sentence.
const parallelStrategyFix = "With 1 request(s) in flight, DP=4 leaves replicas idle (they still run dummy\nMoE steps) while each replica's TP group is small. Prefer larger TP and smaller DP\n(TP8xDP2 instead of TP4xDP4):\nfor Qwen3-VL-235B single-request decode, TP8xDP2 reached 24 tokens/s where TP4xDP4 gave 18.\nKeep --max-num-seqs x DP >= the concurrency you serve."

// fixLines renders f's whole fix (--detail all) at width columns and
// returns the fix's lines.
func fixLines(t *testing.T, fix string, zh bool, width int) []string {
	var buf bytes.Buffer
	ww := &wrapWriter{w: &buf, width: width}
	ew := &errWriter{w: ww, wrap: ww, l: labels{zh: zh}, width: width}
	f := &results.Finding{Rule: "parallel-strategy", Severity: "medium", Title: "t", Fix: fix}
	writeFinding(ew, &results.Document{}, f, true)
	require.NoError(t, ww.Flush())
	lines := strings.Split(strings.TrimRight(buf.String(), "\n"), "\n")
	return lines[1:] // after the title line
}

// A fix's line broken mid-sentence in its YAML is one paragraph on the
// terminal: wrapped to the width, not broken twice ("dummy" alone).
func TestFixReflowsSoftBreaks(t *testing.T) {
	got := fixLines(t, parallelStrategyFix, false, 80)
	require.Equal(t, []string{
		"      With 1 request(s) in flight, DP=4 leaves replicas idle (they still run",
		"          dummy MoE steps) while each replica's TP group is small. Prefer larger",
		"          TP and smaller DP (TP8xDP2 instead of TP4xDP4): for Qwen3-VL-235B",
		"          single-request decode, TP8xDP2 reached 24 tokens/s where TP4xDP4 gave",
		"          18.",
		"      Keep --max-num-seqs x DP >= the concurrency you serve.",
	}, got)

	// a command block, a list and a diff keep their lines
	block := "Set:\n  export HCCL_OP_EXPANSION_MODE=AIV\n  export X=1\n- one\n- two\n+added line\n-removed line"
	require.Equal(t, []string{"      Set:", "        export HCCL_OP_EXPANSION_MODE=AIV", "        export X=1",
		"      - one", "      - two", "      +added line", "      -removed line"}, fixLines(t, block, false, 80))

	// Chinese joins without a space between two wide characters
	zh := "它们仍在运行 dummy MoE step，而每个副本的\nTP 组又很小，优先选择更大的\n张量并行。"
	require.Equal(t, []string{"      它们仍在运行 dummy MoE step，而每个副本的 TP 组又很小，优先选择更大的张量并行。"}, fixLines(t, zh, true, 100))
}

// moeCumsumFixZH is moe-routing-cumsum's Chinese fix as ep-fc1-cumsum
// renders it: its intro line ends in a full-width colon and the sentence
// goes on in the next line, as the English "...token_dispatch:\ncall ...".
const moeCumsumFixZH = "在 vllm_ascend/ops/fused_moe/token_dispatcher.py 的 TokenDispatcherWithAllGather.token_dispatch 中：\n" +
	"调用路由算子时传 expert_tokens_num_type=0（而不是 1），并紧接着设置 group_list_type = 0（而不是 1），\n" +
	"这样 MoeInitRoutingCustom 直接输出累积 token 数，cumsum_group_list（vllm_ascend/ops/fused_moe/moe_mlp.py）无需再转换。\n" +
	"这些 Cumsum 算子在 AI CPU 上运行（int64 cumsum 没有 AI Core 实现，每个约 30-40 µs）：此处每个 rank 8 个。\n" +
	"实测：每个 rank 269.5µs，共执行了 8 个 MoE 层。\n" +
	"不要改为设置 expert_tokens_num_flag=False：那样 group list 将不会被初始化。"

// A Chinese line ending in "：" runs on into Chinese text on the next line
// (Chinese has no capitals to open a new sentence): the summary's fix
// shows what to change within MaxFixLines lines, as the English one does,
// not only its intro.
func TestFixReflowsChineseColon(t *testing.T) {
	var buf bytes.Buffer
	ww := &wrapWriter{w: &buf, width: TextWidth}
	ew := &errWriter{w: ww, wrap: ww, l: labels{zh: true}, width: TextWidth}
	f := &results.Finding{Rule: "moe-routing-cumsum", Severity: "high", Title: "t", Fix: moeCumsumFixZH}
	writeFinding(ew, &results.Document{}, f, false)
	require.NoError(t, ww.Flush())
	lines := strings.Split(strings.TrimRight(buf.String(), "\n"), "\n")
	fix := lines[2:] // after the title and the rule's line
	require.LessOrEqual(t, len(fix), MaxFixLines, buf.String())
	got := strings.Join(fix, "\n")
	for _, want := range []string{"expert_tokens_num_type=0", "group_list_type = 0", "无需再转换。"} {
		require.Contains(t, got, want)
	}
	// a colon before Latin text keeps its break
	require.False(t, softBreak("设置：", "Qwen3-VL-235B 单请求"))
}

// A fix's line longer than MaxFixLineRunes (a command with many capture
// sizes) is whole under --detail all, wrapped to the width; the summary
// cuts it with "…" and its note points to --detail all.
func TestFixLongLineWholeUnderDetailAll(t *testing.T) {
	sizes := make([]string, 89)
	for i := range sizes {
		sizes[i] = strconv.Itoa(i + 1)
	}
	cmd := `  --compilation-config '{"cudagraph_mode":"FULL_DECODE_ONLY","cudagraph_capture_sizes":[` + strings.Join(sizes, ",") + `]}' END`
	require.Greater(t, len(cmd), 300)
	fix := "Run with:\n" + cmd

	all := strings.Join(fixLines(t, fix, false, 100), "\n")
	require.True(t, strings.HasSuffix(all, "]}' END"), all)
	require.NotContains(t, all, "…")

	var buf bytes.Buffer
	ww := &wrapWriter{w: &buf, width: 100}
	ew := &errWriter{w: ww, wrap: ww, width: 100}
	f := &results.Finding{Rule: "long-fix", Severity: "high", Title: "t", Fix: fix}
	require.True(t, writeFinding(ew, &results.Document{}, f, false), "the summary reports the cut")
	require.NoError(t, ww.Flush())
	require.Contains(t, buf.String(), "…\n")
	require.NotContains(t, buf.String(), "END")
}
