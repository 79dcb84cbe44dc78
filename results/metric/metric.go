// Package metric names what the writers read from the results document:
// the metric names (the keys of its metrics and unavailable maps) and the
// few constants of the passes a writer shows (the slow-rank threshold, the
// caps of a pass's lists, the step phases). The table is the analysis's:
// names.go is generated from the constants declared next to each pass, as
// one table sorted by name whose lines name the declaring analysis file
// (go generate; a test fails when it disagrees with the analysis), so a
// writer names a metric without importing the analysis.
package metric

import "strings"

//go:generate go run ./gen -o names.go -rows ../../analysis/metrics_gen.go

// Family is a family of metrics with a variable part in angle brackets:
// "hccl.<type>.time_us".
type Family string

// Of returns the family member for the variable part v:
// FamilyHCCLTypeUs.Of("allgather") is "hccl.allgather.time_us".
func (f Family) Of(v string) string {
	s := string(f)
	i, j := strings.IndexByte(s, '<'), strings.IndexByte(s, '>')
	return s[:i] + v + s[j+1:]
}
