package render

import (
	"encoding/json"
	"fmt"
	"html/template"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/go-echarts/go-echarts/v2/charts"
	"github.com/go-echarts/go-echarts/v2/opts"
	"github.com/go-echarts/go-echarts/v2/types"

	"github.com/npuprof/npuprof/internal/results"
	"github.com/npuprof/npuprof/internal/results/metric"
)

// Charts are built with go-echarts and serialized as ECharts option JSON
// (its JSON method); the report inlines that JSON and the ECharts library
// itself, so go-echarts' page renderer and its remote asset host are never
// used. Strings "fn:<name>" in formatter/renderItem keys name functions of
// the report's own script (report.js); nothing in the JSON is evaluated.

// chartPayload is one chart: a <div> in the page and its option JSON.
type chartPayload struct {
	ID     string         `json:"id"`
	Kind   string         `json:"kind"` // plain | variants | timeline
	Option map[string]any `json:"option"`
	// Variants replace parts of Option when the chart's <select> changes.
	Variants []map[string]any `json:"variants,omitempty"`
	// Names and Classes are the timeline's box labels (indexed by the
	// boxes' value[4] and value[3]).
	Names   []string `json:"names,omitempty"`
	Classes []string `json:"classes,omitempty"`
	Colors  []string `json:"colors,omitempty"`
	Height  int      `json:"-"`
	Label   string   `json:"-"`
	// sealed is the payload's JSON once the chart is final (seal), its
	// option maps released: a report keeps the compact text of its charts
	// until the page's data blob is written, not their decoded maps.
	sealed []byte
}

// seal encodes c once it is final and drops its option maps. The page's
// data blob then holds those bytes as they are: json.Marshal of a
// payload's MarshalJSON output only compacts it (already compact) and
// escapes '<', '>', '&' and U+2028/2029 (already escaped by this
// encoding), so the blob is the bytes of encoding the maps in place.
func (c *chartPayload) seal() {
	if c.sealed != nil {
		return
	}
	bs, err := json.Marshal((*plainPayload)(c))
	if err != nil {
		panic("internal error: chart option does not marshal: " + err.Error())
	}
	c.sealed, c.Option, c.Variants = bs, nil, nil
}

// chartsJS is the chart data blob of a page: the bytes html/template
// writes for the payloads in a JSON script element (json.Marshal of the
// list; " null " for none), joined from each payload's own encoding instead
// of encoding the list again.
func chartsJS(cs []*chartPayload) template.JS {
	if cs == nil {
		return " null "
	}
	n := len(cs) + 1
	for _, c := range cs {
		c.seal()
		n += len(c.sealed)
	}
	var b strings.Builder
	b.Grow(n)
	b.WriteByte('[')
	for i, c := range cs {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(c.sealed)
	}
	b.WriteByte(']')
	return template.JS(b.String())
}

// plainPayload is chartPayload without its MarshalJSON method.
type plainPayload chartPayload

// MarshalJSON is the sealed encoding of c, or c encoded field by field
// when it was not sealed.
func (c *chartPayload) MarshalJSON() ([]byte, error) {
	if c.sealed != nil {
		return c.sealed, nil
	}
	return json.Marshal((*plainPayload)(c))
}

// Report palette.
const (
	colComputing  = "#2563eb"
	colOverlapped = "#7c3aed"
	colCommNotOvl = "#dc2626"
	colFree       = "#cbd5e1"
	fontStack     = `-apple-system, BlinkMacSystemFont, "Segoe UI", Roboto, "Helvetica Neue", "Liberation Sans", "DejaVu Sans", Arial, sans-serif`
)

var palette = opts.Colors{"#2563eb", "#f97316", "#16a34a", "#a855f7", "#0891b2", "#e11d48", "#ca8a04", "#64748b", "#0d9488", "#9333ea", "#db2777", "#4f46e5"}

func baseGlobals() []charts.GlobalOpts {
	return []charts.GlobalOpts{
		charts.WithAnimation(false),
		charts.WithColorsOpts(palette),
		charts.WithLegendOpts(opts.Legend{Show: opts.Bool(true), Top: "0", Left: "0", Type: "scroll", ItemWidth: 14, ItemHeight: 10,
			TextStyle: &opts.TextStyle{FontSize: 12, Color: "#334155"}}),
	}
}

