package tracegen

// The simulator turns the per-step program into timed device tasks and host
// ops for every rank. All ranks advance in lockstep, item by item, so that a
// collective ends at the same (true) time on every member of its group:
// end = latest member arrival + transfer time. A slow rank therefore shows
// short HCCL ops while its peers show long ones, as on real hardware.
//
// Randomness is counter-based (a hash of seed, rank, step, item and a salt),
// never a stateful stream: a pass can be replayed exactly, which lets the
// writers regenerate a step instead of holding the whole trace in memory.

// Physical stream ids of the Ascend Hardware process.
const (
	streamPlaceholder = 0 // PROFILING_ENABLE
	streamCompute     = 2 // all compute kernels and memcpys
	streamTP          = 4 // HCCL stream of the tp communicator
	streamEP          = 5 // HCCL stream of the ep communicator
	streamSide        = 3 // side compute stream (SideStream: the router gate)
	numStreams        = 6
)

// commStream is the HCCL stream of a collective group.
func commStream(group int) int {
	if group == grpEP {
		return streamEP
	}
	return streamTP
}

// taskKind classifies the device tasks the generator emits.
type taskKind uint8

const (
	tkKernel      taskKind = iota // compute kernel (Ascend Hardware + kernel_details)
	tkMemcpy                      // MEMCPY_ASYNC
	tkEventWait                   // EVENT_WAIT
	tkEventRecord                 // EVENT_RECORD
	tkPlaceholder                 // PROFILING_ENABLE
	tkHCCL                        // HCCL big op (HCCL process + kernel_details)
	tkSubtask                     // FFTS+ subtask on the comm stream (+ its HCCL plane task)
	tkAivComm                     // AIV-mode collective kernel on the comm stream
)

// devTask is one device-side slice. Times include the rank's clock offset.
type devTask struct {
	kind     taskKind
	k        *kernelSpec // tkKernel
	c        *collSpec   // tkHCCL, tkSubtask, tkAivComm
	taskType string      // Task Type for events / memcpy / subtasks
	name     string      // subtask / memcpy / event name
	stream   int
	start    int64
	dur      int64
	taskID   int
	subID    int64 // Subtask Id (4294967295 = none)
	conn     int
	tokens   int    // kernel shapes: token count of the kernel's tok kind
	routed   int    // kernel shapes: routed token-expert pairs of this rank
	full     int    // kernel shapes: full token count
	modelID  uint32 // kernels: Model ID (4294967295 = single-op mode)
	// HCCL op / subtask fields.
	hidx      int    // op index within its group
	count     int    // element count
	planeName string // HCCL plane task name of a subtask
	plane     int
	peer      int
	size      int64 // bytes moved by a subtask
	parent    int   // index of the HCCL op a subtask / AIV kernel belongs to
	// awaits: for an EVENT_WAIT, the collective whose end it waits for;
	// awaitsKernel: the side-stream kernel it waits for
	awaits       *collSpec
	awaitsKernel *kernelSpec
}

// hostOp is one Python cpu_op slice on the main thread.
type hostOp struct {
	name string
	ts   int64
	dur  int64
	task int // index into rankStep.tasks of the launched task, -1 none
}

// rankStep is everything one rank does in one decode step.
type rankStep struct {
	step            int   // ProfilerStep number
	psStart, psEnd  int64 // host span of the step (ProfilerStep#N)
	host            []hostOp
	tasks           []devTask
	syncTS, syncDur int64 // AscendCL@aclrtSynchronizeStream
	syncConn        int
}

// rankSim is the running state of one rank.
type rankSim struct {
	t      int64                // compute stream free time (true time)
	host   int64                // host main-thread cursor
	comm   [numCollGroups]int64 // comm stream free time
	taskID [numStreams]int
	conn   int
	hidx   [numCollGroups]int
	off    int64   // clock offset added to every emitted time (even)
	speed  float64 // per-rank kernel speed factor
	routed int     // routed tokens of the current layer
	st     rankStep
	// graphReady is when the step's graph was launched (graph replays
	// only; 0 before the step's input copy)
	graphReady int64
	// scratch of the collective being processed
	cs, ce, rec, recDur, ws, we int64
	hts, hdur, ready            int64
	// side is the side stream's free time (SideStream)
	side int64
}

