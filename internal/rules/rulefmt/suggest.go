package rulefmt

import (
	"sort"
	"strings"

	"github.com/npuprof/npuprof/internal/editdist"
)

// Suggest returns at most n candidates that name looks like a misspelling
// or a part of, closest first: those within an edit distance of a third of
// name's length (at least 2), and those that contain name. Unlike Closest
// it returns nothing rather than unrelated names.
func Suggest(name string, candidates []string, n int) []string {
	type c struct {
		s string
		d int
	}
	limit := max(2, len(name)/3)
	var near []c
	for _, s := range candidates {
		d := editdist.Distance(name, s)
		if d <= limit || (len(name) >= 3 && strings.Contains(s, name)) {
			near = append(near, c{s, d})
		}
	}
	sort.Slice(near, func(i, j int) bool {
		if near[i].d != near[j].d {
			return near[i].d < near[j].d
		}
		return near[i].s < near[j].s
	})
	out := []string{}
	for i := 0; i < len(near) && i < n; i++ {
		out = append(out, near[i].s)
	}
	return out
}
