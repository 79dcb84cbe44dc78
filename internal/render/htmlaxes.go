package render

import (
	"math"
	"strconv"
	"strings"
)

// Every chart's axes have a title, and a duration axis says its unit: the
// axis is labelled in one unit (µs, ms or s, the one in which the largest
// value drawn is under 10,000), named in its title ("time (ms)"), with
// tick labels as plain numbers of it (report.js's us, ms and s
// formatters). Tooltips keep the exact duration with its own unit.
// Axis titles are here, in one table, with the report's other fixed words.

// Axis titles.
const (
	axisRank       = "rank"
	axisRankDist   = "over the ranks (box: quartiles and median, whiskers: min and max)"
	axisEPRank     = "EP rank"
	axisStep       = "profiler step"
	axisStepStat   = "statistic over the steps"
	axisLayer      = "MoE layer (n-th routing op of a step)"
	axisMetric     = "metric (cell: ratio to the median rank)"
	axisExpert     = "expert"
	axisLayerName  = "MoE layer"
	axisLane       = "stream"
	axisTokens     = "tokens"
	axisWindowTime = "device time"
	axisStepTime   = "time in the step"
	axisTotalTime  = "time over the capture"
	axisMeanTime   = "mean time per occurrence"
	axisFromStart  = "time from the step's start"
)

// timeUnit is the unit a duration axis whose largest value is maxUs µs
// is labelled in, and its tick formatter.
func timeUnit(maxUs float64) (unit, formatter string) {
	switch {
	case maxUs >= 1e7:
		return "s", "fn:s"
	case maxUs >= 1e4:
		return "ms", "fn:ms"
	}
	return "µs", "fn:us"
}

// axisObj is the first axis of option o at key ("xAxis", "yAxis"), made
// when go-echarts wrote none.
func axisObj(o map[string]any, key string) map[string]any {
	if ax := listOf(o[key]); len(ax) > 0 {
		return ax[0]
	}
	if m, ok := o[key].(map[string]any); ok {
		return m
	}
	m := map[string]any{}
	o[key] = []any{m}
	return m
}

// nameAxis titles the axis at key: centred along it, clear of its labels.
func nameAxis(o map[string]any, key, name string) map[string]any {
	ax := axisObj(o, key)
	ax["name"] = name
	ax["nameLocation"] = "middle"
	ax["nameTextStyle"] = map[string]any{"color": "#475569", "fontSize": 12}
	ax["nameMoveOverlap"] = true
	if key == "yAxis" {
		ax["nameGap"] = 52
	} else {
		ax["nameGap"] = 28
	}
	return ax
}

// timeAxis titles a duration axis "what (unit)" and labels its ticks in
// that unit.
func timeAxis(o map[string]any, key, what string, maxUs float64) {
	unit, f := timeUnit(maxUs)
	ax := nameAxis(o, key, what+" ("+unit+")")
	label, _ := ax["axisLabel"].(map[string]any)
	if label == nil {
		label = map[string]any{}
		ax["axisLabel"] = label
	}
	label["formatter"] = f
}

// titled sets both axes' titles: a category or value axis named by its
// title, a duration axis (time != "") by timeAxis over maxUs.
func titled(o map[string]any, x, y string, timeKey, time string, maxUs float64) {
	if x != "" {
		nameAxis(o, "xAxis", x)
	}
	if y != "" {
		nameAxis(o, "yAxis", y)
	}
	if time != "" {
		timeAxis(o, timeKey, time, maxUs)
	}
	// The grid's outer bounds hold the axes' labels and titles inside the
	// chart: ECharts 6's containLabel holds the labels only, and would
	// let a title fall outside the chart's box.
	for _, g := range listOf(o["grid"]) {
		delete(g, "containLabel")
		g["outerBoundsMode"] = "same"
		g["outerBoundsContain"] = "all"
	}
}

// stackMax is the largest bar of series (a stack's bars add up): the
// largest value a duration axis draws. Values are numbers, {"value": v}
// objects or "-" / null gaps.
func stackMax(series []map[string]any) float64 {
	sums := map[string][]float64{}
	best := 0.0
	for i, s := range series {
		stack, _ := s["stack"].(string)
		if stack == "" {
			stack = "series " + strconv.Itoa(i) // unstacked: a stack of its own
		}
		data, _ := s["data"].([]any)
		if sums[stack] == nil {
			sums[stack] = []float64{}
		}
		for j, d := range data {
			v, ok := pointValue(d)
			if !ok || v <= 0 {
				continue
			}
			for len(sums[stack]) <= j {
				sums[stack] = append(sums[stack], 0)
			}
			sums[stack][j] += v
			best = max(best, sums[stack][j])
		}
	}
	return best
}

// pointValue is a bar's value (false for a gap).
func pointValue(d any) (float64, bool) {
	switch x := d.(type) {
	case float64:
		return x, !math.IsNaN(x) && !math.IsInf(x, 0)
	case map[string]any:
		return pointValue(x["value"])
	}
	return 0, false
}

// localAxes puts the axis titles of c (and of its variants) in the labels'
// language: a title is a label, or "what (unit)" with what a label.
func (l labels) localAxes(c *chartPayload) {
	if !l.zh {
		return
	}
	for _, o := range append([]map[string]any{c.Option}, c.Variants...) {
		for _, key := range []string{"xAxis", "yAxis"} {
			axes := listOf(o[key])
			if m, ok := o[key].(map[string]any); ok {
				axes = append(axes, m)
			}
			for _, ax := range axes {
				if name, ok := ax["name"].(string); ok {
					ax["name"] = l.axisTitle(name)
				}
			}
		}
	}
}

// axisTitle is the title s in the labels' language.
func (l labels) axisTitle(s string) string {
	if t := l.t(s); t != s {
		return t
	}
	if i := strings.LastIndex(s, " ("); i > 0 && strings.HasSuffix(s, ")") {
		return l.t(s[:i]) + " " + s[i+1:]
	}
	return s
}