// sim generates timed steps for all ranks.
type sim struct {
	s       Scenario
	p       program
	tp      int
	t0      int64 // true time of the first step start (ns since epoch)
	detail  []bool
	rk      []rankSim
	k       int // next step index
	full    int // tokens after gathering (padded to TP with FC1)
	local   int // tokens of a sequence-parallel shard (FC1), else full
	routedT int // total token-expert pairs per layer
	layer   int // MoE layer being simulated, -1 in the head and tail
	// gmm, when set, records every GroupedMatmul (ground truth of the
	// EP-skew metrics).
	gmm *gmmAcc
	// graph: decode steps are graph replays (kernels carry GraphModelID).
	graph bool
	// tail: the step's tail (lm_head, sampler) is being simulated, which
	// dummy engines skip
	tail bool
	// waits sums, per rank, the MC2 dispatch and combine kernels' waits for
	// the slowest EP rank (ns; ground truth of moe_wait)
	waits *syncWaits
}

// baseEpochNs is the wall-clock origin of generated captures
// (2025-01-09 08:16:16 UTC).
const baseEpochNs int64 = 1736410576_000_000_000

func newSim(s Scenario, detail []bool) *sim {
	g := &sim{s: s, p: buildProgram(s), tp: s.tpSize(), detail: detail}
	g.t0 = baseEpochNs + int64(uint64(s.Seed)%3600)*1_000_000_000 + 431_631_806
	g.full, g.graph = s.decodeTokens()
	g.local = g.full
	if s.FlashComm1 {
		g.local = g.full / g.tp
	}
	g.routedT = g.full * topK
	g.rk = make([]rankSim, s.Ranks)
	for r := range g.rk {
		rs := &g.rk[r]
		rs.off = 2 * int64(splitmix(uint64(s.Seed)*31+uint64(r)*7919)%1700)
		rs.speed = 1 + 0.02*(2*g.u(r, -1, -1, 0)-1)
		rs.host = g.t0 + g.rng(r, -1, -1, 1, 0, 40_000)
		rs.conn = 1000 + 17*r
		rs.taskID = [numStreams]int{7, 0, 11000, 0, 800, 300}
	}
	return g
}

// splitmix is the SplitMix64 finaliser.
func splitmix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// u is a deterministic uniform number in [0,1) for (rank, step, item, salt);
// rank -1 (or other negative values) gives draws shared by all ranks.
func (g *sim) u(r, k, idx, salt int) float64 {
	h := splitmix(uint64(g.s.Seed) ^ 0x5bd1e995)
	h = splitmix(h ^ uint64(int64(r)+1000))
	h = splitmix(h ^ uint64(int64(k)+7))
	h = splitmix(h ^ uint64(int64(idx)+3))
	h = splitmix(h ^ uint64(int64(salt)+11))
	return float64(h>>11) / (1 << 53)
}

// rng is a deterministic integer in [lo, hi).
func (g *sim) rng(r, k, idx, salt int, lo, hi int64) int64 {
	return lo + int64(g.u(r, k, idx, salt)*float64(hi-lo))
}

func even(x int64) int64 { return x + x&1 }
func odd(x int64) int64  { return x | 1 }

// next returns the next task id of a stream of rank rs.
func (rs *rankSim) next(stream int) int {
	rs.taskID[stream]++
	return rs.taskID[stream]
}

func (rs *rankSim) nextConn() int {
	rs.conn++
	return rs.conn
}

// addTask appends a task to the step (detail ranks only) and returns its index.
func (rs *rankSim) addTask(t devTask) int {
	rs.st.tasks = append(rs.st.tasks, t)
	return len(rs.st.tasks) - 1
}