// legendless is the options of a chart that draws no legend (the heatmaps,
// the mini timeline): the base options, the legend hidden, the chart's grid
// and its tooltip (formatter "" for echarts' own).
func legendless(grid charts.GlobalOpts, tooltip types.FuncStr) []charts.GlobalOpts {
	return append(baseGlobals(),
		charts.WithLegendOpts(opts.Legend{Show: opts.Bool(false)}),
		grid,
		charts.WithTooltipOpts(opts.Tooltip{Show: opts.Bool(true), Formatter: tooltip}))
}

// grid is the chart's one grid (go-echarts appends, so each chart sets
// exactly one).
func grid(left, right, top, bottom string) charts.GlobalOpts {
	return charts.WithGridOpts(opts.Grid{Left: left, Right: right, Top: top, Bottom: bottom, ContainLabel: opts.Bool(true)})
}

// finish serializes a go-echarts chart and applies what every report
// chart shares.
func finish(c interface {
	Validate()
	JSON() map[string]interface{}
}) map[string]any {
	c.Validate()
	// Round-trip through JSON so callers can patch what go-echarts has no
	// field for (barMaxWidth, dataZoom height, ...).
	bs, err := json.Marshal(c.JSON())
	if err != nil {
		panic("internal error: chart option does not marshal: " + err.Error())
	}
	var o map[string]any
	if err := json.Unmarshal(bs, &o); err != nil {
		panic("internal error: chart option does not unmarshal: " + err.Error())
	}
	delete(o, "toolbox")
	delete(o, "title")
	o["textStyle"] = map[string]any{"fontFamily": fontStack}
	o["backgroundColor"] = "transparent"
	return o
}

func durAxis(name string) opts.XAxis {
	return opts.XAxis{Type: "value", Name: name, NameLocation: "end", AxisLabel: &opts.AxisLabel{Formatter: "fn:dur"},
		SplitLine: &opts.SplitLine{Show: opts.Bool(true), LineStyle: &opts.LineStyle{Color: "#e2e8f0"}}}
}

func durYAxis(name string) opts.YAxis {
	return opts.YAxis{Type: "value", Name: name, AxisLabel: &opts.AxisLabel{Formatter: "fn:dur"},
		SplitLine: &opts.SplitLine{Show: opts.Bool(true), LineStyle: &opts.LineStyle{Color: "#e2e8f0"}}}
}

func barValue(v float64, ok bool) opts.BarData {
	if !ok || math.IsNaN(v) || math.IsInf(v, 0) {
		return opts.BarData{Value: "-"}
	}
	return opts.BarData{Value: v}
}

func rankNames(rms []rankMetrics) []string {
	out := make([]string, len(rms))
	for i, r := range rms {
		out[i] = rankLabel(r.rank)
	}
	return out
}

func barHeight(n int) int { return min(120+26*n, 900) }

// durTooltip is the axis tooltip of a bar chart of durations.
func durTooltip() opts.Tooltip {
	return opts.Tooltip{Show: opts.Bool(true), Trigger: "axis", ValueFormatter: "fn:dur", AxisPointer: &opts.AxisPointer{Type: "shadow"}}
}

// durBars is a vertical bar chart of durations over categories: the
// report's base options, the duration tooltip and y axis, its grid, and
// with zoom a zoom by wheel or drag.
func durBars(zoom bool) *charts.Bar {
	b := charts.NewBar()
	b.SetGlobalOptions(baseGlobals()...)
	o := []charts.GlobalOpts{charts.WithTooltipOpts(durTooltip()), charts.WithXAxisOpts(opts.XAxis{Type: "category"}),
		charts.WithYAxisOpts(durYAxis(""))}
	if zoom {
		o = append(o, charts.WithDataZoomOpts(opts.DataZoom{Type: "inside"}))
	}
	b.SetGlobalOptions(append(o, grid("8", "24", "36", "8"))...)
	return b
}

