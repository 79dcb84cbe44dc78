package render

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"html"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/npuprof/npuprof/internal/analysis"
	"github.com/npuprof/npuprof/internal/pipeline"
	"github.com/npuprof/npuprof/internal/results"
	"github.com/npuprof/npuprof/internal/results/assemble"
	"github.com/npuprof/npuprof/internal/testutil"
	"github.com/npuprof/npuprof/internal/tracegen"
)

func renderHTML(t testing.TB, in htmlInput) string {
	t.Helper()
	var b bytes.Buffer
	require.NoError(t, writeHTML(&b, in))
	return b.String()
}

func loadSample(t testing.TB, rel string) *analysis.Result {
	t.Helper()
	res, err := pipeline.Analyze(context.Background(), testutil.Sample(t, rel), pipeline.Options{TimelineSample: true})
	require.NoError(t, err)
	return res
}

const level1 = "Ascend-msinsight/test/data/pytorch/text/level1"

var sectionOrder = []string{"header", "findings", "breakdown", "deployment", "communication", "moe", "eventwait", "kernels", "skew", "experts", "timeline", "notes"}

// checkSections asserts the sections appear once each, in order.
func checkSections(t *testing.T, page string, experts bool) {
	t.Helper()
	last := -1
	for _, s := range sectionOrder {
		marker := `data-section="` + s + `"`
		n := strings.Count(page, marker)
		if s == "experts" && !experts {
			require.Zero(t, n, "expert section must be absent without expert loads")
			continue
		}
		require.Equal(t, 1, n, "section %s", s)
		i := strings.Index(page, marker)
		require.Greater(t, i, last, "section %s out of order", s)
		last = i
	}
}

var metricCell = regexp.MustCompile(`data-rank="(-?\d+)" data-metric="([^"]+)" data-v="([^"]+)"`)

// checkNumbers asserts that every metric cell holds exactly the JSON
// document's value, and returns how many were checked.
func checkNumbers(t *testing.T, page string, doc *results.Document) int {
	t.Helper()
	byRank := map[int]results.RankDoc{}
	for _, rd := range doc.Ranks {
		byRank[rd.Rank] = rd
	}
	n := 0
	for _, m := range metricCell.FindAllStringSubmatch(page, -1) {
		rank, _ := strconv.Atoi(m[1])
		metric := html.UnescapeString(m[2])
		got, err := strconv.ParseFloat(m[3], 64)
		require.NoError(t, err)
		rd, ok := byRank[rank]
		require.True(t, ok, "rank %d not in the document", rank)
		if rest, ok := strings.CutPrefix(metric, "step."); ok {
			id, field, _ := strings.Cut(rest, ".")
			found := false
			for _, s := range rd.Steps {
				if strconv.Itoa(s.Step) == id {
					want, ok := s.Value(field)
					require.True(t, ok, "rank %d: %s shown but null in the document", rank, metric)
					require.Equal(t, want, got, "rank %d %s", rank, metric)
					found = true
				}
			}
			require.True(t, found, "rank %d: %s not in the document", rank, metric)
		} else {
			want, ok := cleanedMetrics(rd)[metric]
			require.True(t, ok, "rank %d: %s shown but not in the document", rank, metric)
			require.Equal(t, want, got, "rank %d %s", rank, metric)
		}
		n++
	}
	return n
}

// cleanedMetrics keys a rank's metrics by their shown name (trace text in
// a metric name, such as a group name, is cleaned like all trace text).
func cleanedMetrics(rd results.RankDoc) map[string]float64 {
	out := map[string]float64{}
	for k, v := range rd.Metrics {
		out[cleanText(k, 0)] = v
	}
	return out
}

// chartOptions returns the chart payloads embedded in the page.
func chartOptions(t *testing.T, page string) map[string]map[string]any {
	t.Helper()
	const open = `<script type="application/json" id="npuprof-charts">`
	i := strings.Index(page, open)
	require.GreaterOrEqual(t, i, 0)
	rest := page[i+len(open):]
	j := strings.Index(rest, "</script>")
	require.GreaterOrEqual(t, j, 0)
	var payloads []map[string]any
	require.NoError(t, json.Unmarshal([]byte(rest[:j]), &payloads))
	out := map[string]map[string]any{}
	for _, p := range payloads {
		out[p["id"].(string)] = p
		present(t, page, `id="`+p["id"].(string)+`"`)
	}
	return out
}

