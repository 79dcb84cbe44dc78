package rules

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/npuprof/npuprof/internal/analysis"
	"github.com/npuprof/npuprof/internal/units"
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
		label := fmt.Sprintf(st.msg(msgGroup), CollectiveName(t), g)
		if g == "?" {
			label = fmt.Sprintf(st.msg(msgGroupUnknown), CollectiveName(t))
		}
		us := m.total / 1000 / float64(ranks)
		s := fmt.Sprintf(st.msg(msgCollectiveOps), label, units.Dur(us), format(m.count/float64(ranks)))
		if winRanks > 0 {
			s += fmt.Sprintf(st.msg(msgOfWindow), 100*us/(win/float64(winRanks)))
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, st.msg(msgListSep)), nil
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
		parts = append(parts, fmt.Sprintf(st.msg(msgAICPUKernel), a.name, format(a.count/float64(ranks)),
			units.Dur(a.total/1000/float64(ranks))))
	}
	return strings.Join(parts, st.msg(msgListSep)), nil
}

// addContextFuncs binds the functions that read results beyond metrics.
func (st *state) addContextFuncs() {
	st.env.TopCollectives = st.topCollectives
	st.env.TopAICPU = st.topAICPU
	st.env.Awaited = st.awaitedText
	st.env.AwaitedKind = func() (string, error) {
		items, err := st.topAwaited()
		if err != nil {
			return "", err
		}
		return items[0].kind, nil
	}
	st.env.PerStep = st.perStep
	st.env.NoEstimate = func(why string) (float64, error) { return 0, st.unavailable("%s", why) }
	st.env.Release = st.release
	st.env.StackUpgrade = st.stackUpgrade
	st.env.ChangesSince = st.changesSince
	st.env.ChangesFor = st.changesFor
	st.env.ChangesNotFor = st.changesNotFor
}

// ranks are the analyzed ranks' results (none without a result).
func (st *state) ranks() []*analysis.RankResult {
	if st.in.Result == nil {
		return nil
	}
	return st.in.Result.Ranks
}

// awaitedItem is one thing the main compute streams waited for, summed
// over ranks, with its share of their paired wait time.
type awaitedItem struct {
	kind, name string
	stream     int32
	share      float64
}

// awaitedSecondShare: awaited() names a second thing waited for when it
// takes at least this share of the waits.
const awaitedSecondShare = 0.2

// topAwaited is what each rank's main compute stream (the one with the
// most compute-kernel time; every compute stream when it is unknown)
// waited for, summed over ranks, most first.
func (st *state) topAwaited() ([]awaitedItem, error) {
	sums := map[string]*named{}
	var all float64
	for _, rr := range st.ranks() {
		ew, wp := analysis.EventWaitOf(rr), analysis.WaitPairsOf(rr)
		if ew == nil || wp == nil {
			continue
		}
		main, haveMain := ew.MainStream()
		for _, s := range ew.Streams {
			if !s.Compute || (haveMain && s.Stream != main) {
				continue
			}
			for _, a := range wp.Streams[s.Stream] {
				k := a.Kind + "\x00" + a.Name + "\x00" + fmt.Sprint(a.Stream)
				if sums[k] == nil {
					sums[k] = &named{name: k}
				}
				sums[k].total += float64(a.Wait.Total)
				all += float64(a.Wait.Total)
			}
		}
	}
	if all == 0 {
		return nil, st.unavailable("no EVENT_WAIT on a compute stream was paired (needs the device timeline)")
	}
	var out []awaitedItem
	for _, v := range byTotal(sums) {
		parts := strings.Split(v.name, "\x00")
		var s int
		fmt.Sscan(parts[2], &s)
		out = append(out, awaitedItem{kind: parts[0], name: parts[1], stream: int32(s), share: v.total / all})
	}
	return out, nil
}

// awaitedText says what the main compute streams wait for, for people:
// the most waited-for, and the next when it takes a fifth of the waits.
func (st *state) awaitedText() (string, error) {
	items, err := st.topAwaited()
	if err != nil {
		return "", err
	}
	text := st.awaitedWhat(items[0]) + fmt.Sprintf(st.msg(msgOfWaits), 100*items[0].share)
	if len(items) > 1 && items[1].share >= awaitedSecondShare {
		text += fmt.Sprintf(st.msg(msgThen), st.awaitedWhat(items[1]), 100*items[1].share)
	}
	return text, nil
}

// awaitedWhat names one awaited item.
func (st *state) awaitedWhat(a awaitedItem) string {
	switch a.kind {
	case analysis.AwaitCollective:
		t, g, _ := strings.Cut(a.name, "@")
		if g != "?" {
			return fmt.Sprintf(st.msg(msgAwaitCollectiveGroup), CollectiveName(t), g, a.stream)
		}
		return fmt.Sprintf(st.msg(msgAwaitCollective), CollectiveName(t), a.stream)
	case analysis.AwaitKernel:
		return fmt.Sprintf(st.msg(msgAwaitKernel), a.name, a.stream)
	case analysis.AwaitMemcpy:
		return fmt.Sprintf(st.msg(msgAwaitMemcpy), a.stream)
	}
	return st.msg(msgAwaitHost)
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
