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

// Has reports whether name is a member of the family: the family's text
// with its variable part one name of letters, digits and underscores
// (FamilyHCCLTypeUs.Has("hccl.allgather.time_us") is true).
func (f Family) Has(name string) bool {
	s := string(f)
	i, j := strings.IndexByte(s, '<'), strings.IndexByte(s, '>')
	v, ok := strings.CutPrefix(name, s[:i])
	if !ok {
		return false
	}
	v, ok = strings.CutSuffix(v, s[j+1:])
	if !ok || v == "" {
		return false
	}
	for _, c := range v {
		if !(c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return false
		}
	}
	return true
}