// step simulates the next decode step of every rank. The returned slices
// are reused by the following call.
func (g *sim) step() []rankSim {
	k := g.k
	g.k++
	for r := range g.rk {
		g.beginStep(r, k)
	}
	idx := 0
	run := func(items []item) {
		for _, it := range items {
			g.item(it, k, idx)
			idx++
		}
	}
	g.layer = -1
	run(g.p.head)
	for l := 0; l < g.s.Layers; l++ {
		g.layer = l
		g.routeLayer(k, l)
		run(g.p.layer)
	}
	g.layer = -1
	g.tail = true
	run(g.p.tail)
	g.tail = false
	for r := range g.rk {
		g.endStep(r, k)
	}
	return g.rk
}

// beginStep opens ProfilerStep k: the host spends a scheduling prologue
// (no launches) before the first copy, which leaves the device idle.
func (g *sim) beginStep(r, k int) {
	rs := &g.rk[r]
	rs.st.step = stepNumber(k)
	rs.st.host = rs.st.host[:0]
	rs.st.tasks = rs.st.tasks[:0]
	rs.graphReady = 0
	ps := rs.host + g.rng(r, k, -2, 0, 1000, 3000)
	rs.st.psStart = ps + rs.off
	rs.host = ps + g.rng(r, k, -2, 1, 120_000, 380_000)
	if k == 0 && g.detail[r] {
		at := ps + g.rng(r, k, -2, 2, 10_000, 30_000)
		rs.addTask(devTask{kind: tkPlaceholder, name: "PROFILING_ENABLE", taskType: "PLACE_HOLDER_SQE",
			stream: streamPlaceholder, start: at + rs.off, dur: 20, taskID: rs.next(streamPlaceholder),
			subID: 4294967295, conn: rs.nextConn()})
	}
}

// endStep closes the step: the host blocks on the sampled tokens (D2H copy),
// then ProfilerStep#N ends.
func (g *sim) endStep(r, k int) {
	rs := &g.rk[r]
	syncTS := rs.host + g.rng(r, k, -3, 0, 500, 2000)
	syncEnd := max(syncTS+4000, rs.t+g.rng(r, k, -3, 1, 3000, 8000))
	if g.detail[r] {
		rs.st.host = append(rs.st.host, hostOp{name: "aten::item", ts: syncTS + rs.off, dur: syncEnd - syncTS, task: -1})
		rs.st.syncTS = syncTS + 1500 + rs.off
		rs.st.syncDur = syncEnd - syncTS - 2300
		rs.st.syncConn = rs.nextConn()
	}
	psEnd := syncEnd + g.rng(r, k, -3, 2, 3000, 9000)
	rs.st.psEnd = psEnd + rs.off
	rs.host = psEnd
}

// routeLayer draws how many token-expert pairs each rank's experts receive
// in MoE layer l of step k. With EP the pairs are split by random weights
// (the hot rank's weight is multiplied by SkewFactor); without EP every
// rank processes all pairs with a 1/TP slice of each expert.
func (g *sim) routeLayer(k, l int) {
	if g.s.EPLB {
		total := g.routedT
		if g.s.HotExperts > 0 {
			total = g.s.routedTokens() // what expertCounts splits
		}
		for r := range g.rk {
			g.rk[r].routed = total / len(g.rk)
			if r < total%len(g.rk) {
				g.rk[r].routed++
			}
		}
		return
	}
	if g.s.HotExperts > 0 {
		counts := expertCounts(g.s, k, l)
		per := g.s.localExperts()
		for r := range g.rk {
			g.rk[r].routed = 0
		}
		for e, n := range counts {
			g.rk[e/per].routed += n
		}
		return
	}
	if !g.s.ExpertParallel {
		for r := range g.rk {
			g.rk[r].routed = g.routedT
		}
		return
	}
	w := make([]float64, len(g.rk))
	var sum float64
	for r := range w {
		w[r] = (0.75 + 0.5*g.u(r, k, 100000+l, 0)) * max(1, g.s.skew(r))
		sum += w[r]
	}
	left := g.routedT
	for r := range w {
		n := int(float64(g.routedT) * w[r] / sum)
		g.rk[r].routed = n
		left -= n
	}
	for r := 0; left > 0; r = (r + 1) % len(w) {
		g.rk[r].routed++
		left--
	}
}