// seriesValues returns a bar chart's values of the named series.
func seriesValues(t *testing.T, p map[string]any, name string) []any {
	t.Helper()
	for _, s := range p["option"].(map[string]any)["series"].([]any) {
		sm := s.(map[string]any)
		if sm["name"] == name {
			var out []any
			for _, d := range sm["data"].([]any) {
				out = append(out, d.(map[string]any)["value"])
			}
			return out
		}
	}
	t.Fatalf("no series %q", name)
	return nil
}

// absent fails, showing some context, when page contains s.
func absent(t *testing.T, page, s string) {
	t.Helper()
	if i := strings.Index(page, s); i >= 0 {
		lo, hi := max(0, i-120), min(len(page), i+len(s)+120)
		t.Fatalf("page contains %q at %d: …%s…", s, i, page[lo:hi])
	}
}

// present fails, without dumping the page, when page lacks s.
func present(t *testing.T, page, s string) {
	t.Helper()
	if !strings.Contains(page, s) {
		t.Fatalf("page lacks %q", s)
	}
}

// checkSelfContained: nothing is loaded from anywhere.
func checkSelfContained(t *testing.T, page string) {
	t.Helper()
	// ECharts' own source mentions <img> (its save-as-image feature, never
	// used here); check everything else.
	require.Equal(t, 1, strings.Count(page, echartsJS), "ECharts is inlined once")
	low := strings.ToLower(strings.Replace(page, echartsJS, "", 1))
	for _, bad := range []string{"<script src", "<link", "<img", "<iframe", "@import", "url(http", "src=\"http", "src=\"//"} {
		absent(t, low, bad)
	}
	low = strings.ToLower(page)
	// exactly the three script elements: chart data, ECharts, report.js
	require.Equal(t, 3, strings.Count(low, "<script"), "script elements")
	require.Equal(t, 3, strings.Count(low, "</script"), "closing script tags")
	present(t, page, "Content-Security-Policy")
}

func TestHTMLReportRealSample(t *testing.T) {
	res := loadSample(t, level1)
	page := renderHTML(t, htmlInput{Doc: assemble.Doc(res, nil), Version: "test"})
	doc := assemble.Doc(res, nil)
	checkSections(t, page, false)
	checkSelfContained(t, page)
	n := checkNumbers(t, page, doc)
	require.GreaterOrEqual(t, n, 2*7+2*6, "metric cells")
	for _, rd := range doc.Ranks {
		for _, m := range []string{"device.window.time_us", "overlap.computing.time_us", "overlap.communication_not_overlapped.time_us",
			"overlap.free.time_us", "hccl.allreduce.time_us", "hccl.allreduce.count", "event_wait.stream.2.time_us"} {
			present(t, page, fmt.Sprintf(`data-rank="%d" data-metric="%s" data-v="%s"`, rd.Rank, m, raw(rd.Metrics[m])))
		}
	}
	charts := chartOptions(t, page)
	// the chart draws the same values as the JSON document
	vals := seriesValues(t, charts["chart-comm-type"], "allreduce")
	require.Len(t, vals, len(doc.Ranks))
	for i, rd := range doc.Ranks {
		require.Equal(t, rd.Metrics["hccl.allreduce.time_us"], vals[i])
	}
	vals = seriesValues(t, charts["chart-breakdown"], "free")
	for i, rd := range doc.Ranks {
		require.Equal(t, rd.Metrics["overlap.free.time_us"], vals[i])
	}
	for _, id := range []string{"chart-breakdown", "chart-steps", "chart-comm-type", "chart-wait-streams", "chart-skew", "chart-timeline-0", "chart-timeline-1"} {
		require.Contains(t, charts, id)
	}
	// no parallel_group_info: the group split is unavailable, with the reason
	present(t, page, "profiler_metadata.json has no parallel_group_info")
	present(t, page, "No MoE kernels")
	present(t, page, "No rule fired")
}