// breakdownChart stacks, per rank, computing not overlapped + overlapped
// + communication not overlapped + free = the device window.
// Above DistRanks ranks it is each part's distribution over the ranks.
func breakdownChart(rms []rankMetrics) *chartPayload {
	if len(rms) > DistRanks {
		keys := []string{metric.MetricDeviceWindowUs, metric.MetricComputingUs, metric.MetricOverlappedUs, metric.MetricCommNotOverlappedUs, metric.MetricFreeUs}
		names := map[string]string{metric.MetricDeviceWindowUs: "window", metric.MetricComputingUs: "computing",
			metric.MetricOverlappedUs: "overlapped", metric.MetricCommNotOverlappedUs: "communication not overlapped", metric.MetricFreeUs: "free"}
		return distByKey("breakdown", "time breakdown per rank", rms, keys, func(k string) string { return k }, &seriesStyle{labels: names})
	}
	b := charts.NewBar()
	b.SetGlobalOptions(baseGlobals()...)
	b.SetGlobalOptions(
		charts.WithTooltipOpts(durTooltip()),
		charts.WithXAxisOpts(durAxis("")),
		charts.WithYAxisOpts(opts.YAxis{Type: "category", Inverse: opts.Bool(true)}),
		grid("8", "32", "36", "8"),
	)
	b.SetXAxis(rankNames(rms)).XYReversal()
	type part struct {
		name, color string
		val         func(r rankMetrics) (float64, bool)
	}
	get := func(k string) func(r rankMetrics) (float64, bool) {
		return func(r rankMetrics) (float64, bool) { return r.get(k) }
	}
	parts := []part{
		{"computing (not overlapped)", colComputing, func(r rankMetrics) (float64, bool) {
			c, ok1 := r.get(metric.MetricComputingUs)
			o, ok2 := r.get(metric.MetricOverlappedUs)
			if ok1 && !ok2 {
				return c, true
			}
			return c - o, ok1 && ok2
		}},
		{"overlapped (computing ∩ communication)", colOverlapped, get(metric.MetricOverlappedUs)},
		{"communication not overlapped", colCommNotOvl, get(metric.MetricCommNotOverlappedUs)},
		{"free", colFree, get(metric.MetricFreeUs)},
	}
	for _, p := range parts {
		data := make([]opts.BarData, len(rms))
		for i, r := range rms {
			data[i] = barValue(p.val(r))
		}
		b.AddSeries(p.name, data, charts.WithBarChartOpts(opts.BarChart{Stack: "window", BarWidth: "60%"}),
			charts.WithItemStyleOpts(opts.ItemStyle{Color: p.color}))
	}
	o := finish(b)
	titled(o, "", axisRank, "xAxis", axisWindowTime, stackMax(listOf(o["series"])))
	return &chartPayload{ID: "chart-breakdown", Kind: "plain", Option: o, Height: barHeight(len(rms)), Label: "time breakdown per rank"}
}

// stepsChart draws one rank's steps (stacked like breakdownChart); the
// chart's <select> switches rank.
func stepsChart(doc *results.Document) *chartPayload {
	names := []string{"computing (not overlapped)", "overlapped (computing ∩ communication)", "communication not overlapped", "free"}
	colors := []string{colComputing, colOverlapped, colCommNotOvl, colFree}
	top := 0.0 // the tallest step drawn
	variant := func(rd results.RankDoc) map[string]any {
		steps := rd.Steps
		if len(steps) > maxStepsChart {
			picked := make([]results.StepDoc, 0, maxStepsChart)
			for i := 0; i < maxStepsChart; i++ {
				picked = append(picked, steps[i*len(steps)/maxStepsChart])
			}
			steps = picked
		}
		xs := make([]string, len(steps))
		cols := make([][]any, 4)
		for i, s := range steps {
			xs[i] = fmt.Sprint(s.Step)
			if s.OverlappedUs == nil || s.CommunicationNotOverlappedUs == nil || s.FreeUs == nil {
				// no collective data: only computing is known; the
				// other parts are gaps (null), never 0
				top = max(top, s.ComputingUs)
				cols[0] = append(cols[0], s.ComputingUs)
				cols[1], cols[2], cols[3] = append(cols[1], nil), append(cols[2], nil), append(cols[3], nil)
				continue
			}
			top = max(top, s.ComputingUs+*s.CommunicationNotOverlappedUs+*s.FreeUs)
			cols[0] = append(cols[0], s.ComputingUs-*s.OverlappedUs)
			cols[1] = append(cols[1], *s.OverlappedUs)
			cols[2] = append(cols[2], *s.CommunicationNotOverlappedUs)
			cols[3] = append(cols[3], *s.FreeUs)
		}
		series := make([]map[string]any, 4)
		for i := range series {
			series[i] = map[string]any{"data": cols[i]}
		}
		return map[string]any{"xAxis": []map[string]any{{"data": xs}}, "series": series}
	}
	b := durBars(true)
	b.SetXAxis([]string{})
	for i, n := range names {
		b.AddSeries(n, nil, charts.WithBarChartOpts(opts.BarChart{Stack: "step", BarCategoryGap: "25%"}), charts.WithItemStyleOpts(opts.ItemStyle{Color: colors[i]}))
	}
	o := finish(b)
	setAll(o, "series", "barMaxWidth", 72)
	p := &chartPayload{ID: "chart-steps", Kind: "variants", Option: o, Height: 300, Label: "per-step breakdown"}
	for _, rd := range doc.Ranks {
		p.Variants = append(p.Variants, variant(rd))
	}
	if len(p.Variants) > 0 {
		mergeVariant(p.Option, p.Variants[0])
	}
	titled(o, axisStep, "", "yAxis", axisStepTime, top)
	return p
}

