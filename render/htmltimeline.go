package render

import (
	"fmt"
	"sort"
	"strconv"

	"github.com/go-echarts/go-echarts/v2/charts"
	"github.com/go-echarts/go-echarts/v2/opts"

	"github.com/npuprof/npuprof/analysis"
	"github.com/npuprof/npuprof/parser/model"
)

// The mini timeline draws one representative step per rank: device
// streams and collectives, from the model. It never embeds raw events: it
// picks one window per rank and merges neighbouring boxes on a lane until
// at most maxTimelineBoxes remain.

// fixedWindowNs is the slice drawn when a rank has no profiler steps.
const fixedWindowNs = 20_000_000

var timelineClasses = []struct{ name, color string }{
	{"compute", "#2563eb"},
	{"collective (HCCL op)", "#dc2626"},
	{"collective kernel", "#f87171"},
	{"EVENT_WAIT", "#f59e0b"},
	{"EVENT_RECORD", "#a3a3a3"},
	{"memcpy", "#14b8a6"},
	{"other", "#94a3b8"},
}

func timelineClass(c model.TaskClass) int {
	switch c {
	case model.ClassCompute:
		return 0
	case model.ClassCommKernel:
		return 2
	case model.ClassEventWait:
		return 3
	case model.ClassEventRecord:
		return 4
	case model.ClassMemcpy:
		return 5
	}
	return 6
}

type tlBox struct {
	lane       int
	start, end int64 // ns relative to the window start
	class      int
	name       string
	count      int
	longest    int64
}

// representativeStep picks the median-length step with device work.
func representativeStep(steps []analysis.StepBreakdown) (analysis.StepBreakdown, bool) {
	var ok []analysis.StepBreakdown
	for _, s := range steps {
		if s.DeviceEnd > s.DeviceStart {
			ok = append(ok, s)
		}
	}
	if len(ok) == 0 {
		return analysis.StepBreakdown{}, false
	}
	sort.SliceStable(ok, func(i, j int) bool {
		a, b := ok[i].DeviceEnd-ok[i].DeviceStart, ok[j].DeviceEnd-ok[j].DeviceStart
		if a != b {
			return a < b
		}
		return ok[i].Step < ok[j].Step
	})
	return ok[(len(ok)-1)/2], true
}

