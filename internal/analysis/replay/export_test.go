package replay

// SetDecodedMaxBytes sets what NewTimeline keeps decoded for a test and
// returns what restores it (tests that call it do not run in parallel).
func SetDecodedMaxBytes(n int) (restore func()) {
	old := decodedMaxBytes
	decodedMaxBytes = n
	return func() { decodedMaxBytes = old }
}

// Decoded reports whether tl keeps its steps decoded.
func Decoded(tl *Timeline) bool { return tl.decoded }
