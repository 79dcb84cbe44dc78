package main

import (
	"io"
	"os"

	"golang.org/x/term"
)

// isTerminal reports whether w is a terminal. A character device is not
// enough: /dev/null is one, and `npuprof report PATH > /dev/null` must
// neither draw progress nor be refused as "writing to a terminal".
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
