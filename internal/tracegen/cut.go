package tracegen

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
)

// CutTrace simulates a profiler killed mid-write on a generated
// trace_view.json: it moves the metadata events ("ph": "M") to the front,
// so the part that survives can still tell device tasks and collectives
// apart (torch_npu writes them after the slices), and cuts the file at frac
// (0 < frac < 1) of the bytes after them, inside an event. It returns the
// byte offset of the cut. Tests use it to get a partial rank whose metrics
// are real but smaller than the truth.
func CutTrace(file string, frac float64) (int, error) {
	if frac <= 0 || frac >= 1 {
		return 0, fmt.Errorf("CutTrace %s: frac %v, expected 0 < frac < 1", file, frac)
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return 0, err
	}
	var evs []json.RawMessage
	if err := json.Unmarshal(data, &evs); err != nil {
		return 0, fmt.Errorf("CutTrace %s: not a JSON array of events: %w", file, err)
	}
	var meta, rest []json.RawMessage
	for _, e := range evs {
		var h struct{ Ph string }
		if err := json.Unmarshal(e, &h); err != nil {
			return 0, fmt.Errorf("CutTrace %s: %w", file, err)
		}
		if h.Ph == "M" {
			meta = append(meta, e)
		} else {
			rest = append(rest, e)
		}
	}
	whole, err := json.Marshal(append(meta, rest...))
	if err != nil {
		return 0, err
	}
	head, err := json.Marshal(meta)
	if err != nil {
		return 0, err
	}
	metaEnd := len(head) - 1 // whole starts "[meta...": head without its "]"
	if !bytes.HasPrefix(whole, head[:metaEnd]) {
		return 0, fmt.Errorf("CutTrace %s: internal error: metadata is not a prefix", file)
	}
	cut := metaEnd + int(float64(len(whole)-metaEnd)*frac)
	// land inside an event, never on a boundary a reader could take for a
	// complete file
	for cut < len(whole)-1 && (whole[cut] == ',' || whole[cut] == ' ' || whole[cut-1] == '}') {
		cut++
	}
	return cut, os.WriteFile(file, whole[:cut], 0o644)
}
