// Command walkref runs issue 7's reference loop (package walkref) over the
// files it is given and prints the events counted in each. scripts/bench.sh
// times it next to npuprof and Python's json.load on the same file.
//
//	go build -o bin/walkref ./tools/walkref
//	bin/walkref trace_view.json
package main

import (
	"fmt"
	"os"

	"github.com/npuprof/npuprof/internal/bench/walkref"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: walkref FILE...  (counts the top-level events of each JSON array file)")
		os.Exit(2)
	}
	for _, p := range os.Args[1:] {
		f, err := os.Open(p)
		if err != nil {
			fmt.Fprintln(os.Stderr, "walkref:", err)
			os.Exit(1)
		}
		n, err := walkref.Events(f)
		f.Close()
		if err != nil {
			fmt.Fprintf(os.Stderr, "walkref: %s: %v\n", p, err)
			os.Exit(1)
		}
		fmt.Printf("%d events\t%s\n", n, p)
	}
}
