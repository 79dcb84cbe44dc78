package render

import "math"

// us converts nanoseconds to microseconds, the unit of every output.
func us(ns int64) float64 { return float64(ns) / 1000 }

// fptr is v for an optional number; nil for NaN and ±Inf, which JSON
// cannot carry.
func fptr(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
}