func TestHTMLReportSynthetic(t *testing.T) {
	res := synthResult(t, synth{ranks: 4, layers: 12, steps: 3, noHCCL: true})
	findings := synthFindings()
	page := renderHTML(t, htmlInput{Doc: assemble.Doc(res, findings), Experts: synthExperts(12, 16), Version: "test",
		Facts: []Fact{{Name: "capture sizes", Value: "[1, 2, 4, 8]", Source: "vllm serve --compilation-config " + hostileEnv}}})
	doc := assemble.Doc(res, findings)
	checkSections(t, page, true)
	checkSelfContained(t, page)
	n := checkNumbers(t, page, doc)
	require.Greater(t, n, 100)

	// findings: largest estimated saving first
	high := strings.Index(page, "Collectives are not overlapped")
	med := strings.Index(page, "Cumsum runs on the AI CPU")
	info := strings.Index(page, "An info finding")
	require.True(t, high > 0 && high < med && med < info, "findings order %d %d %d", high, med, info)
	present(t, page, `class="finding sev-high"`)
	present(t, page, `class="finding sev-medium"`)
	present(t, page, `class="finding sev-info"`)
	present(t, page, `<span class="d-add">&#43;export VLLM_ASCEND_ENABLE_FLASHCOMM1=1</span>`)
	present(t, page, `data-v="98765.4"`)
	absent(t, page, "javascript:alert")

	// facts with their sources
	present(t, page, "EP size")
	present(t, page, "FLASHCOMM1")
	present(t, page, "capture sizes")

	// the rank without collectives shows "unavailable: <reason>", never 0
	last := res.Ranks[len(res.Ranks)-1].Rank
	absent(t, page, fmt.Sprintf(`data-rank="%d" data-metric="hccl.total.time_us"`, last))
	present(t, page, "<b>rank 3</b> unavailable: no collective data")

	charts := chartOptions(t, page)
	for _, id := range []string{"chart-moe-buckets", "chart-moe-layers", "chart-moe-layer-heat", "chart-comm-group", "chart-experts", "chart-steps"} {
		require.Contains(t, charts, id)
	}
	for id, p := range charts {
		grids, _ := p["option"].(map[string]any)["grid"].([]any)
		require.LessOrEqual(t, len(grids), 1, "chart %s: one grid, or the series ignore its layout", id)
	}
	vals := seriesValues(t, charts["chart-moe-buckets"], "Cumsum (routing path)")
	for i, rd := range doc.Ranks {
		require.Equal(t, rd.Metrics["moe.cumsum.time_us"], vals[i])
	}
}

func TestHTMLEscapesHostileText(t *testing.T) {
	res := synthResult(t, synth{ranks: 2, layers: 3, steps: 2})
	page := renderHTML(t, htmlInput{Doc: assemble.Doc(res, synthFindings()), Experts: synthExperts(3, 4)})
	if !utf8.ValidString(page) {
		for i := 0; i < len(page); {
			r, n := utf8.DecodeRuneInString(page[i:])
			if r == utf8.RuneError && n == 1 {
				t.Fatalf("invalid UTF-8 at %d: …%q…", i, page[max(0, i-150):min(len(page), i+50)])
			}
			i += n
		}
	}
	absent(t, page, "\xff")
	// never raw, in text, attributes, or the embedded JSON
	for _, bad := range []string{"<script>alert", "</script><script>", `"'&_Kernel`} {
		absent(t, page, bad)
	}
	// shown as text: HTML-escaped in the page, \u003c-escaped in JSON
	present(t, page, "&lt;script&gt;alert(1)&lt;/script&gt;&#34;&#39;&amp;\uFFFD\uFFFD_Kernel")
	present(t, page, `&lt;/script&gt;&lt;script&gt;alert(2)&lt;/script&gt;`)
	present(t, page, `"\u003cscript\u003ealert(1)\u003c/script\u003e\"'\u0026��_Kernel"`)
	present(t, page, "/profiles/&lt;script&gt;alert(3)&lt;/script&gt;&#34;q")
	checkSelfContained(t, page)
}

