//go:build !race

package main

// raceEnabled: the race detector is on; its shadow memory counts in the
// peak RSS measured, so memory bounds do not hold.
const raceEnabled = false
