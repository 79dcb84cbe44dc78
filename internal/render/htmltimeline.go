package render

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/go-echarts/go-echarts/v2/charts"
	"github.com/go-echarts/go-echarts/v2/opts"

	"github.com/npuprof/npuprof/internal/results"
	"github.com/npuprof/npuprof/internal/results/metric"
)

// The mini timeline draws one representative step per rank: device
// streams and collectives, from the rank's sampled timeline (taken
// by the analysis while the model was alive; it never embeds raw events:
// one window per rank, neighbouring boxes of a lane merged until at most
// maxTimelineBoxes remain).

var timelineClasses = []struct{ name, color string }{
	// in the order of the analysis's box kinds (results.SampleBox.Kind)
	{"compute", "#2563eb"},
	{"collective (HCCL op)", "#dc2626"},
	{"collective kernel", "#f87171"},
	{"EVENT_WAIT", "#f59e0b"},
	{"EVENT_RECORD", "#a3a3a3"},
	{"memcpy", "#14b8a6"},
	{"other", "#94a3b8"},
}

// pickWindows chooses each rank's window so the ranks line up: the
// median-length step when every rank with steps has the same one, else the
// middle step by id (which ranks with the same steps agree on) on every
// rank that has it, else the rank's own median-length step.
func pickWindows(ranks []results.RankDoc) (differ bool, middle int) {
	median, first := 0, true
	for i := range ranks {
		if s := ranks[i].Detail.Sample; s != nil && s.Median != nil {
			if first {
				median, first = s.Median.Step, false
			} else if s.Median.Step != median {
				differ = true
			}
		}
	}
	if !differ {
		return false, 0
	}
	for i := range ranks {
		if s := ranks[i].Detail.Sample; s != nil && s.Median != nil {
			if s.Middle != nil {
				return true, s.Middle.Step
			}
			return true, s.Median.Step
		}
	}
	return false, 0
}

func buildTimeline(v *htmlView, doc *results.Document) {
	tv := &v.Timeline
	for _, c := range timelineClasses {
		tv.Legend = append(tv.Legend, kv{c.name, c.color})
	}
	byMiddle, middle := pickWindows(doc.Ranks)
	drawn, skipped := 0, 0
	var notes []string
	for i := range doc.Ranks {
		rr := &doc.Ranks[i]
		if drawn >= maxTimelineRanks {
			skipped++
			continue
		}
		ts := rr.Detail.Sample
		if ts == nil || rr.Detail.Timeline == nil || !rr.Detail.Timeline.HaveWindow {
			why := "no device timeline"
			if w, ok := rr.Unavailable[metric.MetricDeviceWindowUs]; ok {
				why = w
			}
			notes = append(notes, fmt.Sprintf("%s: unavailable: %s", rankLabel(rr.Rank), cleanText(why, 0)))
			continue
		}
		var w *results.SampleWindow
		label := ""
		switch {
		case ts.Median != nil:
			w = ts.Median
			why := "median-length step with device work"
			if byMiddle {
				why = "its median-length step; the ranks' median-length steps differ"
				const mid = "the middle step with device work; the ranks' median-length steps differ"
				switch {
				case ts.Middle != nil && ts.Middle.Step == middle:
					w, why = ts.Middle, mid
				case ts.Median.Step == middle:
					why = mid
				}
			}
			label = fmt.Sprintf("step %d (%s), %s", w.Step, why, Dur(us(w.End-w.Start)))
		case ts.Capture != nil:
			w = ts.Capture
			if w.Sliced {
				label = fmt.Sprintf("no profiler steps: a %s slice from the middle of the capture", Dur(us(w.End-w.Start)))
			} else {
				label = fmt.Sprintf("no profiler steps: the whole capture, %s", Dur(us(w.End-w.Start)))
			}
		default:
			notes = append(notes, fmt.Sprintf("%s: unavailable: no device timeline", rankLabel(rr.Rank)))
			continue
		}
		c := timelineChart(drawn, w)
		if c.Label != "" {
			label += "; " + c.Label
		}
		c.Label = rankLabel(rr.Rank) + ": " + label
		tv.Charts = append(tv.Charts, c)
		v.addChart(c)
		drawn++
	}
	if skipped > 0 {
		notes = append(notes, fmt.Sprintf("Only the first %d ranks are drawn (%d more).", maxTimelineRanks, skipped))
	}
	for i, n := range notes {
		if i > 0 {
			tv.Note += " "
		}
		tv.Note += n
	}
}

