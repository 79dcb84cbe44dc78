package analysis

import (
	"cmp"
	"slices"
	"sort"

	"github.com/npuprof/npuprof/internal/parser/model"
)

// Kinds of what an EVENT_WAIT waited for.
const (
	AwaitCollective = "collective" // an HCCL collective (Name: type@group)
	AwaitKernel     = "kernel"     // a compute kernel on another stream (a side stream)
	AwaitMemcpy     = "memcpy"     // a memory copy on another stream
	AwaitHost       = "host"       // no record on the device ended it: the host
)

// WaitPair is one EVENT_WAIT with the record that ended it and the task
// that record followed: what the stream waited for.
type WaitPair struct {
	Wait   int // index into Rank.Tasks
	Record int // the EVENT_RECORD that ended it, -1 for the host
	Kind   string
	// Name: type@group of a collective ("?" for an unknown group), the
	// kernel's op type (else name), MEMCPY, or "host"
	Name string
	// Stream is the stream of the record (-1 for the host).
	Stream int32
}

// Awaited is what one stream's waits waited for: count and total wait.
type Awaited struct {
	Kind, Name string
	Stream     int32 // the stream it ran on (-1: the host)
	Wait       Stat
}

// WaitPairResult is, per waiting stream, what its EVENT_WAITs waited for,
// most wait first.
type WaitPairResult struct {
	Streams map[int32][]Awaited
	// Paired and Waits count the waits ended by a record on the device and
	// all waits.
	Paired, Waits int
	// main are the main compute stream's waits, in task order, and what
	// each waited for (names: the awaited names), for the ledger pass;
	// they index the model (ReleaseModel drops them).
	main  []mainWait
	names []string
}

// mainWait is one EVENT_WAIT of the main stream and what it waited for.
type mainWait struct {
	task   int32
	stream int32  // the record's stream
	name   uint16 // index into WaitPairResult.names
	kind   uint8  // awaitKinds
}

// awaitKinds are WaitPair.Kind's values, indexed by mainWait.kind.
var awaitKinds = [...]string{AwaitHost, AwaitCollective, AwaitKernel, AwaitMemcpy}

// keepMain records p, a wait of the main stream.
func (res *WaitPairResult) keepMain(p WaitPair) {
	k := 0
	for k < len(awaitKinds) && awaitKinds[k] != p.Kind {
		k++
	}
	n := 0
	for n < len(res.names) && res.names[n] != p.Name {
		n++
	}
	if n == len(res.names) {
		if n == 1<<16-1 {
			n = 0 // (never: a stream waits for a few kinds of task)
		} else {
			res.names = append(res.names, keepName(p.Name))
		}
	}
	res.main = append(res.main, mainWait{task: int32(p.Wait), stream: p.Stream, name: uint16(n), kind: uint8(k % len(awaitKinds))})
}

// waitTolNs: a record may end this long after the wait it ends (the
// timestamps of two streams are not exactly aligned).
const waitTolNs = 2000

// maxWalkBack bounds the walk back from a record to the task before it on
// its stream.
const maxWalkBack = 1 << 16

// Metrics of the waitpair pass.
const (
	MetricEventWaitMainStreamKernelUs = "event_wait.main_stream.kernel.time_us" // µs: EVENT_WAIT time on the main compute stream that a compute kernel on another stream ended (it waited for a side stream's work)
)

