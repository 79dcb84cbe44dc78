package rules

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"sort"

	"github.com/npuprof/npuprof/internal/analysis"
	"github.com/npuprof/npuprof/internal/results"
	"github.com/npuprof/npuprof/internal/rules/rulefmt"
)

// Claim is one step-time ledger entry a fired rule's fix removes: the
// finding's ledger_entries and what the plan stacks (package plan).
type Claim struct {
	Cause analysis.Cause
	// Entry names the part of the cause ("" the cause whole); Stream and
	// Peer are the stream or rank awaited, -1 when none.
	Entry        string
	Stream, Peer int
	Fraction     float64
	// StepsNs is the claimed time per ledger step (the fraction applied).
	StepsNs []float64
}

// Key identifies the ledger entry (two claims of one key claim the same
// time).
func (c *Claim) Key() string { return c.Cause.String() + "\x00" + c.Entry }

// claimSet is a rule's claims resolved once per evaluation.
type claimSet struct {
	done   bool
	claims []Claim
	// stepsNs are the ledger's step times (one per step)
	stepsNs []float64
	err     error
	// reasons are why the claims are unavailable: each expression run
	// starts with no reasons, so a cached err brings its own back
	reasons []string
}

// claims resolves the rule's claims on the ledger of each step's critical
// rank (analysis.LedgerClusterOf), else, for claims that filter nothing,
// on the ledger's cluster metrics (ledger.<cause>.time_us per step over
// ledger.steps.count steps).
func (st *state) claims() ([]Claim, []float64, error) {
	cs := &st.claimSet
	if cs.done {
		if cs.err != nil {
			for _, r := range cs.reasons {
				st.unavailable("%s", r)
			}
		}
		return cs.claims, cs.stepsNs, cs.err
	}
	cs.done = true
	prev := st.missing
	st.missing = nil
	cs.claims, cs.stepsNs, cs.err = st.resolveClaims()
	cs.reasons = st.missing
	st.missing = prev
	for _, r := range cs.reasons {
		st.unavailable("%s", r)
	}
	return cs.claims, cs.stepsNs, cs.err
}

func (st *state) resolveClaims() ([]Claim, []float64, error) {
	r := st.rule
	if r == nil || len(r.Claims) == 0 {
		return nil, nil, st.unavailable("the rule claims no ledger entries")
	}
	var led *analysis.LedgerClusterResult
	if st.in.Result != nil && st.in.Result.Cluster != nil {
		led = analysis.LedgerClusterOf(st.in.Result.Cluster)
	}
	var out []Claim
	var stepsNs []float64
	if led != nil && len(led.Steps) > 0 {
		for _, s := range led.Steps {
			stepsNs = append(stepsNs, float64(s.Ns()))
		}
	} else {
		n, err := st.clusterMetric(analysis.MetricLedgerStepsCount)
		if err != nil {
			return nil, nil, err
		}
		step, err := st.clusterMetric(analysis.MetricLedgerStepUs)
		if err != nil {
			return nil, nil, err
		}
		for range int(math.Max(0, math.Min(n, 1e6))) {
			stepsNs = append(stepsNs, step*1000)
		}
		if len(stepsNs) == 0 {
			return nil, nil, st.unavailable("the step-time ledger has no steps")
		}
	}
	// entries by cause and name, without building a key string per
	// entry and step
	type entryKey struct {
		cause analysis.Cause
		entry string
	}
	by := map[entryKey]int{}
	names := &entryNames{}
	add := func(c Claim, step int, ns float64) {
		k := entryKey{c.Cause, c.Entry}
		i, ok := by[k]
		if !ok {
			i = len(out)
			by[k] = i
			c.StepsNs = make([]float64, len(stepsNs))
			out = append(out, c)
		}
		out[i].StepsNs[step] += ns
	}
	for ci := range r.Claims {
		spec := &r.Claims[ci]
		if spec.When != nil {
			ok, err := st.run(spec.When)
			if err != nil {
				return nil, nil, err
			}
			if !ok.(bool) {
				continue
			}
		}
		frac := 1.0
		if spec.Fraction != nil {
			v, err := st.run(spec.Fraction)
			if err != nil {
				return nil, nil, err
			}
			frac = v.(float64)
			if !(frac >= 0 && frac <= 1) {
				return nil, nil, fmt.Errorf("claim of %s: fraction %v is outside 0..1", spec.Cause, frac)
			}
		}
		stream, peer := -1, -1
		for _, p := range []struct {
			e   *Expr
			dst *int
		}{{spec.Stream, &stream}, {spec.Peer, &peer}} {
			if p.e == nil {
				continue
			}
			v, err := st.run(p.e)
			if err != nil {
				return nil, nil, err
			}
			f, ok := toFloat(v)
			if !ok {
				return nil, nil, fmt.Errorf("claim of %s: %v is not a stream or rank", spec.Cause, v)
			}
			*p.dst = int(f)
		}
		if led == nil || len(led.Steps) == 0 {
			if spec.Filtered() {
				return nil, nil, st.unavailable("the claim of %s names a stream, kernel, peer or op: it needs the step-time ledger's records (the device timeline), which metrics cannot give", spec.Cause)
			}
			v, err := st.clusterMetric(analysis.LedgerCauseMetrics[spec.Cause][0])
			if err != nil {
				return nil, nil, err
			}
			for i := range stepsNs {
				add(Claim{Cause: spec.Cause, Stream: -1, Peer: -1, Fraction: frac}, i, v*1000*frac)
			}
			continue
		}
		for i := range led.Steps {
			s := &led.Steps[i].LedgerStep
			claimStep(s, spec, stream, peer, frac, names, func(c Claim, ns int64) { add(c, i, float64(ns)*frac) })
		}
	}
	return out, stepsNs, nil
}

