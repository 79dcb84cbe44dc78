// Package units formats measured quantities for people, the one place the
// terminal summary, the reports and the rules' texts take their scales
// from, and splits rank lists into the runs they print.
package units

import (
	"fmt"
	"slices"
)

// Dur formats a duration given in µs: 812.5µs, 12.35ms, 1.204s (by its
// magnitude; NaN and ±Inf in seconds).
func Dur(us float64) string {
	a := us
	if a < 0 {
		a = -a
	}
	switch {
	case a < 1000:
		return fmt.Sprintf("%.1fµs", us)
	case a < 1e6:
		return fmt.Sprintf("%.2fms", us/1000)
	}
	return fmt.Sprintf("%.3fs", us/1e6)
}

// Runs splits a set of ranks (or other ids; one repeated counts once) into
// runs of consecutive values, ascending, each as its first and last value:
// 0,1,2,3,5 is [0 3] [5 5]. The loader's messages and the report print
// them each in its notation.
func Runs(ids []int) [][2]int {
	s := slices.Compact(slices.Sorted(slices.Values(ids)))
	var runs [][2]int
	for i := 0; i < len(s); {
		j := i
		for j+1 < len(s) && s[j+1] == s[j]+1 {
			j++
		}
		runs = append(runs, [2]int{s[i], s[j]})
		i = j + 1
	}
	return runs
}
