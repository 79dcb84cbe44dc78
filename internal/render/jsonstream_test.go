package render

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/npuprof/npuprof/internal/results"
)

// WriteJSON writes the ranks one at a time; the bytes are those of one
// Encode of the whole document (escaping included), with no rank, none
// and several.
func TestWriteJSONStreamsRanksSameBytes(t *testing.T) {
	for _, ranks := range [][]results.RankDoc{nil, {}, {
		{Rank: 0, Path: "a/<b>&\"c\"", Metrics: map[string]float64{"x": 1.5, "y": 2}, Unavailable: map[string]string{"z": "why <no>"}, Steps: []results.StepDoc{}},
		{Rank: 1, Path: "ranks", Metrics: map[string]float64{}, Unavailable: map[string]string{}, Steps: []results.StepDoc{}},
	}} {
		doc := &results.Document{Schema: results.Schema, Ranks: ranks, Notes: []string{"\n  \"ranks\": null"}}
		var want bytes.Buffer
		enc := json.NewEncoder(&want)
		enc.SetIndent("", "  ")
		require.NoError(t, enc.Encode(doc))
		var got bytes.Buffer
		require.NoError(t, WriteJSON(&got, doc))
		require.Equal(t, want.String(), got.String())
	}
}