func TestHTMLReportStaysSmall(t *testing.T) {
	if testing.Short() {
		t.Skip("large synthetic profile")
	}
	// 8 ranks × 94 layers × 12 steps: ~110k tasks per rank
	res := synthResult(t, synth{ranks: 8, layers: 94, steps: 12})
	page := renderHTML(t, htmlInput{Doc: assemble.Doc(res, synthFindings()), Experts: synthExperts(94, 256)})
	t.Logf("report size %d bytes (ECharts %d)", len(page), len(echartsJS))
	require.Less(t, len(page), 5<<20)
	// every mini timeline is capped
	for id, p := range chartOptions(t, page) {
		if strings.HasPrefix(id, "chart-timeline") {
			data := p["option"].(map[string]any)["series"].([]any)[0].(map[string]any)["data"].([]any)
			require.LessOrEqual(t, len(data), maxTimelineBoxes, id)
		}
	}
}

func TestHTMLFindingsEmptyAndNil(t *testing.T) {
	res := synthResult(t, synth{ranks: 1, layers: 2, steps: 1})
	for _, fs := range [][]results.Finding{nil, {}} {
		page := renderHTML(t, htmlInput{Doc: assemble.Doc(res, fs)})
		present(t, page, "No rule fired")
	}
}

// genResult writes a tracegen scenario into a temporary folder and
// analyzes it through the real parser.
func genResult(t testing.TB, s tracegen.Scenario) *analysis.Result {
	t.Helper()
	dir := t.TempDir()
	_, err := tracegen.Generate(dir, s)
	require.NoError(t, err)
	res, err := pipeline.Analyze(context.Background(), dir, pipeline.Options{TimelineSample: true})
	require.NoError(t, err)
	return res
}

// committedResult analyzes a trace committed under testdata/traces.
func committedResult(t testing.TB, name string) *analysis.Result {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	dir := filepath.Join(filepath.Dir(file), "..", "..", "testdata", "traces", name)
	res, err := pipeline.Analyze(context.Background(), dir, pipeline.Options{TimelineSample: true})
	require.NoError(t, err)
	// the path as a user would type it, not this machine's
	res.Path = "testdata/traces/" + name
	return res
}

// checkAxisTitles asserts every chart names both axes, and a duration
// axis its unit (the browser test checks they are drawn).
func checkAxisTitles(t *testing.T, charts map[string]map[string]any) {
	t.Helper()
	for id, p := range charts {
		o := p["option"].(map[string]any)
		for _, key := range []string{"xAxis", "yAxis"} {
			ax := listOf(o[key])
			require.NotEmpty(t, ax, "chart %s has a %s", id, key)
			name, _ := ax[0]["name"].(string)
			require.NotEmpty(t, name, "chart %s: %s title", id, key)
			if lab, ok := ax[0]["axisLabel"].(map[string]any); ok {
				if f, _ := lab["formatter"].(string); f == "fn:us" || f == "fn:ms" || f == "fn:s" {
					require.True(t, strings.HasSuffix(name, "("+map[string]string{"fn:us": "µs", "fn:ms": "ms", "fn:s": "s"}[f]+")"),
						"chart %s: %s %q names the unit its ticks are in (%s)", id, key, name, f)
				}
				require.NotEqual(t, "fn:dur", lab["formatter"], "chart %s: %s ticks in one unit", id, key)
			}
		}
	}
}

// Every built-in 8-rank scenario (MoE kernels, Cumsum, collectives by
// group, with and without profiler steps) renders with the JSON
// document's numbers, and the committed trace too.
func TestHTMLReportTracegenScenarios(t *testing.T) {
	for _, s := range tracegen.Scenarios() {
		s.CommJSON = false
		t.Run(s.Name, func(t *testing.T) {
			res := genResult(t, s)
			page := renderHTML(t, htmlInput{Doc: assemble.Doc(res, nil)})
			doc := assemble.Doc(res, nil)
			// hot-experts writes a MindIE dump beside the profile: the
			// expert section appears with its heatmap and per-rank bars.
			checkSections(t, page, s.HotExperts > 0)
			checkSelfContained(t, page)
			require.Greater(t, checkNumbers(t, page, doc), 8*10)
			charts := chartOptions(t, page)
			for _, id := range []string{"chart-breakdown", "chart-comm-type", "chart-comm-group", "chart-moe-buckets", "chart-moe-layers",
				"chart-wait-streams", "chart-skew", "chart-timeline-0", "chart-timeline-7"} {
				require.Contains(t, charts, id)
			}
			checkAxisTitles(t, charts)
			if s.ProfilerSteps {
				require.Contains(t, charts, "chart-steps")
				present(t, page, "median-length step")
			}
			present(t, page, "TP size")
			if s.ExpertParallel {
				present(t, page, "EP size")
			}
			if s.HotExperts > 0 {
				require.Contains(t, charts, "chart-experts")
				require.Contains(t, charts, "chart-expert-ranks")
				present(t, page, "Slowest EP rank: rank 5")
				present(t, page, "npuprof eplb plan --experts")
			}
		})
	}
	t.Run("committed/ep-fc1-cumsum", func(t *testing.T) {
		res := committedResult(t, "ep-fc1-cumsum")
		page := renderHTML(t, htmlInput{Doc: assemble.Doc(res, nil)})
		checkSections(t, page, false)
		require.Greater(t, checkNumbers(t, page, assemble.Doc(res, nil)), 8*10)
		present(t, page, "EP size")
	})
}

