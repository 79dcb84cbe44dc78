package tracegen

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestCutTrace(t *testing.T) {
	sc, _ := Lookup("clean")
	sc.Layers, sc.Steps = 1, 1
	file := filepath.Join(t.TempDir(), "trace_view.json")
	f, err := os.Create(file)
	require.NoError(t, err)
	_, err = WriteTrace(f, sc, 0)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	before, err := os.ReadFile(file)
	require.NoError(t, err)

	cut, err := CutTrace(file, 0.5)
	require.NoError(t, err)
	after, err := os.ReadFile(file)
	require.NoError(t, err)
	require.Len(t, after, cut)
	require.Less(t, cut, len(before))
	require.False(t, json.Valid(after), "cut inside an event")
	// the metadata comes first
	meta := strings.Index(string(after), `"ph":"M"`)
	slice := strings.Index(string(after), `"ph":"X"`)
	require.True(t, meta >= 0 && slice > meta, "metadata at %d, first slice at %d", meta, slice)

	_, err = CutTrace(file, 1)
	require.ErrorContains(t, err, "expected 0 < frac < 1")
}
