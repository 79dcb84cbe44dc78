package main

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// entries maps each name declared in a names.go to its declaration, with
// spaces normalized.
func entries(src string) map[string]string {
	out := map[string]string{}
	for _, l := range strings.Split(src, "\n") {
		f := strings.Fields(l)
		if len(f) >= 3 && strings.HasPrefix(l, "\t") {
			out[f[0]] = strings.Join(f, " ")
		}
	}
	return out
}

// Every name of names.go is declared so in the analysis now (a metric
// renamed or dropped there fails here; one added is picked up by the next
// go generate ./results/metric).
func TestNamesAgreeWithTheAnalysis(t *testing.T) {
	want, err := generate("../../../analysis")
	require.NoError(t, err)
	got, err := os.ReadFile("../names.go")
	require.NoError(t, err)
	w, g := entries(string(want)), entries(string(got))
	require.NotEmpty(t, g)
	for name, decl := range g {
		require.Equal(t, w[name], decl, "results/metric/names.go disagrees with the analysis on %s: go generate ./results/metric", name)
	}
}