// mergeVariant puts a variant's axis data and series data into option.
func mergeVariant(o map[string]any, v map[string]any) {
	if xs, ok := v["xAxis"].([]map[string]any); ok && len(xs) > 0 {
		if ax := listOf(o["xAxis"]); len(ax) > 0 {
			ax[0]["data"] = xs[0]["data"]
		}
	}
	if ss, ok := v["series"].([]map[string]any); ok {
		ms := listOf(o["series"])
		for i := range ss {
			if i < len(ms) {
				ms[i]["data"] = ss[i]["data"]
			}
		}
	}
}

// listOf returns the objects of a JSON array value.
func listOf(v any) []map[string]any {
	arr, _ := v.([]any)
	out := make([]map[string]any, 0, len(arr))
	for _, x := range arr {
		if m, ok := x.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}

// setAll sets key=value on every object of the option's list at name.
func setAll(o map[string]any, name, key string, value any) {
	for _, m := range listOf(o[name]) {
		m[key] = value
	}
}

type seriesStyle struct {
	labels map[string]string
	colors map[string]string
}

// stackedByRank is a vertical stacked bar per rank, one series per key,
// values read from each rank's metrics.
// DistRanks is the rank count above which a chart of a metric per rank
// becomes its distribution over the ranks (a box per metric: quartiles,
// whiskers at min and max), and the per-rank tables fold away.
const DistRanks = 32

// rankChart is stackedByRank, or above DistRanks ranks distByKey.
func rankChart(id, label string, rms []rankMetrics, keys []string, metricOf func(string) string, st *seriesStyle) *chartPayload {
	if len(rms) > DistRanks {
		return distByKey(id, label, rms, keys, metricOf, st)
	}
	return stackedByRank(id, label, rms, keys, metricOf, st)
}

// distByKey is one box per key: the distribution over the ranks of the
// key's metric (min, lower quartile, median, upper quartile, max; ranks
// that did not measure it left out), so that 256 ranks read as a few
// boxes, not 256 bars.
func distByKey(id, label string, rms []rankMetrics, keys []string, metricOf func(string) string, st *seriesStyle) *chartPayload {
	cats := make([]string, 0, len(keys))
	data := make([]any, 0, len(keys))
	top := 0.0
	for _, k := range keys {
		name := cleanText(k, 60)
		if st != nil {
			if l, ok := st.labels[k]; ok {
				name = l
			}
		}
		cats = append(cats, name)
		vs := make([]float64, 0, len(rms))
		for _, r := range rms {
			if v, ok := r.get(metricOf(k)); ok && !math.IsNaN(v) && !math.IsInf(v, 0) {
				vs = append(vs, v)
			}
		}
		if len(vs) == 0 {
			data = append(data, "-")
			continue
		}
		sort.Float64s(vs)
		data = append(data, []any{vs[0], quantile(vs, 0.25), quantile(vs, 0.5), quantile(vs, 0.75), vs[len(vs)-1]})
		top = max(top, vs[len(vs)-1])
	}
	o := map[string]any{
		"animation":       false,
		"backgroundColor": "transparent",
		"textStyle":       map[string]any{"fontFamily": fontStack},
		"grid":            []any{map[string]any{"left": "8", "right": "24", "top": "36", "bottom": "8"}},
		"tooltip":         map[string]any{"show": true, "trigger": "item", "valueFormatter": "fn:dur"},
		"xAxis":           []any{map[string]any{"type": "category", "data": cats}},
		"yAxis": []any{map[string]any{"type": "value", "axisLabel": map[string]any{"formatter": "fn:dur"},
			"splitLine": map[string]any{"show": true, "lineStyle": map[string]any{"color": "#e2e8f0"}}}},
		"series": []any{map[string]any{"type": "boxplot", "name": "ranks", "data": data,
			"itemStyle": map[string]any{"color": "#dbeafe", "borderColor": "#2563eb"}}},
	}
	titled(o, axisRankDist, "", "yAxis", axisTotalTime, top)
	return &chartPayload{ID: "chart-" + id, Kind: "plain", Option: o, Height: 320, Label: label}
}

// quantile is the q-quantile of sorted vs (linear between the two
// nearest values).
func quantile(vs []float64, q float64) float64 {
	p := q * float64(len(vs)-1)
	i := int(p)
	if i+1 >= len(vs) {
		return vs[len(vs)-1]
	}
	return vs[i] + (p-float64(i))*(vs[i+1]-vs[i])
}

func stackedByRank(id, label string, rms []rankMetrics, keys []string, metricOf func(string) string, st *seriesStyle) *chartPayload {
	b := durBars(false)
	b.SetXAxis(rankNames(rms))
	for _, k := range keys {
		m := metricOf(k)
		data := make([]opts.BarData, len(rms))
		for i, r := range rms {
			data[i] = barValue(r.get(m))
		}
		name := cleanText(k, 60)
		var so []charts.SeriesOpts
		so = append(so, charts.WithBarChartOpts(opts.BarChart{Stack: "total"}))
		if st != nil {
			if l, ok := st.labels[k]; ok {
				name = l
			}
			if c, ok := st.colors[k]; ok {
				so = append(so, charts.WithItemStyleOpts(opts.ItemStyle{Color: c}))
			}
		}
		b.AddSeries(name, data, so...)
	}
	o := finish(b)
	setAll(o, "series", "barMaxWidth", 56)
	titled(o, axisRank, "", "yAxis", axisTotalTime, stackMax(listOf(o["series"])))
	return &chartPayload{ID: "chart-" + id, Kind: "plain", Option: o, Height: 320, Label: label}
}

func layerCharts(ls *layerStats) (*chartPayload, *chartPayload) {
	xs := make([]string, ls.positions)
	for i := range xs {
		xs[i] = fmt.Sprint(i)
	}
	// mean over ranks of the per-rank layer means
	mean := func(rows [][]float64, p int) (float64, bool) {
		s, n := 0.0, 0
		for _, row := range rows {
			if p < len(row) && !math.IsNaN(row[p]) {
				s += row[p]
				n++
			}
		}
		if n == 0 {
			return 0, false
		}
		return s / float64(n), true
	}
	b := durBars(true)
	b.SetXAxis(xs)
	for i, rows := range [][][]float64{ls.routing, ls.cumsum} {
		data := make([]opts.BarData, ls.positions)
		for p := range data {
			data[p] = barValue(mean(rows, p))
		}
		name, color := "MoeInitRouting* (mean over ranks)", "#0ea5e9"
		if i == 1 {
			name, color = "Cumsum (mean over ranks)", "#f97316"
		}
		b.AddSeries(name, data, charts.WithBarChartOpts(opts.BarChart{Stack: "layer"}), charts.WithItemStyleOpts(opts.ItemStyle{Color: color}))
	}
	bo := finish(b)
	setAll(bo, "series", "barMaxWidth", 40)
	titled(bo, axisLayer, "", "yAxis", axisMeanTime, stackMax(listOf(bo["series"])))
	bar := &chartPayload{ID: "chart-moe-layers", Kind: "plain", Option: bo, Height: 280, Label: "routing and Cumsum per layer"}

	h := charts.NewHeatMap()
	ranks := make([]string, len(ls.ranks))
	for i, r := range ls.ranks {
		ranks[i] = rankLabel(r)
	}
	var data []opts.HeatMapData
	lo, hi := math.Inf(1), 0.0
	for ri := range ls.ranks {
		for p := 0; p < ls.positions; p++ {
			if p >= len(ls.routing[ri]) || math.IsNaN(ls.routing[ri][p]) {
				continue
			}
			v := ls.routing[ri][p] + ls.cumsum[ri][p]
			lo, hi = min(lo, v), max(hi, v)
			data = append(data, opts.HeatMapData{Value: [3]any{p, ri, v}})
		}
	}
	h.SetGlobalOptions(legendless(grid("8", "90", "12", "8"), "fn:heatDur")...)
	h.SetGlobalOptions(
		charts.WithXAxisOpts(opts.XAxis{Type: "category", Data: xs, SplitArea: &opts.SplitArea{Show: opts.Bool(true)}}),
		charts.WithYAxisOpts(opts.YAxis{Type: "category", Data: ranks, Inverse: opts.Bool(true)}),
		charts.WithVisualMapOpts(opts.VisualMap{Type: "continuous", Min: float32(min(lo, hi)), Max: float32(hi), Calculable: opts.Bool(true), Orient: "vertical", Right: "0", Top: "middle",
			InRange: &opts.VisualMapInRange{Color: []string{"#f8fafc", "#fdba74", "#ea580c", "#7c2d12"}}}),
	)
	h.AddSeries("routing + Cumsum", data)
	ho := finish(h)
	setAll(ho, "visualMap", "formatter", "fn:dur")
	titled(ho, axisLayer, axisRank, "", "", 0)
	heat := &chartPayload{ID: "chart-moe-layer-heat", Kind: "plain", Option: ho, Height: min(100+24*len(ranks), 700), Label: "routing + Cumsum per rank and layer"}
	return bar, heat
}

// skewChart is a rank × metric heatmap. Each metric is normalized to its
// median over ranks, so 1.0 is a typical rank and the colour says how far
// a rank is from it (clamped to ±25% on the colour scale).
func skewChart(rms []rankMetrics) *chartPayload {
	var cols []string
	var data heatCells
	for _, sm := range skewMetrics {
		var vals []float64
		for _, r := range rms {
			if v, ok := r.get(sm.metric); ok {
				vals = append(vals, v)
			}
		}
		med := median(vals)
		if len(vals) == 0 || med <= 0 {
			continue
		}
		x := len(cols)
		cols = append(cols, sm.label)
		for y, r := range rms {
			if v, ok := r.get(sm.metric); ok {
				data.add(x, y, math.Round(v/med*100)/100, v)
			}
		}
	}
	if len(cols) == 0 {
		return nil
	}
	h := charts.NewHeatMap()
	h.SetGlobalOptions(legendless(grid("8", "96", "12", "8"), "fn:heatSkew")...)
	h.SetGlobalOptions(
		charts.WithXAxisOpts(opts.XAxis{Type: "category", Data: cols, AxisLabel: &opts.AxisLabel{Interval: "0", Rotate: 25}, SplitArea: &opts.SplitArea{Show: opts.Bool(true)}}),
		charts.WithYAxisOpts(opts.YAxis{Type: "category", Data: rankNames(rms), Inverse: opts.Bool(true)}),
		charts.WithVisualMapOpts(opts.VisualMap{Type: "continuous", Min: 0.75, Max: 1.25, Calculable: opts.Bool(true), Orient: "vertical", Right: "0", Top: "middle",
			InRange: &opts.VisualMapInRange{Color: []string{"#2563eb", "#bfdbfe", "#f8fafc", "#fecaca", "#dc2626"}}}),
	)
	// The cells join the option as their encoding after finish's round
	// trip, which would hold each as a decoded map of boxed numbers.
	h.AddSeries("ratio to the median rank", nil, charts.WithLabelOpts(opts.Label{Show: opts.Bool(len(rms)*len(cols) <= 200), Formatter: "{@[2]}", FontSize: 11, Color: "#0f172a"}))
	o := finish(h)
	setAll(o, "series", "data", data.json())
	setAll(o, "series", "itemStyle", map[string]any{"borderColor": "#fff", "borderWidth": 1})
	setAll(o, "visualMap", "dimension", 2) // colour by the ratio, not the raw value
	setAll(o, "visualMap", "formatter", "fn:ratio")
	titled(o, axisMetric, axisRank, "", "", 0)
	return &chartPayload{ID: "chart-skew", Kind: "plain", Option: o, Height: min(150+34*len(rms), 900), Label: "rank skew"}
}

// heatCells is a heatmap series' data as the JSON go-echarts writes for
// []opts.HeatMapData{{Value: []any{x, y, a, b}}}: {"value":[x,y,a,b]}
// items, numbers as encoding/json formats them.
type heatCells struct{ b []byte }

func (h *heatCells) add(x, y int, a, b float64) {
	if len(h.b) == 0 {
		h.b = append(h.b, '[')
	} else {
		h.b = append(h.b, ',')
	}
	h.b = append(h.b, `{"value":[`...)
	h.b = strconv.AppendInt(h.b, int64(x), 10)
	h.b = append(h.b, ',')
	h.b = strconv.AppendInt(h.b, int64(y), 10)
	h.b = append(h.b, ',')
	h.b = appendJSONFloat(h.b, a)
	h.b = append(h.b, ',')
	h.b = appendJSONFloat(h.b, b)
	h.b = append(h.b, "]}"...)
}

// json is the series' data: the cells' array ("[]" for none).
func (h *heatCells) json() json.RawMessage {
	if len(h.b) == 0 {
		return json.RawMessage("[]")
	}
	return json.RawMessage(append(h.b, ']'))
}

// appendJSONFloat appends f as encoding/json writes a float64 (and panics
// as encoding a chart's option does on NaN or ±Inf).
func appendJSONFloat(b []byte, f float64) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		panic("internal error: chart option does not marshal: unsupported value " + strconv.FormatFloat(f, 'g', -1, 64))
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		// e-09 -> e-9, as encoding/json shortens it
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}