// WaitPairPass pairs each EVENT_WAIT with what it waited for.
var WaitPairPass = &Pass{
	Name: "waitpair",
	Doc: `what each EVENT_WAIT waited for

An EVENT_WAIT ends when the EVENT_RECORD it waits on runs on another
stream: the wait is paired with the record on another stream that ends
last at or before the wait's end (within 2µs) and not before its start,
and through it with the task that ran before the record on that stream:
a collective (its type and group, from the HCCL op around that task), a
compute kernel (a side stream) or a memcpy. A wait no record ended waited
for the host. Per waiting stream the awaited tasks are summed
(ranks[].awaited["event_wait.stream.<id>.awaited"] in the JSON document).
event_wait.main_stream.kernel.time_us is the main compute stream's (see
eventwait) waits that a compute kernel on another stream ended.`,
	Metrics:  waitpairMetrics,
	Requires: []*Pass{EventWaitPass},
	Run: func(ctx *Context) (any, error) {
		r := ctx.Rank
		if !r.Have.Timeline {
			ctx.UnavailableAll("EVENT_WAIT tasks are only in the device timeline (trace_view.json)")
			return (*WaitPairResult)(nil), nil
		}
		res := &WaitPairResult{Streams: map[int32][]Awaited{}}
		type key struct {
			stream int32
			kind   string
			name   string
			on     int32
		}
		// the sums in the order their keys are first met, looked up by a
		// scan: a rank has a few dozen (waiting stream, awaited task), and
		// its waits alternate between them, where hashing a key of two
		// strings cost ~300 instructions a wait; index takes over past
		// scanKeys
		type sum struct {
			k key
			s Stat
		}
		const scanKeys = 32
		var sums []sum
		var index map[key]int
		last := -1
		main, haveMain := EventWaitOf(ctx).MainStream()
		if haveMain {
			n := 0
			for i := range r.Tasks {
				if t := &r.Tasks[i]; r.Class(t) == model.ClassEventWait && r.Stream(t) == main {
					n++
				}
			}
			res.main = make([]mainWait, 0, n)
		}
		PairWaits(r, func(p WaitPair) {
			if haveMain && r.Stream(&r.Tasks[p.Wait]) == main {
				res.keepMain(p)
			}
			res.Waits++
			if p.Record >= 0 {
				res.Paired++
			}
			w := &r.Tasks[p.Wait]
			k := key{r.Stream(w), p.Kind, p.Name, p.Stream}
			// the ints first: most keys differ in a stream
			same := func(o *key) bool {
				return o.stream == k.stream && o.on == k.on && o.name == k.name && o.kind == k.kind
			}
			if last < 0 || !same(&sums[last].k) {
				last = -1
				if index != nil {
					if i, ok := index[k]; ok {
						last = i
					}
				} else {
					for i := range sums {
						if same(&sums[i].k) {
							last = i
							break
						}
					}
				}
				if last < 0 {
					last = len(sums)
					sums = append(sums, sum{k: k})
					if index != nil {
						index[k] = last
					} else if len(sums) > scanKeys {
						index = make(map[key]int, 2*len(sums))
						for i := range sums {
							index[sums[i].k] = i
						}
					}
				}
			}
			sums[last].s.add(r.Dur(w))
		})
		for i := range sums {
			k := sums[i].k
			res.Streams[k.stream] = append(res.Streams[k.stream], Awaited{Kind: k.kind, Name: keepName(k.name), Stream: k.on, Wait: sums[i].s})
		}
		for _, l := range res.Streams {
			sort.Slice(l, func(i, j int) bool {
				if l[i].Wait.Total != l[j].Wait.Total {
					return l[i].Wait.Total > l[j].Wait.Total
				}
				return l[i].Name < l[j].Name
			})
		}
		mainKernelWaits(ctx, res)
		return res, nil
	},
}

// mainKernelWaits sets event_wait.main_stream.kernel.time_us: the main
// compute stream's waits that a kernel on another stream ended.
func mainKernelWaits(ctx *Context, res *WaitPairResult) {
	main, ok := EventWaitOf(ctx).MainStream()
	if !ok {
		ctx.UnavailableAll("no stream carries compute kernels: no main compute stream")
		return
	}
	var ns int64
	for _, a := range res.Streams[main] {
		if a.Kind == AwaitKernel {
			ns += a.Wait.Total
		}
	}
	ctx.SetUs(MetricEventWaitMainStreamKernelUs, ns)
}