func timelineChart(n int, w *results.SampleWindow) *chartPayload {
	var lanes []string
	for _, k := range w.Lanes {
		switch {
		case !k.HCCL && k.Stream < 0:
			lanes = append(lanes, "stream ?")
		case !k.HCCL:
			lanes = append(lanes, "stream "+strconv.Itoa(int(k.Stream)))
		case k.Group == "":
			lanes = append(lanes, "HCCL")
		default:
			lanes = append(lanes, "HCCL "+cleanText(k.Group, 30))
		}
	}
	ws, we := w.Start, w.End

	names := map[string]int{}
	var nameList []string
	var data []opts.CustomData
	for _, b := range w.Boxes {
		n := cleanText(w.Names[b.Name], 160)
		if b.Count > 1 {
			n = fmt.Sprintf("%d tasks merged%s; longest: %s", b.Count, composition(b.KindTime), cleanText(w.Names[b.Name], 140))
		}
		ni, ok := names[n]
		if !ok {
			ni = len(nameList)
			names[n] = ni
			nameList = append(nameList, n)
		}
		data = append(data, opts.CustomData{Value: []any{int(b.Lane), us(b.Start), us(b.End), int(b.Kind), ni}})
	}
	c := charts.NewCustom()
	c.SetGlobalOptions(legendless(grid("8", "40", "4", "34"), "fn:boxTip")...)
	c.SetGlobalOptions(
		charts.WithXAxisOpts(opts.XAxis{Type: "value", Min: 0, Max: us(we - ws), AxisLabel: &opts.AxisLabel{Formatter: "fn:dur"},
			SplitLine: &opts.SplitLine{Show: opts.Bool(true), LineStyle: &opts.LineStyle{Color: "#eef2f7"}}}),
		charts.WithYAxisOpts(opts.YAxis{Type: "category", Data: lanes, Inverse: opts.Bool(true), SplitLine: &opts.SplitLine{Show: opts.Bool(false)}}),
		charts.WithDataZoomOpts(opts.DataZoom{Type: "inside", XAxisIndex: []int{0}}, opts.DataZoom{Type: "slider", XAxisIndex: []int{0}}),
	)
	c.SetXAxis(nil)
	c.AddSeries("tasks", data, charts.WithCustomChartOpts(opts.CustomChart{RenderItem: "fn:boxItem"}),
		charts.WithEncodeOpts(opts.Encode{X: []int{1, 2}, Y: 0}))
	o := finish(c)
	for _, dz := range listOf(o["dataZoom"]) {
		if dz["type"] == "slider" {
			dz["height"], dz["bottom"], dz["filterMode"] = 14, 4, "weakFilter"
			dz["labelFormatter"] = "fn:dur"
		} else {
			dz["filterMode"] = "weakFilter"
		}
	}
	titled(o, "", axisLane, "xAxis", axisFromStart, us(we-ws))
	p := &chartPayload{ID: fmt.Sprintf("chart-timeline-%d", n), Kind: "timeline", Option: o,
		Names: nameList, Height: min(90+30*len(lanes), 640)}
	for _, cl := range timelineClasses {
		p.Classes = append(p.Classes, cl.name)
		p.Colors = append(p.Colors, cl.color)
	}
	if w.Tasks > len(w.Boxes) {
		p.Label = fmt.Sprintf("%d tasks drawn as %d boxes", w.Tasks, len(w.Boxes))
	}
	return p
}

// composition is what a merged box is made of, its kinds by time, largest
// first: ": compute 3.20ms (97.3%), EVENT_WAIT 89.0µs (2.7%)"; "" without
// the kinds (a document written before them).
func composition(kindTime []int64) string {
	var total int64
	for _, t := range kindTime {
		total += t
	}
	if total <= 0 {
		return ""
	}
	order := make([]int, 0, len(kindTime))
	for k, t := range kindTime {
		if t > 0 && k < len(timelineClasses) {
			order = append(order, k)
		}
	}
	sort.SliceStable(order, func(i, j int) bool { return kindTime[order[i]] > kindTime[order[j]] })
	parts := make([]string, len(order))
	for i, k := range order {
		parts[i] = fmt.Sprintf("%s %s (%s)", timelineClasses[k].name, Dur(us(kindTime[k])), pctText(float64(kindTime[k]), float64(total)))
	}
	return ": " + strings.Join(parts, ", ")
}
