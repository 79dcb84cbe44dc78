package analysis

import (
	"math"
	"slices"
	"sort"

	"github.com/npuprof/npuprof/internal/parser/model"
)

// StepSpan is one device step on the device capture's clock (ns), and
// its step number (ProfilerStep#N; 0 when not known).
type StepSpan struct {
	Start, End int64
	Step       int
}

// ServiceJoin matches a device capture's steps to the service profile's
// batches of the same run: each step to the batch the service clock saw
// start with it, once the two clocks' offset is known.
type ServiceJoin struct {
	// Offset is the service clock minus the device clock (ns): a step that
	// starts at t on the device is the batch that starts at t+Offset in
	// the service profile. It is estimated from the matched pairs (their
	// median start difference) and is good to the coarser clock's
	// resolution (the service profile's microsecond).
	Offset int64
	// Kind is the batch rows matched: model.BatchExecute (the execution
	// rows, when batch.csv has them) or model.BatchSchedule.
	Kind uint8
	// Batch[i] is the batch row (index into ServiceProfile.Batches) step i
	// matched, -1 when none starts within Tolerance of it; Step[i] is
	// step i's number (StepSpan.Step).
	Batch []int32
	Step  []int
	// Matched counts the steps matched.
	Matched int
	// Tolerance is the largest start difference a match may have after
	// the offset: a quarter of the median interval between the batches.
	Tolerance int64
	// Mixed counts the matched steps whose batch mixes prefill into
	// decode, Decode those of decode-only batches (batches that state
	// their requests' phases); MixedStepRatio is the mean device step of
	// the first over that of the second, 0 when either is empty.
	Mixed, Decode  int
	MixedStepRatio float64
}

// joinSample is how many steps score each candidate offset.
const joinSample = 32

// JoinService matches the device steps (on the device clock, in order) to
// the service profile's batches: the execution rows (modelExec, Execute),
// else the scheduling rows. The clocks' offset is found as the one that
// matches the most sampled steps to a batch start (each candidate the
// first step against one batch; ties: the smallest offset in magnitude,
// the clocks of one host roughly agree), then refined as the median start
// difference of the matched pairs. Nil when either side is empty.
func JoinService(steps []StepSpan, p *model.ServiceProfile) *ServiceJoin {
	if len(steps) == 0 || p == nil {
		return nil
	}
	b := &p.Batches
	kind := model.BatchExecute
	var rows []int32
	for _, k := range []uint8{model.BatchExecute, model.BatchSchedule} {
		for i := range b.Len() {
			if b.Kind[i] == k {
				rows = append(rows, int32(i))
			}
		}
		if len(rows) > 0 {
			kind = k
			break
		}
	}
	if len(rows) == 0 {
		return nil
	}
	sort.SliceStable(rows, func(x, y int) bool { return b.Start[rows[x]] < b.Start[rows[y]] })
	starts := make([]int64, len(rows))
	for i, r := range rows {
		starts[i] = b.Start[r]
	}
	tol := int64(math.MaxInt64)
	if len(starts) > 1 {
		gaps := make([]int64, len(starts)-1)
		for i := range gaps {
			gaps[i] = starts[i+1] - starts[i]
		}
		slices.Sort(gaps)
		tol = max(1, gaps[len(gaps)/2]/4)
	}
	// nearest returns the index of the batch start nearest t, and the
	// distance.
	nearest := func(t int64) (int, int64) {
		j := sort.Search(len(starts), func(k int) bool { return starts[k] >= t })
		best, dist := -1, int64(math.MaxInt64)
		for _, k := range []int{j - 1, j} {
			if k >= 0 && k < len(starts) {
				if d := abs64(starts[k] - t); d < dist {
					best, dist = k, d
				}
			}
		}
		return best, dist
	}
	sample := make([]int, 0, joinSample)
	stride := max(1, len(steps)/joinSample)
	for i := 0; i < len(steps) && len(sample) < joinSample; i += stride {
		sample = append(sample, i)
	}
	bestOff, bestN := int64(0), -1
	for _, s := range starts {
		off := s - steps[0].Start
		n := 0
		for _, i := range sample {
			if _, d := nearest(steps[i].Start + off); d <= tol {
				n++
			}
		}
		if n > bestN || n == bestN && abs64(off) < abs64(bestOff) {
			bestOff, bestN = off, n
		}
	}
	j := &ServiceJoin{Kind: kind, Batch: make([]int32, len(steps)), Step: make([]int, len(steps)), Tolerance: tol}
	var diffs []int64
	for i, st := range steps {
		j.Batch[i], j.Step[i] = -1, st.Step
		k, d := nearest(st.Start + bestOff)
		if k >= 0 && d <= tol {
			j.Batch[i] = rows[k]
			j.Matched++
			diffs = append(diffs, starts[k]-st.Start)
		}
	}
	if len(diffs) > 0 {
		slices.Sort(diffs)
		j.Offset = diffs[(len(diffs)-1)/2]
	}
	var mixedNs, decodeNs int64
	for i, r := range j.Batch {
		if r < 0 {
			continue
		}
		pr, de := b.Prefill[r], b.Decode[r]
		if pr == model.NoServiceValue || de == model.NoServiceValue || de == 0 {
			continue
		}
		if pr > 0 {
			j.Mixed++
			mixedNs += steps[i].End - steps[i].Start
		} else {
			j.Decode++
			decodeNs += steps[i].End - steps[i].Start
		}
	}
	if j.Mixed > 0 && j.Decode > 0 && decodeNs > 0 {
		j.MixedStepRatio = (float64(mixedNs) / float64(j.Mixed)) / (float64(decodeNs) / float64(j.Decode))
	}
	return j
}

// Service causes of a device step's time: what its service batch ran
// (ServiceStepDoc.Cause, the ledger's per-step service_cause).
const (
	// ServiceCausePrefill: the batch runs a prefill, mixed into decode
	// or alone.
	ServiceCausePrefill = "prefill"
	// ServiceCauseDecode: the batch decodes only.
	ServiceCauseDecode = "decode"
)

// BatchCause is the service cause of batch row r's time, "" when the row
// does not state its requests' phases.
func BatchCause(b *model.ServiceBatches, r int32) string {
	pr, de := b.Prefill[r], b.Decode[r]
	switch {
	case pr == model.NoServiceValue || de == model.NoServiceValue:
		return ""
	case pr > 0:
		return ServiceCausePrefill
	}
	return ServiceCauseDecode
}

func abs64(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}

// StepSpansOf returns a rank's timeline steps as device spans (the first
// to the last device work of each ProfilerStep), nil when it has none.
func StepSpansOf(rr *RankResult) []StepSpan {
	var out []StepSpan
	for _, s := range StepsOf(rr) {
		if s.Source == "" && s.DeviceEnd > s.DeviceStart {
			out = append(out, StepSpan{Start: s.DeviceStart, End: s.DeviceEnd, Step: s.Step})
		}
	}
	return out
}
