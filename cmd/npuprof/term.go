package main

import (
	"io"
	"os"
	"strconv"
	"strings"

	"golang.org/x/term"
)

// isTerminal reports whether w is a terminal. A character device is not
// enough: /dev/null is one, and `npuprof report PATH > /dev/null` must
// neither draw progress nor be refused as "writing to a terminal".
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// termWidth is the width of the summary: COLUMNS when it is a number,
// else the width of w when it is a terminal, else 0 (the summary's 100).
func termWidth(getenv func(string) string, w io.Writer) int {
	if n, err := strconv.Atoi(strings.TrimSpace(getenv("COLUMNS"))); err == nil && n > 0 {
		return n
	}
	if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		if cols, _, err := term.GetSize(int(f.Fd())); err == nil && cols > 0 {
			return cols
		}
	}
	return 0
}

// useColour reports whether the summary on w is coloured: w is a
// terminal, NO_COLOR (no-color.org) is unset or empty, and TERM is not
// dumb.
func useColour(getenv func(string) string, w io.Writer) bool {
	return isTerminal(w) && getenv("NO_COLOR") == "" && getenv("TERM") != "dumb"
}