// entryNames are the names of the stream-wait and peer-wait entries,
// made once per entry rather than once per entry and step, and whether a
// claim's kernel or op pattern matches a name, found once per pattern
// and name (the entries of every step repeat a few names).
type entryNames struct {
	streams map[streamName]string
	peers   map[peerName]string
	matched map[patternName]bool
}

type patternName struct {
	re   *regexp.Regexp
	name string
}

// match reports whether re (nil: none, which matches all) matches name.
func (n *entryNames) match(re *regexp.Regexp, name string) bool {
	if re == nil {
		return true
	}
	k := patternName{re, name}
	m, ok := n.matched[k]
	if !ok {
		if n.matched == nil {
			n.matched = map[patternName]bool{}
		}
		m = re.MatchString(name)
		n.matched[k] = m
	}
	return m
}

type streamName struct {
	stream int
	kernel string
}

func (k streamName) String() string { return fmt.Sprintf("stream %d %s", k.stream, k.kernel) }

type peerName struct {
	op   string
	rank int
}

func (k peerName) String() string { return fmt.Sprintf("%s waiting for rank %d", k.op, k.rank) }

func (n *entryNames) stream(stream int, kernel string) string {
	return nameOnce(&n.streams, streamName{stream, kernel})
}

func (n *entryNames) peer(op string, rank int) string {
	return nameOnce(&n.peers, peerName{op, rank})
}

// nameOnce is k's name, made on first use and kept in *m.
func nameOnce[K interface {
	comparable
	String() string
}](m *map[K]string, k K) string {
	if v, ok := (*m)[k]; ok {
		return v
	}
	if *m == nil {
		*m = map[K]string{}
	}
	v := k.String()
	(*m)[k] = v
	return v
}

// claimStep calls add with each entry of step s the claim selects.
func claimStep(s *analysis.LedgerStep, spec *rulefmt.ClaimSpec, stream, peer int, frac float64, names *entryNames, add func(Claim, int64)) {
	c := Claim{Cause: spec.Cause, Stream: -1, Peer: -1, Fraction: frac}
	total := s.Causes[spec.Cause]
	var named int64
	switch spec.Cause {
	case analysis.CauseCollective:
		for _, e := range s.Collectives {
			named += e.Ns
			if names.match(spec.Op, e.Name) {
				x := c
				x.Entry = e.Name
				add(x, e.Ns)
			}
		}
	case analysis.CauseStreamWait:
		for _, e := range s.Streams {
			named += e.Ns
			if (stream < 0 || int(e.Stream) == stream) && names.match(spec.Kernel, e.Kernel) {
				x := c
				x.Entry, x.Stream = names.stream(int(e.Stream), e.Kernel), int(e.Stream)
				add(x, e.Ns)
			}
		}
	case analysis.CausePeerWait:
		for _, e := range s.Peers {
			named += e.Ns
			if (peer < 0 || e.Rank == peer) && names.match(spec.Op, e.Op) {
				x := c
				x.Entry, x.Peer = names.peer(e.Op, e.Rank), e.Rank
				add(x, e.Ns)
			}
		}
	}
	// the part of the cause no named entry holds: only a claim that
	// filters nothing takes it
	if rest := total - named; rest > 0 && !spec.Filtered() {
		add(c, rest)
	}
}

// clusterMetric is a cluster metric, or why it is unavailable.
func (st *state) clusterMetric(name string) (float64, error) {
	ok, err := st.has(name)
	if err != nil {
		return 0, err
	}
	if !ok {
		return 0, st.unavailable("%s was not measured (the step-time ledger)", name)
	}
	return st.env.Metric(name)
}