// A full-size decode capture (94 MoE layers, 8 ranks, profiler steps)
// from the generator stays well under 5 MB.
func TestHTMLReportTracegenFullSize(t *testing.T) {
	if testing.Short() {
		t.Skip("large generated profile")
	}
	s, ok := tracegen.Lookup("ep-fc1-cumsum-steps")
	require.True(t, ok)
	s.Layers, s.Steps, s.CommJSON = 94, 6, false
	res := genResult(t, s)
	page := renderHTML(t, htmlInput{Doc: assemble.Doc(res, nil), Experts: synthExperts(94, 128)})
	t.Logf("8 ranks × 94 layers × 6 steps: report %d bytes", len(page))
	require.Less(t, len(page), 5<<20)
	require.Greater(t, checkNumbers(t, page, assemble.Doc(res, nil)), 8*20)
}

// A finding without a saving estimate (env-hygiene) says so on its card
// and in the headline, never "0.0µs".
func TestHTMLFindingWithoutSavingEstimate(t *testing.T) {
	res := synthResult(t, synth{ranks: 1, layers: 2, steps: 1})
	fs := []results.Finding{{Rule: "env-hygiene", Severity: results.SeverityLow, Title: "HCCL_BUFFSIZE not set", Ranks: []int{0}}}
	page := renderHTML(t, htmlInput{Doc: assemble.Doc(res, fs)})
	present(t, page, `<span class="saving" title="the rule gives no saving estimate">no saving estimated</span>`)
	present(t, page, "none estimated")
	absent(t, page, "est. saving <b>0.0µs</b>")

	fs = append(fs, results.Finding{Rule: "moe-routing-cumsum", Severity: results.SeverityMedium, Title: "Cumsum", Ranks: []int{0}, SavingUs: results.Estimated(269.5)})
	page = renderHTML(t, htmlInput{Doc: assemble.Doc(res, fs)})
	present(t, page, "est. saving <b>269.5µs</b>")
	absent(t, page, "none estimated")
}

// A finding whose edits the deployment script could not take says so in
// the HTML, the terminal and JUnit.
func TestFindingDiffErrorShown(t *testing.T) {
	res := synthResult(t, synth{ranks: 1, layers: 2, steps: 1})
	fs := []results.Finding{{Rule: "graph-capture-sizes", Severity: results.SeverityHigh, Title: "Decode batch 25", Ranks: []int{0}, SavingUs: results.Estimated(10),
		Fix: "capture 25", DiffError: "run.sh: line 3: --compilation-config value: not a JSON object"}}
	page := renderHTML(t, htmlInput{Doc: assemble.Doc(res, fs)})
	present(t, page, `<p class="na">No diff: the deployment script could not be edited: run.sh: line 3: --compilation-config value: not a JSON object</p>`)
	var b bytes.Buffer
	require.NoError(t, WriteText(&b, assemble.Doc(res, fs)))
	require.Contains(t, squash(b.String()), squash("      (no diff: the deployment script could not be edited: run.sh: line 3: --compilation-config value: not a JSON object)\n"))
	require.Contains(t, findingText(&fs[0], labels{}), "no diff: the deployment script could not be edited: run.sh: line 3")
}