func buildTimeline(v *htmlView, res *analysis.Result) {
	tv := &v.Timeline
	for _, c := range timelineClasses {
		tv.Legend = append(tv.Legend, kv{c.name, c.color})
	}
	// One step id for all ranks when possible, so the ranks line up.
	wantStep, haveWant := 0, false
	for _, rr := range res.Ranks {
		if s, ok := representativeStep(rr.Steps); ok {
			wantStep, haveWant = s.Step, true
			break
		}
	}
	drawn, skipped := 0, 0
	var notes []string
	for _, rr := range res.Ranks {
		if drawn >= maxTimelineRanks {
			skipped++
			continue
		}
		m := rr.Model
		if m == nil || rr.Timeline == nil || !rr.Timeline.HaveWindow || (len(m.Tasks) == 0 && len(m.HCCL) == 0) {
			why := "no device timeline"
			if w, ok := rr.Unavailable["device.window.time_us"]; ok {
				why = w
			}
			notes = append(notes, fmt.Sprintf("%s: unavailable: %s", rankLabel(rr.Rank), cleanText(why, 0)))
			continue
		}
		var ws, we int64
		label := ""
		var step analysis.StepBreakdown
		found := false
		if haveWant {
			for _, s := range rr.Steps {
				if s.Step == wantStep && s.DeviceEnd > s.DeviceStart {
					step, found = s, true
					break
				}
			}
		}
		if !found {
			step, found = representativeStep(rr.Steps)
		}
		if found {
			ws, we = step.DeviceStart, step.DeviceEnd
			label = fmt.Sprintf("step %d (median-length step with device work), %s", step.Step, Dur(us(we-ws)))
		} else {
			ws, we = rr.Timeline.WindowStart, rr.Timeline.WindowEnd
			if we-ws > fixedWindowNs {
				mid := ws + (we-ws)/2
				ws, we = mid-fixedWindowNs/2, mid+fixedWindowNs/2
				label = fmt.Sprintf("no profiler steps: a %s slice from the middle of the capture", Dur(us(we-ws)))
			} else {
				label = fmt.Sprintf("no profiler steps: the whole capture, %s", Dur(us(we-ws)))
			}
		}
		c := timelineChart(drawn, rr, ws, we)
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

func timelineChart(n int, rr *analysis.RankResult, ws, we int64) *chartPayload {
	m := rr.Model
	var lanes []string
	type laneKey struct {
		hccl   bool
		stream int32
		group  string
	}
	var keys []laneKey
	seen := map[laneKey]bool{}
	var boxes []tlBox
	add := func(k laneKey, b tlBox) {
		if !seen[k] {
			seen[k] = true
			keys = append(keys, k)
		}
		boxes = append(boxes, b)
	}
	keyOf := map[int]laneKey{}
	for i := range m.Tasks {
		t := &m.Tasks[i]
		if t.Start >= we {
			break // tasks are sorted by start
		}
		if t.End() <= ws || t.Class == model.ClassCommSubtask || t.Class == model.ClassPlaceholder {
			continue
		}
		k := laneKey{stream: t.Stream}
		b := tlBox{start: max(t.Start, ws) - ws, end: min(t.End(), we) - ws, class: timelineClass(t.Class), name: m.Str(t.Name), count: 1, longest: t.Dur}
		keyOf[len(boxes)] = k
		add(k, b)
	}
	for i := range m.HCCL {
		h := &m.HCCL[i]
		if h.Start >= we {
			break
		}
		if h.End() <= ws {
			continue
		}
		k := laneKey{hccl: true, group: m.Str(h.Group)}
		b := tlBox{start: max(h.Start, ws) - ws, end: min(h.End(), we) - ws, class: 1, name: m.Str(h.Name), count: 1, longest: h.Dur}
		keyOf[len(boxes)] = k
		add(k, b)
	}
	sort.SliceStable(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		if a.hccl != b.hccl {
			return !a.hccl
		}
		if a.stream != b.stream {
			return a.stream < b.stream
		}
		return a.group < b.group
	})
	idx := map[laneKey]int{}
	for i, k := range keys {
		idx[k] = i
		switch {
		case !k.hccl && k.stream < 0:
			lanes = append(lanes, "stream ?")
		case !k.hccl:
			lanes = append(lanes, "stream "+strconv.Itoa(int(k.stream)))
		case k.group == "":
			lanes = append(lanes, "HCCL")
		default:
			lanes = append(lanes, "HCCL "+cleanText(k.group, 30))
		}
	}
	for i := range boxes {
		boxes[i].lane = idx[keyOf[i]]
	}
	total := len(boxes)
	boxes = downsample(boxes, we-ws, maxTimelineBoxes)

	names := map[string]int{}
	var nameList []string
	var data []opts.CustomData
	for _, b := range boxes {
		n := cleanText(b.name, 160)
		if b.count > 1 {
			n = fmt.Sprintf("%d tasks merged; longest: %s", b.count, cleanText(b.name, 140))
		}
		ni, ok := names[n]
		if !ok {
			ni = len(nameList)
			names[n] = ni
			nameList = append(nameList, n)
		}
		data = append(data, opts.CustomData{Value: []any{b.lane, us(b.start), us(b.end), b.class, ni}})
	}
	c := charts.NewCustom()
	c.SetGlobalOptions(baseGlobals()...)
	c.SetGlobalOptions(
		charts.WithLegendOpts(opts.Legend{Show: opts.Bool(false)}),
		grid("8", "40", "4", "34"),
		charts.WithTooltipOpts(opts.Tooltip{Show: opts.Bool(true), Formatter: "fn:boxTip"}),
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
	p := &chartPayload{ID: fmt.Sprintf("chart-timeline-%d", n), Kind: "timeline", Option: o,
		Names: nameList, Height: min(90+30*len(lanes), 640)}
	for _, cl := range timelineClasses {
		p.Classes = append(p.Classes, cl.name)
		p.Colors = append(p.Colors, cl.color)
	}
	if total > len(boxes) {
		p.Label = fmt.Sprintf("%d tasks drawn as %d boxes", total, len(boxes))
	}
	return p
}

// downsample merges neighbouring boxes of a lane whose gap is under a
// quantum, doubling the quantum until at most limit boxes remain. A merged
// box keeps the class and name of its longest member.
func downsample(boxes []tlBox, window int64, limit int) []tlBox {
	if len(boxes) <= limit {
		return boxes
	}
	sort.SliceStable(boxes, func(i, j int) bool {
		if boxes[i].lane != boxes[j].lane {
			return boxes[i].lane < boxes[j].lane
		}
		return boxes[i].start < boxes[j].start
	})
	q := max(window/4000, 1)
	for {
		var out []tlBox
		for _, b := range boxes {
			if n := len(out); n > 0 && out[n-1].lane == b.lane && b.start-out[n-1].end <= q {
				last := &out[n-1]
				last.end = max(last.end, b.end)
				last.count += b.count
				if b.longest > last.longest {
					last.longest, last.class, last.name = b.longest, b.class, b.name
				}
				continue
			}
			out = append(out, b)
		}
		if len(out) <= limit || q > window {
			return out
		}
		q *= 2
	}
}