// PairWaits calls fn with every EVENT_WAIT of r, paired with what it
// waited for, in task order.
func PairWaits(r *model.Rank, fn func(WaitPair)) {
	// the waits and records, sized exactly: the pass allocates little next
	// to the model it reads (the task before a record is found by walking
	// back from it: tasks are sorted by start)
	nw, nr := 0, 0
	for i := range r.Tasks {
		switch r.Class(&r.Tasks[i]) {
		case model.ClassEventWait:
			nw++
		case model.ClassEventRecord:
			nr++
		}
	}
	waits, records := make([]int32, 0, nw), make([]int32, 0, nr)
	for i := range r.Tasks {
		switch r.Class(&r.Tasks[i]) {
		case model.ClassEventWait:
			waits = append(waits, int32(i))
		case model.ClassEventRecord:
			records = append(records, int32(i))
		}
	}
	end := func(i int32) int64 { return r.End(&r.Tasks[i]) }
	slices.SortStableFunc(records, func(a, b int32) int { return cmp.Compare(end(a), end(b)) })
	hccl := make([]int32, len(r.HCCL))
	for i := range hccl {
		hccl[i] = int32(i)
	}
	slices.SortStableFunc(hccl, func(a, b int32) int { return cmp.Compare(r.HCCL[a].End(), r.HCCL[b].End()) })
	labels := newTypeGroupLabels(r)
	// the last wait's searches (of records, of collectives): the waits
	// come in start order
	at, hcclAt := 0, 0
	for _, wi := range waits {
		w := &r.Tasks[wi]
		p := WaitPair{Wait: int(wi), Record: -1, Kind: AwaitHost, Name: AwaitHost, Stream: -1}
		wEnd := r.End(w)
		at = searchFrom(len(records), at, func(k int) bool { return end(records[k]) > wEnd+waitTolNs })
		k := at - 1
		for ; k >= 0 && end(records[k]) >= w.Start; k-- {
			if rec := &r.Tasks[records[k]]; r.Stream(rec) != r.Stream(w) {
				p.Record, p.Stream = int(records[k]), r.Stream(rec)
				p.Kind, p.Name = awaitedBefore(r, int(records[k]), hccl, &hcclAt, labels)
				break
			}
		}
		fn(p)
	}
}

// searchFrom is sort.Search(n, f) starting from g, the answer of a
// nearby search (0 <= g <= n): galloping away from g takes a few probes
// when the answer is near, where a binary search over the whole range
// took ~12 for each of the 20 MB rank's waits.
func searchFrom(n, g int, f func(int) bool) int {
	lo, hi := 0, n
	if g < n && !f(g) {
		lo = g + 1
		for step := 1; g+step < n; step *= 2 {
			if f(g + step) {
				hi = g + step
				break
			}
			lo = g + step + 1
		}
	} else {
		hi = g
		for step := 1; g-step >= 0; step *= 2 {
			if !f(g - step) {
				lo = g - step + 1
				break
			}
			hi = g - step
		}
	}
	return lo + sort.Search(hi-lo, func(i int) bool { return f(lo + i) })
}

// awaitedBefore names the task that ran on record rec's stream before it;
// hcclAt is the last search of hccl, where this one starts.
func awaitedBefore(r *model.Rank, rec int, hccl []int32, hcclAt *int, labels *typeGroupLabels) (string, string) {
	rt := &r.Tasks[rec]
	k := -1
	stream := r.Stream(rt)
	for i := rec - 1; i >= 0 && i >= rec-maxWalkBack; i-- {
		t := &r.Tasks[i]
		if r.Stream(t) != stream || r.End(t) > rt.Start+waitTolNs {
			continue
		}
		if c := r.Class(t); c == model.ClassCompute || c == model.ClassCommKernel || c == model.ClassCommSubtask || c == model.ClassMemcpy {
			k = i
			break
		}
	}
	if k < 0 {
		return AwaitKernel, "(nothing before the record)"
	}
	t := &r.Tasks[k]
	switch r.Class(t) {
	case model.ClassCommKernel, model.ClassCommSubtask:
		// the HCCL op that ends last at or after the task's end
		from := r.End(t) - waitTolNs
		h := searchFrom(len(hccl), *hcclAt, func(h int) bool { return r.HCCL[hccl[h]].End() >= from })
		*hcclAt = h
		if h < len(hccl) && r.HCCL[hccl[h]].Start <= r.End(t) {
			return AwaitCollective, labels.of(&r.HCCL[hccl[h]])
		}
		return AwaitCollective, "?@?"
	case model.ClassMemcpy:
		return AwaitMemcpy, "MEMCPY"
	}
	if op := r.Str(r.OpType(t)); op != "" {
		return AwaitKernel, op
	}
	return AwaitKernel, r.Str(r.Name(t))
}

// WaitPairsOf is, per stream of the rank, what its EVENT_WAITs waited for.
var WaitPairsOf = RankResultOf[*WaitPairResult](WaitPairPass)