// tokensOf returns the token count a kernel works on for rank r.
func (g *sim) tokensOf(sp *kernelSpec, r int) int {
	switch sp.tok {
	case tokLocal:
		return g.local
	case tokRouted:
		return g.rk[r].routed
	case tokExpert:
		return g.s.localExperts()
	}
	return g.full
}

// kernelDur is the duration of kernel sp on rank r. GroupedMatmul of the
// hot rank takes SkewFactor times the duration of an average-loaded rank.
func (g *sim) kernelDur(sp *kernelSpec, r, k, idx, sub int) int64 {
	tok := g.tokensOf(sp, r)
	per := float64(sp.perTokNs)
	if sp.tok == tokRouted && !g.s.ExpertParallel {
		per /= float64(g.tp)
	}
	f := 1.0
	if sp.role == roleGMM && g.s.skew(r) != 1 {
		tok = g.routedT / len(g.rk)
		if !g.s.ExpertParallel {
			tok = g.routedT
		}
		f = g.s.skew(r)
	}
	if sp.tok == tokExpert {
		tok = 0
	}
	if sp.tok == tokRouted && g.s.MoEScale > 0 {
		f *= g.s.MoEScale
	}
	f *= g.s.shardFactor(sp.shard)
	j := 1 + sp.jitter*(2*g.u(r, k, idx, 40+sub)-1)
	d := int64((float64(sp.baseNs) + per*float64(tok)) * j * g.rk[r].speed * f * g.s.slow(r))
	if d < 500 {
		d = 500
	}
	return d
}

// item simulates one program item on every rank.
func (g *sim) item(it item, k, idx int) {
	switch it.kind {
	case itKernel:
		if it.k.sync {
			g.syncKernel(it.k, k, idx)
			return
		}
		for r := range g.rk {
			if g.active(r) {
				g.kernel(r, it.k, k, idx, 0)
			}
		}
	case itSide:
		for r := range g.rk {
			g.sideKernel(r, it.k, k, idx)
		}
	case itMemcpyH2D, itMemcpyD2H:
		for r := range g.rk {
			if g.active(r) {
				g.memcpy(r, k, idx, it.kind == itMemcpyH2D)
			}
		}
	case itColl:
		g.collective(it.c, k, idx)
	}
}

// launch advances the host by one op and returns its start, duration and
// the time its device task becomes runnable.
func (g *sim) launch(r, k, idx, sub int, lo, hi int64) (hts, hdur, ready int64) {
	rs := &g.rk[r]
	hts = rs.host + g.rng(r, k, idx, 10+sub, 800, 2600)
	hdur = g.rng(r, k, idx, 20+sub, lo, hi)
	if g.s.HostSlowdown > 1 {
		hdur = int64(float64(hdur) * g.s.HostSlowdown)
	}
	if g.graph && rs.graphReady > 0 {
		// a graph replay: the host records the ops once, the device runs
		// them as soon as the graph is launched
		hdur /= 8
		rs.host = hts + hdur
		return hts, hdur, rs.graphReady
	}
	rs.host = hts + hdur
	return hts, hdur, hts + hdur - 1200 + 2500
}

// kernelGap is the device-side gap before a kernel: eager launches leave
// 0.25-1.4 µs and an occasional bubble, a graph replay 0.2-0.8 µs.
func (g *sim) kernelGap(r, k, idx, sub int) int64 {
	if g.graph {
		return g.rng(r, k, idx, 30+sub, 200, 800)
	}
	gap := g.rng(r, k, idx, 30+sub, 250, 1400)
	if g.u(r, k, idx, 50+sub) < 0.03 {
		gap += g.rng(r, k, idx, 60+sub, 4000, 40000) // a device bubble
	}
	return gap
}

