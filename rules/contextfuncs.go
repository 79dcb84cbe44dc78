package rules

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/npuprof/npuprof/analysis"
)

// collectiveNames are the readable names of HCCL types in finding texts.
var collectiveNames = map[string]string{
	"allreduce": "all-reduce", "allgather": "all-gather", "reducescatter": "reduce-scatter",
	"alltoall": "all-to-all", "alltoallv": "all-to-allv", "allgatherv": "all-gatherv",
	"reducescatterv": "reduce-scatterv", "alltoallvc": "all-to-allvc", "batchsendrecv": "batch send/receive",
}

// CollectiveName is the readable name of an HCCL type (all-reduce).
func CollectiveName(t string) string {
	if n, ok := collectiveNames[t]; ok {
		return n
	}
	return t
}

// named is a total time (ns) and a count summed over ranks, by name.
type named struct {
	name         string
	total, count float64
}

// byTotal lists m by total, largest first (then by name).
func byTotal(m map[string]*named) []*named {
	list := slices.Collect(maps.Values(m))
	slices.SortFunc(list, func(a, b *named) int {
		if c := cmp.Compare(b.total, a.total); c != 0 {
			return c
		}
		return strings.Compare(a.name, b.name)
	})
	return list
}

// add sums total and count into m[name].
func add(m map[string]*named, name string, total int64, count int) {
	a := m[name]
	if a == nil {
		a = &named{name: name}
		m[name] = a
	}
	a.total += float64(total)
	a.count += float64(count)
}

// topCollectives is the n (type, group) pairs of HCCL big ops with the most
// time, mean over ranks, as text with each one's share of the window.
func (st *state) topCollectives(n int) (string, error) {
	sums := map[string]*named{}
	ranks := 0
	win, winRanks := 0.0, 0
	for _, rr := range st.ranks() {
		if analysis.HCCLOf(rr) == nil {
			continue
		}
		ranks++
		if w, ok := rr.Metrics[analysis.MetricDeviceWindowUs]; ok && w > 0 {
			win += w
			winRanks++
		}
		for k, s := range analysis.HCCLOf(rr).ByTypeGroup {
			add(sums, k, s.Total, s.Count)
		}
	}
	if ranks == 0 || len(sums) == 0 {
		return "", st.unavailable("no collectives (HCCL big ops) on any rank")
	}
	var parts []string
	for i, m := range byTotal(sums) {
		if i == n {
			break
		}
		t, g, _ := strings.Cut(m.name, "@")
		label := CollectiveName(t) + " (group " + g + ")"
		if g == "?" {
			label = CollectiveName(t) + " (group not in parallel_group_info)"
		}
		us := m.total / 1000 / float64(ranks)
		s := fmt.Sprintf("%s %s over %s ops", label, formatUs(us), format(m.count/float64(ranks)))
		if winRanks > 0 {
			s += fmt.Sprintf(", %.1f%% of the window", 100*us/(win/float64(winRanks)))
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, "; "), nil
}

// topAICPU is the n AI_CPU kernels with the most time (mean per rank).
func (st *state) topAICPU(n int) (string, error) {
	by := map[string]*named{}
	ranks := 0
	for _, rr := range st.ranks() {
		if analysis.KernelsOf(rr) == nil {
			continue
		}
		ranks++
		for _, k := range analysis.KernelsOf(rr).AICPU {
			add(by, k.Name, k.Total, k.Count)
		}
	}
	if len(by) == 0 {
		return "", st.unavailable("no kernel ran on the AI CPU")
	}
	var parts []string
	for i, a := range byTotal(by) {
		if i == n {
			break
		}
		parts = append(parts, fmt.Sprintf("%s ×%s (%s per rank)", a.name, format(a.count/float64(ranks)),
			formatUs(a.total/1000/float64(ranks))))
	}
	return strings.Join(parts, "; "), nil
}

// addContextFuncs binds the functions that read results beyond metrics.
func (st *state) addContextFuncs() {
	st.env.TopCollectives = st.topCollectives
	st.env.TopAICPU = st.topAICPU
	st.env.Awaited = st.awaitedText
	st.env.AwaitedKind = func() (string, error) {
		k, _, _, _, err := st.topAwaited()
		return k, err
	}
	st.env.PerStep = st.perStep
	st.env.NoEstimate = func(why string) (float64, error) { return 0, st.unavailable("%s", why) }
}

// ranks are the analyzed ranks' results (none without a result).
func (st *state) ranks() []*analysis.RankResult {
	if st.in.Result == nil {
		return nil
	}
	return st.in.Result.Ranks
}

// topAwaited is what the compute streams' EVENT_WAITs waited for most,
// summed over ranks: its kind and name, the record's stream, and its share
// of the compute streams' paired wait time.
func (st *state) topAwaited() (kind, name string, stream int32, share float64, err error) {
	sums := map[[3]string]*named{}
	var all float64
	for _, rr := range st.ranks() {
		ew, wp := analysis.EventWaitOf(rr), analysis.WaitPairsOf(rr)
		if ew == nil || wp == nil {
			continue
		}
		for _, s := range ew.Streams {
			if !s.Compute {
				continue
			}
			for _, a := range wp.Streams[s.Stream] {
				k := [3]string{a.Kind, a.Name, fmt.Sprint(a.Stream)}
				if sums[k] == nil {
					sums[k] = &named{name: a.Kind + "\x00" + a.Name + "\x00" + fmt.Sprint(a.Stream)}
				}
				sums[k].total += float64(a.Wait.Total)
				all += float64(a.Wait.Total)
			}
		}
	}
	if all == 0 {
		return "", "", 0, 0, st.unavailable("no EVENT_WAIT on a compute stream was paired (needs the device timeline)")
	}
	m := map[string]*named{}
	for _, v := range sums {
		m[v.name] = v
	}
	top := byTotal(m)[0]
	parts := strings.Split(top.name, "\x00")
	var s int
	fmt.Sscan(parts[2], &s)
	return parts[0], parts[1], int32(s), top.total / all, nil
}

// awaitedText says what the compute streams wait for, for people.
func (st *state) awaitedText() (string, error) {
	kind, name, stream, share, err := st.topAwaited()
	if err != nil {
		return "", err
	}
	var what string
	switch kind {
	case analysis.AwaitCollective:
		t, g, _ := strings.Cut(name, "@")
		what = "the " + CollectiveName(t) + " collectives"
		if g != "?" {
			what += " of group " + g
		}
		what += fmt.Sprintf(" (stream %d)", stream)
	case analysis.AwaitKernel:
		what = fmt.Sprintf("%s kernels on side stream %d", name, stream)
	case analysis.AwaitMemcpy:
		what = fmt.Sprintf("memory copies on stream %d", stream)
	default:
		what = "the host (no record on the device ended the wait)"
	}
	return fmt.Sprintf("%s, %.1f%% of their waits", what, 100*share), nil
}

// perStep is m over decode.steps.count on each rank that has both, then
// the mean over those ranks.
func (st *state) perStep(m string) (float64, error) {
	vals, err := st.rankValues(m)
	if err != nil {
		return 0, err
	}
	steps, err := st.rankValues(analysis.MetricDecodeStepsCount)
	if err != nil {
		return 0, err
	}
	per := map[int]float64{}
	for r, v := range vals {
		if n, ok := steps[r]; ok && n > 0 {
			per[r] = v / n
		}
	}
	if len(per) == 0 {
		return 0, st.unavailable("per_step(%q): no rank has both %s and decode steps", m, m)
	}
	return mean(per), nil
}
