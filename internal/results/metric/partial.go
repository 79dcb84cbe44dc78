package metric

import "sort"

// PartialSets makes, for each of n ranks that has metrics computed from a
// file cut short, the set of those metrics, keyed by rank, and lists those
// ranks sorted. at(i) gives the i-th rank's number and partial metrics; the
// rules read the analysis's results, compare the results document.
func PartialSets(n int, at func(i int) (rank int, partial []string)) (map[int]map[string]bool, []int) {
	sets := map[int]map[string]bool{}
	var ranks []int
	for i := range n {
		rank, partial := at(i)
		if len(partial) == 0 {
			continue
		}
		set := make(map[string]bool, len(partial))
		for _, m := range partial {
			set[m] = true
		}
		sets[rank] = set
		ranks = append(ranks, rank)
	}
	sort.Ints(ranks)
	return sets, ranks
}
