package lang

// IsWide reports whether r takes two terminal columns (East Asian Wide
// and Fullwidth: CJK ideographs, kana, hangul, CJK and fullwidth
// punctuation).
func IsWide(r rune) bool {
	switch {
	case r < 0x1100:
		return false
	case r <= 0x115F, r == 0x2329, r == 0x232A:
		return true
	case r >= 0x2E80 && r <= 0xA4CF && r != 0x303F:
		return true
	case r >= 0xAC00 && r <= 0xD7A3, r >= 0xF900 && r <= 0xFAFF, r >= 0xFE30 && r <= 0xFE4F:
		return true
	case r >= 0xFF00 && r <= 0xFF60, r >= 0xFFE0 && r <= 0xFFE6:
		return true
	case r >= 0x20000 && r <= 0x3FFFD:
		return true
	}
	return false
}

// Width is how many terminal columns s takes: a wide rune (IsWide) two,
// any other one.
func Width(s string) int {
	n := 0
	for _, r := range s {
		n++
		if IsWide(r) {
			n++
		}
	}
	return n
}