// claimedNs is the rule's claims summed over the ledger's steps (ns).
func (st *state) claimedNs() (float64, error) {
	cs, _, err := st.claims()
	if err != nil {
		var ne *errNotEvaluated
		if errors.As(err, &ne) {
			// a claim's expression read what is unavailable: say it again
			// in the expression that reads the claims
			for _, r := range ne.reasons {
				st.unavailable("%s", r)
			}
			return 0, errUnavailable
		}
		return 0, err
	}
	var sum float64
	for _, c := range cs {
		for _, v := range c.StepsNs {
			sum += v
		}
	}
	return sum, nil
}

func (st *state) addClaimFuncs() {
	st.env.Claimed = func() (float64, error) {
		ns, err := st.claimedNs()
		return ns / 1000, err
	}
	st.env.ClaimedStep = func() (float64, error) {
		ns, err := st.claimedNs()
		if err != nil {
			return 0, err
		}
		_, steps, _ := st.claims()
		return ns / 1000 / float64(len(steps)), nil
	}
}

// findingClaims sets fd's claims and ledger entries (none when they
// cannot be resolved: the saving says why when it read them).
func (st *state) findingClaims(fd *Fired) error {
	if st.rule == nil || len(st.rule.Claims) == 0 {
		return nil
	}
	cs, stepsNs, err := st.claims()
	if err != nil {
		if isNotEvaluated(err) {
			return nil
		}
		return err
	}
	var stepSum float64
	for _, v := range stepsNs {
		stepSum += v
	}
	fd.Claims = cs
	for _, c := range cs {
		e := results.LedgerEntry{Cause: c.Cause.String(), Entry: c.Entry, StepsUs: make([]float64, len(c.StepsNs))}
		if c.Fraction < 1 {
			e.Fraction = c.Fraction
		}
		if c.Stream >= 0 {
			e.Stream = &c.Stream
		}
		if c.Peer >= 0 {
			e.Peer = &c.Peer
		}
		var sum float64
		for i, v := range c.StepsNs {
			e.StepsUs[i] = math.Round(v) / 1000
			sum += v
		}
		if sum <= 0 {
			continue
		}
		e.TimeUs = math.Round(sum/float64(len(c.StepsNs))) / 1000
		if stepSum > 0 {
			e.Share = math.Round(sum/stepSum*1e4) / 1e4
		}
		fd.LedgerEntries = append(fd.LedgerEntries, e)
	}
	sort.SliceStable(fd.LedgerEntries, func(i, j int) bool { return fd.LedgerEntries[i].TimeUs > fd.LedgerEntries[j].TimeUs })
	fd.LedgerEntries = foldSmallEntries(fd.LedgerEntries)
	return nil
}

// minEntryShare is the share of the step below which a finding's ledger
// entries of one cause are shown folded into one (the plan stacks them
// one by one all the same: Fired.Claims).
const minEntryShare = 0.005

// foldSmallEntries folds, per cause, the entries below minEntryShare
// beyond its largest three into one "N smaller entries" entry when there
// are two or more of them.
func foldSmallEntries(in []results.LedgerEntry) []results.LedgerEntry {
	small := map[string][]int{}
	kept := map[string]int{}
	for i, e := range in {
		if e.Entry == "" {
			continue
		}
		// the largest three of a cause stay (in is largest first)
		if kept[e.Cause]++; kept[e.Cause] > 3 && e.Share < minEntryShare {
			small[e.Cause] = append(small[e.Cause], i)
		}
	}
	drop := map[int]bool{}
	var folded []results.LedgerEntry
	for _, e := range in {
		idx := small[e.Cause]
		if len(idx) < 2 || drop[idx[0]] {
			continue
		}
		f := results.LedgerEntry{Cause: e.Cause, Entry: fmt.Sprintf("%d smaller entries", len(idx)), StepsUs: make([]float64, len(e.StepsUs))}
		for _, i := range idx {
			drop[i] = true
			x := in[i]
			f.TimeUs += x.TimeUs
			f.Share += x.Share
			for s := range f.StepsUs {
				if s < len(x.StepsUs) {
					f.StepsUs[s] += x.StepsUs[s]
				}
			}
		}
		f.TimeUs, f.Share = math.Round(f.TimeUs*1000)/1000, math.Round(f.Share*1e4)/1e4
		for s := range f.StepsUs {
			f.StepsUs[s] = math.Round(f.StepsUs[s]*1000) / 1000
		}
		folded = append(folded, f)
	}
	var out []results.LedgerEntry
	for i, e := range in {
		if !drop[i] {
			out = append(out, e)
		}
	}
	return append(out, folded...)
}
