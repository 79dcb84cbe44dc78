// Package lazyre compiles a regular expression on its first use: a
// package-level pattern costs nothing at start-up, and a run that never
// matches it never compiles it.
package lazyre

import (
	"regexp"
	"sync"
)

// New is expr compiled on the first call, the same *regexp.Regexp on
// every call after. expr is the program's own: a bad one panics there, as
// regexp.MustCompile does.
func New(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}