// median of vals (0 when empty); vals is reordered.
func median(vals []float64) float64 {
	if len(vals) == 0 {
		return 0
	}
	sort.Float64s(vals)
	n := len(vals)
	if n%2 == 1 {
		return vals[n/2]
	}
	return (vals[n/2-1] + vals[n/2]) / 2
}

// expertChart is the layer × expert load heatmap.
func expertChart(e *ExpertLoads) *chartPayload {
	var data []opts.HeatMapData
	lo, hi := math.Inf(1), math.Inf(-1)
	cells := 0
	for y, row := range e.Load {
		if y >= len(e.Layers) {
			break
		}
		for x, v := range row {
			if x >= len(e.Experts) || cells >= maxExpertHeatCells || math.IsNaN(v) || math.IsInf(v, 0) {
				continue
			}
			cells++
			lo, hi = min(lo, v), max(hi, v)
			data = append(data, opts.HeatMapData{Value: [3]any{x, y, v}})
		}
	}
	if cells == 0 {
		lo, hi = 0, 1
	}
	unit := cleanText(e.Unit, 20)
	if unit == "" {
		unit = "tokens"
	}
	layers := make([]string, len(e.Layers))
	for i, l := range e.Layers {
		layers[i] = cleanText(l, 40)
	}
	experts := make([]string, len(e.Experts))
	for i, x := range e.Experts {
		experts[i] = cleanText(x, 40)
	}
	h := charts.NewHeatMap()
	h.SetGlobalOptions(legendless(grid("8", "90", "12", "8"), "")...)
	h.SetGlobalOptions(
		charts.WithXAxisOpts(opts.XAxis{Type: "category", Data: experts}),
		charts.WithYAxisOpts(opts.YAxis{Type: "category", Data: layers, Inverse: opts.Bool(true)}),
		charts.WithVisualMapOpts(opts.VisualMap{Type: "continuous", Min: float32(lo), Max: float32(hi), Calculable: opts.Bool(true), Orient: "vertical", Right: "0", Top: "middle",
			InRange: &opts.VisualMapInRange{Color: []string{"#f0fdf4", "#86efac", "#16a34a", "#14532d"}}}),
	)
	h.AddSeries(unit, data)
	o := finish(h)
	titled(o, axisExpert, axisLayerName, "", "", 0)
	return &chartPayload{ID: "chart-experts", Kind: "plain", Option: o, Height: min(120+14*len(layers), 1400), Label: "expert load"}
}
