// Package units formats measured quantities for people, the one place the
// terminal summary, the reports and the rules' texts take their scales
// from.
package units

import "fmt"

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