// kernel runs one compute kernel on rank r's compute stream.
func (g *sim) kernel(r int, sp *kernelSpec, k, idx, sub int) {
	rs := &g.rk[r]
	hts, hdur, ready := g.launch(r, k, idx, sub, 6000, 15000)
	st := even(max(rs.t+g.kernelGap(r, k, idx, sub), ready))
	d := g.kernelDur(sp, r, k, idx, sub)
	rs.t = st + d
	if sp.role == roleGMM && g.gmm != nil {
		g.gmm.add(r, k, g.layer, d, int64(rs.routed))
	}
	g.emitKernel(r, sp, streamCompute, st, d, hts, hdur)
}

// emitKernel records a compute kernel (and its host launch) of a detail rank.
func (g *sim) emitKernel(r int, sp *kernelSpec, stream int, st, d, hts, hdur int64) {
	rs := &g.rk[r]
	if !g.detail[r] {
		return
	}
	mid := uint32(4294967295)
	if g.graph {
		mid = GraphModelID
	}
	ti := rs.addTask(devTask{kind: tkKernel, k: sp, stream: stream, start: st + rs.off, dur: d,
		taskID: rs.next(stream), subID: subIDFor(sp.taskType), conn: rs.nextConn(),
		tokens: g.tokensOf(sp, r), routed: rs.routed, full: g.full, modelID: mid})
	rs.st.host = append(rs.st.host, hostOp{name: sp.torchOp, ts: hts + rs.off, dur: hdur, task: ti})
}

// subIDFor is the Subtask Id of a kernel: MIX kernels report subtask 0.
func subIDFor(taskType string) int64 {
	if taskType == "MIX_AIV" || taskType == "MIX_AIC" {
		return 0
	}
	return 4294967295
}

// memcpy runs the per-step host-to-device input copy or the device-to-host
// copy of the sampled tokens.
func (g *sim) memcpy(r, k, idx int, h2d bool) {
	rs := &g.rk[r]
	hts, hdur, ready := g.launch(r, k, idx, 0, 9000, 20000)
	st := even(max(rs.t+g.rng(r, k, idx, 30, 300, 1200), ready))
	d := g.rng(r, k, idx, 31, 1800, 4200)
	rs.t = st + d
	if h2d && g.graph {
		rs.graphReady = rs.host + 2500 // the graph is launched after the input copy
	}
	if !g.detail[r] {
		return
	}
	ti := rs.addTask(devTask{kind: tkMemcpy, name: "MEMCPY_ASYNC", taskType: "PCIE_DMA_SQE", stream: streamCompute,
		start: st + rs.off, dur: d, taskID: rs.next(streamCompute), subID: 4294967295, conn: rs.nextConn()})
	rs.st.host = append(rs.st.host, hostOp{name: "aten::copy_", ts: hts + rs.off, dur: hdur, task: ti})
}

// members returns the ranks of rank r's instance of a collective group.
func (g *sim) members(group, r int) (lo, hi int) {
	if group == grpEP {
		return 0, len(g.rk)
	}
	lo = r / g.tp * g.tp
	return lo, lo + g.tp
}

// aiv reports whether a collective runs in HCCL AIV mode.
func (g *sim) aiv(c *collSpec) bool { return g.s.AivComm && c.group == grpTP && !c.noAiv }

