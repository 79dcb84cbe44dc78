package model

import (
	"strconv"
	"strings"
)

// CANNRelease reads the major and minor numbers of a CANN version
// ("8.5.0", "8.3.RC2"); ok is false when v names none (empty, unparsable).
func CANNRelease(v string) (major, minor int, ok bool) {
	parts := strings.SplitN(strings.TrimSpace(v), ".", 3)
	if len(parts) < 2 {
		return 0, 0, false
	}
	a, err1 := strconv.Atoi(parts[0])
	b, err2 := strconv.Atoi(parts[1])
	return a, b, err1 == nil && err2 == nil
}

// ExtremesWriter reports whether a CANN version is 8.5 or later, whose
// writers bound the Overlap Analysis window by the earliest and latest
// device task (docs/formats.md, "The device window by writer version");
// known is false when v names no version.
func ExtremesWriter(v string) (extremes, known bool) {
	major, minor, ok := CANNRelease(v)
	if !ok {
		return false, false
	}
	return major > 8 || major == 8 && minor >= 5, true
}
