package analysis

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

var updateStateTypes = flag.Bool("update-state", false, "rewrite testdata/state_types.txt")

// typeShape writes t's structure as gob sees it: kinds, exported fields
// by name, element and key types; a named type once.
func typeShape(b *strings.Builder, t reflect.Type, seen map[reflect.Type]bool, indent string) {
	if t.Name() != "" && t.Kind() == reflect.Struct {
		if seen[t] {
			fmt.Fprintf(b, "%s (seen)\n", t.String())
			return
		}
		seen[t] = true
	}
	switch t.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Array:
		fmt.Fprintf(b, "%s of ", t.Kind())
		typeShape(b, t.Elem(), seen, indent)
	case reflect.Map:
		fmt.Fprintf(b, "map of ")
		typeShape(b, t.Key(), seen, indent)
		fmt.Fprintf(b, "%s  to ", indent)
		typeShape(b, t.Elem(), seen, indent)
	case reflect.Struct:
		fmt.Fprintf(b, "%s struct\n", t.String())
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			fmt.Fprintf(b, "%s  %s ", indent, f.Name)
			typeShape(b, f.Type, seen, indent+"  ")
		}
	default:
		fmt.Fprintf(b, "%s\n", t.Kind())
	}
}

// The encoded shape of every rank pass's result and of the rank record
// is pinned with StateVersion: changing either without the other fails
// here (an export written before the change would decode wrongly, not be
// refused). After a change of shape: raise StateVersion, then run
// go test ./internal/analysis -run TestStateTypesFingerprint -update-state.
func TestStateTypesFingerprint(t *testing.T) {
	var b strings.Builder
	fmt.Fprintf(&b, "StateVersion %d\n", StateVersion)
	seen := map[reflect.Type]bool{}
	fmt.Fprintf(&b, "record ")
	typeShape(&b, reflect.TypeFor[rankRecord](), seen, "")
	for _, p := range Passes {
		if p.ResultType == nil {
			continue
		}
		fmt.Fprintf(&b, "pass %s ", p.Name)
		typeShape(&b, p.ResultType, seen, "")
	}
	path := filepath.Join("testdata", "state_types.txt")
	if *updateStateTypes {
		require.NoError(t, os.MkdirAll("testdata", 0o755))
		require.NoError(t, os.WriteFile(path, []byte(b.String()), 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err)
	if string(want) == b.String() {
		return
	}
	wantVersion, _, _ := strings.Cut(string(want), "\n")
	gotVersion, _, _ := strings.Cut(b.String(), "\n")
	require.NotEqual(t, wantVersion, gotVersion,
		"a pass result's (or the rank record's) encoded shape changed but StateVersion did not: raise it, then run with -update-state")
	t.Fatalf("StateVersion and the shapes changed: run go test ./internal/analysis -run TestStateTypesFingerprint -update-state")
}

// A state written before this version (its record without a version, or
// another one) is refused, naming what to do, not decoded into zeros.
func TestDecodeStateRefusesOtherVersion(t *testing.T) {
	for _, v := range []int{0, StateVersion + 1} {
		rec, err := encodeGob(&rankRecord{StateVersion: v, Rank: 3})
		require.NoError(t, err)
		_, err = DecodeState(&RankState{Record: rec}, nil, nil)
		require.ErrorContains(t, err, "rank 3: its saved pass results are of state version")
		require.ErrorContains(t, err, "export the capture again with this npuprof")
	}
	rec, err := encodeGob(&rankRecord{StateVersion: StateVersion, Rank: 3})
	require.NoError(t, err)
	rr, err := DecodeState(&RankState{Record: rec}, nil, nil)
	require.NoError(t, err)
	require.Equal(t, 3, rr.Rank)
}