// collective runs one collective on every rank:
//
//	compute stream: EVENT_RECORD ─ [overlap kernels] ─ EVENT_WAIT(until op end)
//	comm stream:    EVENT_WAIT(until record) ─ HCCL op ─ EVENT_RECORD
//
// The op ends on all members at the latest member start + transfer time.
func (g *sim) collective(c *collSpec, k, idx int) {
	cstream := commStream(c.group)
	// Phase 1: every rank reaches the collective (a dummy engine's ranks
	// skip the tail's).
	for r := range g.rk {
		if !g.active(r) {
			continue
		}
		rs := &g.rk[r]
		hts, hdur, ready := g.launch(r, k, idx, 0, 12000, 30000)
		rs.hts, rs.hdur = hts, hdur
		rs.rec = even(max(rs.t+g.rng(r, k, idx, 30, 200, 700), ready))
		rs.recDur = 20
		if g.u(r, k, idx, 31) < 0.25 {
			rs.recDur = 0
		}
		rs.t = rs.rec + rs.recDur
		maxWait := int64(45_000)
		if c.group == grpEP {
			maxWait = 110_000
		}
		rs.ws = max(rs.comm[c.group]+g.rng(r, k, idx, 32, 300, 900), rs.rec-g.rng(r, k, idx, 33, 1500, maxWait), ready+500)
		rs.we = rs.rec + rs.recDur + g.rng(r, k, idx, 34, 300, 900)
		if rs.ws >= rs.we {
			rs.we = rs.ws + 20*int64(g.u(r, k, idx, 35)*2)
		}
		rs.cs = odd(rs.we + g.rng(r, k, idx, 36, 150, 700))
	}
	// Phase 2: the op ends together on all members of each group instance.
	for lo := 0; lo < len(g.rk); {
		_, hi := g.members(c.group, lo)
		if !g.active(lo) {
			lo = hi
			continue
		}
		var last int64
		for r := lo; r < hi; r++ {
			last = max(last, g.rk[r].cs)
		}
		tr := float64(c.baseNs) * (1 + c.jitter*(2*g.u(-1-lo, k, idx, 37)-1))
		if g.aiv(c) {
			tr *= 0.6
		}
		for r := lo; r < hi; r++ {
			rs := &g.rk[r]
			rs.ce = last + int64(tr)
			if g.s.WaitBeforeOp && rs.cs < last {
				// the comm stream waits for the last member, then the op
				// runs its transfer alone
				rs.we = max(rs.we, last-(rs.cs-rs.we))
				rs.cs = last
			}
		}
		lo = hi
	}
	// Phase 3: overlap kernels, then the compute stream waits for the op.
	for r := range g.rk {
		if !g.active(r) {
			continue
		}
		rs := &g.rk[r]
		lo, hi := g.members(c.group, r)
		cnt := c.elems(g.full, g.local, g.tp)
		if g.detail[r] {
			g.emitCollective(r, c, cstream, cnt, r-lo, hi-lo)
		}
		for j, ok := range c.overlap {
			g.kernel(r, ok, k, idx, 1+j)
		}
		endRec := rs.ce + g.rng(r, k, idx, 38, 100, 300)
		rs.comm[c.group] = endRec + 20
		if g.detail[r] && g.s.EventWaits {
			rs.addTask(devTask{kind: tkEventRecord, name: "EVENT_RECORD", taskType: "EVENT_RECORD_SQE", stream: cstream,
				start: endRec + rs.off, dur: 20, taskID: rs.next(cstream), subID: 4294967295, conn: rs.nextConn()})
		}
		if c.waitNext {
			ws := rs.t + g.rng(r, k, idx, 39, 200, 500)
			we := max(ws+20*int64(g.u(r, k, idx, 40)*2), rs.ce+g.rng(r, k, idx, 41, 500, 1500))
			rs.t = we
			if g.detail[r] && g.s.EventWaits {
				rs.addTask(devTask{kind: tkEventWait, name: "EVENT_WAIT", taskType: "EVENT_WAIT_SQE", stream: streamCompute,
					start: ws + rs.off, dur: we - ws, taskID: rs.next(streamCompute), subID: 4294967295, conn: rs.nextConn(), awaits: c})
			}
		}
	}
}

