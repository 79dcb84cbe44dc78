//go:build race

package analysis

// raceEnabled: the race detector is on; it allocates beside the code
// measured, so allocation bounds do not hold.
const raceEnabled = true
