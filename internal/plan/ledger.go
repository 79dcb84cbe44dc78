package plan

import (
	"fmt"
	"math"
	"strings"

	"github.com/npuprof/npuprof/internal/analysis"
	"github.com/npuprof/npuprof/internal/rules"
)

// ledgerLeft is what the plan's fixes may still remove of the step-time
// ledger (the critical rank's, per step): per entry (rules.Claim.Key) and
// step, the time no earlier plan step removed. A fix takes only from it,
// so two fixes never remove the same microsecond.
type ledgerLeft struct {
	// stepNs is the ledger's mean step time, steps its step count.
	stepNs float64
	steps  int
	left   map[string][]float64
}

// newLedgerLeft is the whole ledger of res (nil without one).
func newLedgerLeft(res *analysis.Result) *ledgerLeft {
	if res == nil || res.Cluster == nil {
		return nil
	}
	led := analysis.LedgerClusterOf(res.Cluster)
	if led == nil || len(led.Steps) == 0 {
		return nil
	}
	var sum float64
	for _, s := range led.Steps {
		sum += float64(s.Ns())
	}
	if !(sum > 0) {
		return nil
	}
	return &ledgerLeft{stepNs: sum / float64(len(led.Steps)), steps: len(led.Steps), left: map[string][]float64{}}
}

// entry is the time left of c's entry per step, made on first use from
// the whole entry (the claim's time over its fraction).
func (l *ledgerLeft) entry(c *rules.Claim) []float64 {
	k := c.Key()
	if v, ok := l.left[k]; ok {
		return v
	}
	v := make([]float64, l.steps)
	for i := range v {
		if i < len(c.StepsNs) {
			v[i] = c.StepsNs[i]
			if c.Fraction > 0 && c.Fraction < 1 {
				v[i] /= c.Fraction
			}
		}
	}
	l.left[k] = v
	return v
}

// avail is the mean time per step the claims can still remove.
func (l *ledgerLeft) avail(cs []rules.Claim) float64 {
	var sum float64
	for i := range cs {
		left := l.entry(&cs[i])
		for s := range left {
			if s < len(cs[i].StepsNs) {
				sum += math.Min(cs[i].StepsNs[s], left[s])
			}
		}
	}
	return sum / float64(l.steps)
}

// take removes up to maxNs per step (mean) from the claims' entries, in
// their order, and returns what it removed.
func (l *ledgerLeft) take(cs []rules.Claim, maxNs float64) float64 {
	budget := maxNs * float64(l.steps)
	var took float64
	for i := range cs {
		left := l.entry(&cs[i])
		for s := range left {
			if s >= len(cs[i].StepsNs) || budget <= 0 {
				continue
			}
			x := math.Min(math.Min(cs[i].StepsNs[s], left[s]), budget)
			if x <= 0 {
				continue
			}
			left[s] -= x
			budget -= x
			took += x
		}
	}
	return took / float64(l.steps)
}

// claimedPerStep is the claims' mean time per step, whole.
func claimedPerStep(cs []rules.Claim, steps int) float64 {
	var sum float64
	for _, c := range cs {
		for _, v := range c.StepsNs {
			sum += v
		}
	}
	return sum / float64(steps)
}

// entriesText names the claims' causes and entries, for a basis: a
// cause with more than two entries by its count.
func entriesText(cs []rules.Claim) string {
	var causes []string
	by := map[string][]string{}
	for _, c := range cs {
		n := c.Cause.String()
		if c.Fraction > 0 && c.Fraction < 1 {
			n = fmt.Sprintf("%.0f%% of %s", c.Fraction*100, n)
		}
		if _, ok := by[n]; !ok {
			causes = append(causes, n)
		}
		if c.Entry != "" {
			by[n] = append(by[n], c.Entry)
		} else if by[n] == nil {
			by[n] = []string{}
		}
	}
	parts := make([]string, 0, len(causes))
	for _, n := range causes {
		switch e := by[n]; {
		case len(e) == 0:
			parts = append(parts, n)
		case len(e) <= 2:
			parts = append(parts, n+" "+strings.Join(e, ", "))
		default:
			parts = append(parts, fmt.Sprintf("%s (%d entries)", n, len(e)))
		}
	}
	return strings.Join(parts, ", ")
}