// emitCollective records, for a detail rank, the record/wait pair, the
// HCCL big op with its FFTS+ subtasks (or its AIV kernel) and the host op.
// gr is the rank inside the group, gn the group size.
func (g *sim) emitCollective(r int, c *collSpec, cstream, cnt, gr, gn int) {
	rs := &g.rk[r]
	if g.s.EventWaits {
		tt := "EVENT_RECORD_SQE"
		if (rs.rec/1000)%10 == 3 {
			tt = "PLACE_HOLDER_SQE" // some records are typed as placeholders
		}
		rs.addTask(devTask{kind: tkEventRecord, name: "EVENT_RECORD", taskType: tt, stream: streamCompute,
			start: rs.rec + rs.off, dur: rs.recDur, taskID: rs.next(streamCompute), subID: 4294967295, conn: rs.nextConn()})
		rs.addTask(devTask{kind: tkEventWait, name: "EVENT_WAIT", taskType: "EVENT_WAIT_SQE", stream: cstream,
			start: rs.ws + rs.off, dur: rs.we - rs.ws, taskID: rs.next(cstream), subID: 4294967295, conn: rs.nextConn()})
	}
	conn := rs.nextConn()
	tid := rs.next(cstream)
	op := rs.addTask(devTask{kind: tkHCCL, c: c, stream: cstream, start: rs.cs + rs.off, dur: rs.ce - rs.cs,
		taskID: tid, conn: conn, hidx: rs.hidx[c.group], count: cnt})
	rs.hidx[c.group]++
	rs.st.host = append(rs.st.host, hostOp{name: c.torchOp, ts: rs.hts + rs.off, dur: rs.hdur, task: op})
	if g.aiv(c) {
		rs.addTask(devTask{kind: tkAivComm, c: c, name: c.aivName, taskType: c.aivType, stream: cstream,
			start: rs.cs + rs.off, dur: rs.ce - rs.cs, taskID: rs.next(cstream), subID: subIDFor(c.aivType),
			conn: conn, parent: op})
		return
	}
	g.subtasks(r, c, op, tid, conn, cnt, gr, gn)
}

// subtasks lays out the FFTS+ subtasks of one HCCL op inside [cs, ce):
// local copy, notify peer, long wait for peers (synchronisation), copy or
// reduce from peers, notify, short wait. Each also appears as an HCCL plane
// task.
func (g *sim) subtasks(r int, c *collSpec, op, tid, conn, cnt, gr, gn int) {
	rs := &g.rk[r]
	cs, ce := rs.cs, rs.ce
	bytes := int64(cnt) * 2
	if c.dtype == "FP32" {
		bytes = int64(cnt) * 4
	}
	peer := func(j int) int {
		if gn <= 1 {
			return gr
		}
		return (gr + 1 + j) % gn
	}
	d1 := 800 + (cs/7)%800
	d5 := 1500 + (ce/13)%1500
	a2 := cs + d1 + 200
	a3 := a2 + 700 + 200
	e3 := max(ce-(d5+1300), a3+20)
	a4 := e3 + 100
	a5 := a4 + d5 + 100
	a6 := a5 + 700 + 100
	copyName := "Memcpy"
	if c.reduce {
		copyName = "Reduce_Inline"
	}
	type st struct {
		hw, plane  string
		start, end int64
		pl, peer   int
		size       int64
	}
	subs := []st{
		{"SDMA", "Memcpy", cs, cs + d1, 0, gr, bytes},
		{"Write Value", "Notify_Record", a2, a2 + 700, 1, peer(0), 0},
		{"Notify Wait", "Notify_Wait", a3, e3, 1, peer(0), 0},
		{"SDMA", copyName, a4, a4 + d5, 2, peer(1), bytes * int64(max(gn-1, 1)) / int64(max(gn, 1))},
		{"Write Value", "Notify_Record", a5, a5 + 700, 2, peer(1), 0},
		{"Notify Wait", "Notify_Wait", a6, max(a6+20, ce-20), 3, peer(2), 0},
	}
	for i, s := range subs {
		rs.addTask(devTask{kind: tkSubtask, c: c, name: s.hw, taskType: s.hw, planeName: s.plane,
			stream: commStream(c.group), start: s.start + rs.off, dur: s.end - s.start, taskID: tid,
			subID: int64(i), conn: conn, plane: s.pl, peer: s.peer, size: s.size, parent: op})
	}
}

// active reports whether rank r runs the current item: a dummy engine's
// ranks (DummyEngines: every engine but the first) skip the step's tail.
func (g *sim) active(r int) bool {
	return !(g.tail && g.s.DummyEngines && r >= g.tp)
}

