package testutil

import (
	"fmt"
	"strconv"
	"strings"
)

// ApplyUnifiedDiff applies a unified diff to orig and returns the result.
// It is strict: every context and removed line must match exactly, so a
// test that applies a generated diff proves the diff is correct.
func ApplyUnifiedDiff(orig, diff string) (string, error) {
	src := strings.SplitAfter(orig, "\n")
	if len(src) > 0 && src[len(src)-1] == "" {
		src = src[:len(src)-1]
	}
	lines := strings.SplitAfter(diff, "\n")
	var out []string
	pos := 0 // next unread line of src (0-based)
	i := 0
	for i < len(lines) && !strings.HasPrefix(lines[i], "@@") {
		i++
	}
	for i < len(lines) && lines[i] != "" {
		h := lines[i]
		if !strings.HasPrefix(h, "@@ -") {
			return "", fmt.Errorf("diff line %d: expected a hunk header, found %q", i+1, h)
		}
		fields := strings.Fields(h)
		oldStart, oldLen, err := parseRange(fields[1][1:])
		if err != nil {
			return "", err
		}
		newStart, newLen, err := parseRange(fields[2][1:])
		if err != nil {
			return "", err
		}
		at := oldStart - 1
		if oldLen == 0 {
			at = oldStart
		}
		if at < pos {
			return "", fmt.Errorf("hunk %q overlaps the previous one", strings.TrimSpace(h))
		}
		out = append(out, src[pos:at]...)
		pos = at
		if newLen == 0 {
			_ = newStart
		}
		i++
		gotOld, gotNew := 0, 0
		for i < len(lines) && lines[i] != "" && !strings.HasPrefix(lines[i], "@@") {
			l := lines[i]
			body := l[1:]
			switch l[0] {
			case ' ', '-':
				if pos >= len(src) || src[pos] != body {
					return "", fmt.Errorf("diff line %d: %q does not match source line %d", i+1, strings.TrimSpace(body), pos+1)
				}
				pos++
				gotOld++
				if l[0] == ' ' {
					out = append(out, body)
					gotNew++
				}
			case '+':
				out = append(out, body)
				gotNew++
			case '\\':
			default:
				return "", fmt.Errorf("diff line %d: unexpected %q", i+1, l)
			}
			i++
		}
		if gotOld != oldLen || gotNew != newLen {
			return "", fmt.Errorf("hunk %q: counts %d/%d, header says %d/%d", strings.TrimSpace(h), gotOld, gotNew, oldLen, newLen)
		}
	}
	out = append(out, src[pos:]...)
	return strings.Join(out, ""), nil
}

func parseRange(s string) (start, n int, err error) {
	a, b, ok := strings.Cut(s, ",")
	if start, err = strconv.Atoi(a); err != nil {
		return 0, 0, fmt.Errorf("bad hunk range %q", s)
	}
	n = 1
	if ok {
		if n, err = strconv.Atoi(b); err != nil {
			return 0, 0, fmt.Errorf("bad hunk range %q", s)
		}
	}
	return start, n, nil
}
