package render

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/npuprof/npuprof/internal/lang"
	"github.com/npuprof/npuprof/internal/results/diff"
)

// widthDiff is the diff of tracegen's ep-fc1-padded against noep-padded,
// its sides, two collectives and kernel rows as that run gives them.
func widthDiff(width int) *diff.Result {
	pct := func(v float64) *float64 { return &v }
	side := func(p string) diff.Side {
		return diff.Side{Path: p, Kind: "torch_npu_text", Ranks: []int{0, 1, 2, 3, 4, 5, 6, 7}, Steps: 6, StepsFrom: "decode.steps.count"}
	}
	return &diff.Result{
		Before: side("/tmp/wrap-ep-fc1-padded"), After: side("/tmp/wrap-noep-padded"),
		Collectives: []diff.CollectiveDelta{{Status: "gone", Type: "reducescatter", Group: "ep", BeforeCount: 36, BeforeUs: 1350}},
		Kernels: []diff.KernelDelta{
			{Name: "aclnnAddRmsNorm_AddRmsNorm_AddRmsNorm", OpType: "AddRmsNorm", Core: "AI_VECTOR_CORE", Status: "changed", BeforeUs: 57.3, AfterUs: 68.5, DeltaUs: 11.2, Pct: pct(19.5)},
			{Name: "aclnnFusedInferAttentionScore_FusedInferAttentionScore_FusedInferAttentionScore", OpType: "FusedInferAttentionScore", Core: "MIX_AIC", Status: "changed", BeforeUs: 189.3, AfterUs: 189.2, DeltaUs: -0.1, Pct: pct(-0.05)},
		},
		Run: diff.RunInfo{Width: width},
	}
}

// On a terminal (a width) every line of the diff fits it, and the kernel
// rows keep their change; without one the text is as wide as its rows.
func TestDiffTextFitsWidth(t *testing.T) {
	var buf bytes.Buffer
	require.NoError(t, WriteDiffText(&buf, widthDiff(80)))
	out := buf.String()
	for _, l := range strings.Split(out, "\n") {
		require.LessOrEqual(t, DisplayWidth(l), 80, l)
	}
	require.Regexp(t, `\n  changed  aclnnAddRmsNorm_AddRmsNorm_\S+ +57\.3µs +68\.5µs +\+11\.2µs \(\+19\.5%\)\n`, out)

	buf.Reset()
	require.NoError(t, WriteDiffText(&buf, widthDiff(0)))
	require.Contains(t, buf.String(), "aclnnFusedInferAttentionScore_FusedInferAttentionScore_Fused…  FusedInferAttentionScore  MIX_AIC")
}

// A Chinese diff's step table names every step quantity in Chinese, the
// one whose name is an identifier (communication_not_overlapped) too; the
// English keeps the quantities' names.
func TestDiffStepQuantitiesZH(t *testing.T) {
	r := widthDiff(0)
	for _, q := range diff.StepQuantities {
		r.Steps = append(r.Steps, diff.StepDelta{Quantity: q, UsChange: diff.UsChange{BeforeUs: 100, AfterUs: 90, DeltaUs: -10}})
	}
	r.Run.Lang = lang.ZH
	var buf bytes.Buffer
	require.NoError(t, WriteDiffText(&buf, r))
	out := buf.String()
	for _, zh := range []string{"窗口", "计算", "通信", "未掩盖通信", "空闲"} {
		require.Regexp(t, `\n +`+zh+` +100\.0µs +90\.0µs`, out)
	}
	require.NotContains(t, out, "communication_not_overlapped")

	r.Run.Lang = lang.EN
	buf.Reset()
	require.NoError(t, WriteDiffText(&buf, r))
	require.Regexp(t, `\n +communication_not_overlapped +100\.0µs +90\.0µs`, buf.String())
}

// With ASCIIUnits (check's summary on a locale that is not UTF-8) the
// comparison spells µs as us, on a terminal and off one.
func TestDiffSummaryASCIIUnits(t *testing.T) {
	for _, width := range []int{0, 80} {
		r := widthDiff(width)
		var utf, ascii bytes.Buffer
		require.NoError(t, WriteDiffSummary(&utf, r))
		r.Run.ASCIIUnits = true
		require.NoError(t, WriteDiffSummary(&ascii, r))
		require.Contains(t, utf.String(), "µs")
		require.Equal(t, strings.ReplaceAll(utf.String(), "µs", "us"), ascii.String(), "width %d", width)
	}
}

// On a terminal a kernel's name gets the room its row leaves, in diff's
// kernel table and in check --baseline's comparison: a 120-rune name is
// whole at 200 columns; at 80 it is cut ("…") and the row still fits,
// its change on it. Without a width it is cut at 60 runes, as before.
func TestDiffKernelNameTakesTheRoom(t *testing.T) {
	long := "aclnn" + strings.Repeat("GroupedMatmul_", 8) + "End"
	require.Len(t, []rune(long), 120)
	kernelDiff := func(width int, l string) *diff.Result {
		r := widthDiff(width)
		pct := 19.5
		r.Kernels = []diff.KernelDelta{{Name: long, OpType: "GroupedMatmul", Core: "AI_CORE", Status: "changed",
			BeforeUs: 57.3, AfterUs: 68.5, DeltaUs: 11.2, Pct: &pct}}
		r.Run.Lang = l
		return r
	}
	for _, l := range []string{lang.EN, lang.ZH} {
		var text, sum bytes.Buffer
		require.NoError(t, WriteDiffText(&text, kernelDiff(200, l)))
		require.NoError(t, WriteDiffSummary(&sum, kernelDiff(200, l)))
		for _, out := range []string{text.String(), sum.String()} {
			require.Contains(t, out, long, l)
			require.NotContains(t, out, "…", l)
			for _, line := range strings.Split(out, "\n") {
				require.LessOrEqual(t, DisplayWidth(line), 200, line)
			}
		}
		require.Regexp(t, `\n  \S+ +`+long+` +GroupedMatmul +AI_CORE +57\.3µs +68\.5µs +\+11\.2µs \(\+19\.5%\)\n`, text.String(), l)

		text.Reset()
		sum.Reset()
		require.NoError(t, WriteDiffText(&text, kernelDiff(80, l)))
		require.NoError(t, WriteDiffSummary(&sum, kernelDiff(80, l)))
		for _, out := range []string{text.String(), sum.String()} {
			require.NotContains(t, out, long, l)
			for _, line := range strings.Split(out, "\n") {
				require.LessOrEqual(t, DisplayWidth(line), 80, line)
			}
		}
		// the table's row: the cut name and the change on one line (the
		// type and core columns gone: the name would have under 24)
		require.Regexp(t, `\n  \S+ +aclnnGroupedMatmul_\S*… +57\.3µs +68\.5µs +\+11\.2µs \(\+19\.5%\)\n`, text.String(), l)
		// the comparison's line leaves the name under 24 columns: the
		// name takes a continuation line of its own, 74 columns of it
		require.Contains(t, sum.String(), "\n      "+string([]rune(long)[:73])+"…\n", l)
	}

	// no width (a pipe, a golden): 60 runes, as before
	var text, sum bytes.Buffer
	require.NoError(t, WriteDiffText(&text, kernelDiff(0, lang.EN)))
	require.NoError(t, WriteDiffSummary(&sum, kernelDiff(0, lang.EN)))
	for _, out := range []string{text.String(), sum.String()} {
		require.Contains(t, out, " "+string([]rune(long)[:60])+"… ")
	}
}