// syncWaits is the ground truth of the MC2 kernels' waits.
type syncWaits struct {
	dispatch, combine []int64 // per rank, ns
	layers            int     // MC2 dispatch kernels per rank
}

// syncKernel runs an MC2 dispatch or combine kernel on every rank: the
// token exchange runs inside it, so on every rank of the EP group (all
// ranks) it ends at the last rank's arrival plus the exchange time, and a
// rank that arrived earlier waits inside the kernel.
func (g *sim) syncKernel(sp *kernelSpec, k, idx int) {
	var last int64
	for r := range g.rk {
		rs := &g.rk[r]
		rs.hts, rs.hdur, rs.ready = g.launch(r, k, idx, 0, 6000, 15000)
		rs.cs = even(max(rs.t+g.kernelGap(r, k, idx, 0), rs.ready))
		last = max(last, rs.cs)
	}
	tr := int64((float64(sp.baseNs) + float64(sp.perTokNs)*float64(g.full)) * (1 + sp.jitter*(2*g.u(-1, k, idx, 37)-1)))
	if g.waits == nil {
		g.waits = &syncWaits{dispatch: make([]int64, len(g.rk)), combine: make([]int64, len(g.rk))}
	}
	w := g.waits.combine
	if sp.role == roleDispatch {
		w = g.waits.dispatch
	}
	for r := range g.rk {
		rs := &g.rk[r]
		d := last + tr - rs.cs
		w[r] += last - rs.cs
		rs.t = rs.cs + d
		g.emitKernel(r, sp, streamCompute, rs.cs, d, rs.hts, rs.hdur)
	}
	if sp.role == roleDispatch {
		g.waits.layers++
	}
}

// sideKernel runs kernel sp on rank r's side stream, which the compute
// stream waits for:
//
//	compute stream: EVENT_RECORD ─ EVENT_WAIT(until the side record)
//	side stream:    EVENT_WAIT(until the record) ─ kernel ─ EVENT_RECORD
func (g *sim) sideKernel(r int, sp *kernelSpec, k, idx int) {
	rs := &g.rk[r]
	hts, hdur, ready := g.launch(r, k, idx, 0, 6000, 15000)
	rec := even(max(rs.t+g.kernelGap(r, k, idx, 0), ready))
	st := even(max(rs.side, rec+20+g.rng(r, k, idx, 70, 300, 900)))
	d := g.kernelDur(sp, r, k, idx, 0)
	if g.s.SideStreamNs > 0 {
		d = int64(float64(g.s.SideStreamNs) * (1 + sp.jitter*(2*g.u(r, k, idx, 74)-1)))
	}
	sideRec := st + d + g.rng(r, k, idx, 71, 100, 300)
	rs.side = sideRec + 20
	ws := rec + 20 + g.rng(r, k, idx, 72, 100, 300)
	we := max(ws+20, sideRec+20+g.rng(r, k, idx, 73, 300, 900))
	rs.t = we
	if !g.detail[r] || !g.s.EventWaits {
		g.emitKernel(r, sp, streamSide, st, d, hts, hdur)
		return
	}
	ev := func(kind taskKind, name, typ string, stream int, at, dur int64, sk *kernelSpec) {
		rs.addTask(devTask{kind: kind, name: name, taskType: typ, stream: stream, start: at + rs.off, dur: dur,
			taskID: rs.next(stream), subID: 4294967295, conn: rs.nextConn(), awaitsKernel: sk})
	}
	ev(tkEventRecord, "EVENT_RECORD", "EVENT_RECORD_SQE", streamCompute, rec, 20, nil)
	if st-rec > 60 {
		ev(tkEventWait, "EVENT_WAIT", "EVENT_WAIT_SQE", streamSide, rec+20, st-rec-40, nil)
	}
	g.emitKernel(r, sp, streamSide, st, d, hts, hdur)
	ev(tkEventRecord, "EVENT_RECORD", "EVENT_RECORD_SQE", streamSide, sideRec, 20, nil)
	ev(tkEventWait, "EVENT_WAIT", "EVENT_WAIT_SQE", streamCompute, ws, we-ws, sp)
}
