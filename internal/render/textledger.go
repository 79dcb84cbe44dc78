package render

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/npuprof/npuprof/internal/results"
)

// maxLedgerCauses is how many causes the terminal's ledger section lists
// before it sums the rest (the section stays within 10 lines);
// shortLedgerCauses in the default summary, which gives each section a few
// lines (--detail tables lists maxLedgerCauses).
const (
	maxLedgerCauses   = 7
	shortLedgerCauses = 4
)

// writeLedger writes the step-time ledger of each step's critical rank:
// the causes with their time per step and share (largest first, the rest
// summed), and the steps' spread; at most 10 lines (tables), else 6.
func writeLedger(ew *errWriter, doc *results.Document, tables bool) {
	if doc.Cluster == nil {
		return
	}
	l := doc.Cluster.Detail.Ledger
	if l == nil || len(l.Steps) == 0 {
		return
	}
	type row struct {
		name string
		us   float64
	}
	var total float64
	lo, hi := math.Inf(1), math.Inf(-1)
	sums := make([]float64, len(l.Causes))
	for _, s := range l.Steps {
		total += s.TimeUs
		lo, hi = math.Min(lo, s.TimeUs), math.Max(hi, s.TimeUs)
		for c, v := range s.Us {
			if c < len(sums) {
				sums[c] += v
			}
		}
	}
	n := float64(len(l.Steps))
	var rows []row
	for c, v := range sums {
		if v > 0 {
			rows = append(rows, row{l.Causes[c], v / n})
		}
	}
	sort.SliceStable(rows, func(i, j int) bool { return rows[i].us > rows[j].us })
	ew.printf("\nStep-time ledger (the critical rank of each step; %d step(s) of %s, from %s to %s)\n", len(l.Steps), Dur(total/n), Dur(lo), Dur(hi))
	limit := shortLedgerCauses
	if tables {
		limit = maxLedgerCauses
		ew.printf("  %-26s %10s %7s\n", ew.t("cause"), ew.t("per step"), ew.t("share"))
	}
	if line := ledgerServiceLine(l); line != "" {
		// the line takes a cause's place: the section keeps its length
		limit--
		defer ew.printf("%s", line)
	}
	line := func(name string, us float64) {
		ew.printf("  %-26s %10s %7s\n", name, Dur(us), pct(us, total/n))
	}
	if len(rows) > limit+1 {
		var rest float64
		for _, r := range rows[limit:] {
			rest += r.us
		}
		for _, r := range rows[:limit] {
			line(r.name, r.us)
		}
		ew.printf("  %-26s %10s %7s\n", ew.t("other causes"), Dur(rest), pct(rest, total/n))
		return
	}
	for _, r := range rows {
		line(r.name, r.us)
	}
}

// ledgerServiceLine says which steps are slow because of their service
// batch (LedgerStepDetail.ServiceCause): how many steps' batches ran a
// prefill and their mean time against the decode-only ones'; "" when no
// step was joined to a batch.
func ledgerServiceLine(l *results.LedgerDetail) string {
	var n [2]int
	var us [2]float64
	var prefill []string
	for _, s := range l.Steps {
		switch s.ServiceCause {
		case "prefill":
			n[0]++
			us[0] += s.TimeUs
			if len(prefill) < 4 {
				prefill = append(prefill, strconv.Itoa(s.Step))
			}
		case "decode":
			n[1]++
			us[1] += s.TimeUs
		}
	}
	switch {
	case n[0]+n[1] == 0:
		return ""
	case n[0] == 0:
		return fmt.Sprintf("  service: the %d step(s) joined to a batch decode only\n", n[1])
	}
	steps := strings.Join(prefill, ", ")
	if n[0] > len(prefill) {
		steps += ", ..."
	}
	line := fmt.Sprintf("  service: %d of %d steps batch a prefill (%s): %s", n[0], n[0]+n[1], steps, Dur(us[0]/float64(n[0])))
	if n[1] > 0 {
		line += fmt.Sprintf(" vs %s decode-only", Dur(us[1]/float64(n[1])))
	}
	return line + "\n"
}
