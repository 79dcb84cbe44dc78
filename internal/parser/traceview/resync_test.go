package traceview

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/npuprof/npuprof/internal/parser/model"
	"github.com/npuprof/npuprof/internal/tracegen"
)

// flipTrace is a generated 4-rank EP+FC1 trace (rank 0, about 600 kB).
func flipTrace(t *testing.T) []byte {
	s, ok := tracegen.Lookup("ep-fc1")
	require.True(t, ok)
	s.Ranks, s.Steps = 4, 2
	var gen bytes.Buffer
	_, err := tracegen.WriteTrace(&gen, s, 0)
	require.NoError(t, err)
	return gen.Bytes()
}

// counts is what a read gives, in numbers.
func counts(r *model.Rank) [4]int {
	return [4]int{len(r.Tasks), len(r.HCCL), len(r.FrameworkOps), len(r.Steps)}
}

// TestReadFlipsNeverSilent damages 1-3 bytes at 200 seeded positions of a
// generated trace. Every read accounts for every event of the file (read,
// or skipped and counted) exactly, but where the damage replaced a whole
// ", {" separator (see below), and one that is neither
// partial nor warned read every event: its counts of tasks, collectives,
// framework ops and steps differ from the clean read's by at most the
// bytes damaged (a damaged byte inside a value, a name or a category,
// changes what that one event is, which no reader can tell).
func TestReadFlipsNeverSilent(t *testing.T) {
	clean := flipTrace(t)
	r0 := model.NewRank("r")
	st0, err := Read(bytes.NewReader(clean), "trace_view.json", r0)
	require.NoError(t, err)
	require.False(t, r0.Partial)
	require.Empty(t, r0.Warnings)
	want := counts(r0)
	rng := rand.New(rand.NewPCG(19, 200))
	partial := 0
	for it := 0; it < 200; it++ {
		b := bytes.Clone(clean)
		p := rng.IntN(len(b) - 3)
		n := 1 + rng.IntN(3)
		for k := 0; k < n; k++ {
			b[p+k] ^= byte(1 + rng.IntN(255))
		}
		what := fmt.Sprintf("case %d: %d byte(s) at %d (%q -> %q)", it, n, p, clean[p:p+n], b[p:p+n])
		r := model.NewRank("r")
		st, err := Read(bytes.NewReader(b), "trace_view.json", r)
		if err != nil {
			// the opening of the array was damaged: refused, loudly
			require.Less(t, p, 8, what)
			continue
		}
		if got := st.Events + st.Skipped; got == st0.Events-1 && bytes.Equal(clean[p:p+n], []byte(", {")) {
			// The one case counted one short, and only it: the whole
			// separator ", {" replaced (2 of the 200). With both the comma
			// and the brace gone, no byte says an event starts there: what
			// follows a complete event is `"ph": ...}`, the same bytes as
			// the rest of an event that a damaged ',' -> '}' closed early,
			// which is not an event of its own. The reader cannot tell
			// them apart (it would need to see that the two bodies repeat
			// keys), so it counts the bytes as the earlier event's tail.
			// The read is still partial, with the byte offset.
			require.True(t, r.Partial, what)
			require.Regexp(t, `malformed at byte \d+ \(expected '\{' or '\]'`, r.PartialReason, what)
			partial++
			continue
		}
		require.Equal(t, st0.Events, st.Events+st.Skipped, "%s: events accounted for: %+v %s", what, st, r.PartialReason)
		if r.Partial {
			partial++
			require.Contains(t, r.PartialReason, "trace_view.json is ", what)
			require.Regexp(t, `at byte \d+`, r.PartialReason, what)
			require.True(t, r.Have.TimelinePartial, what)
			continue
		}
		if len(r.Warnings) > 0 {
			continue
		}
		got := counts(r)
		for k := range got {
			require.LessOrEqual(t, max(got[k]-want[k], want[k]-got[k]), n, "%s: silent change %v -> %v", what, want, got)
		}
	}
	require.Greater(t, partial, 20, "most damage is structural and makes the rank partial")
}

// Two damaged quotes (issue: a key's closing quote in the args of one
// event and a quote in an event far after it) made the args skipper walk
// over every event between them as if they were strings: 90% of the trace
// gone, not partial, no warning. Now the event is malformed, the read
// resynchronises at the next event and accounts for every event.
func TestReadTwoFlippedQuotes(t *testing.T) {
	clean := flipTrace(t)
	r0 := model.NewRank("r")
	st0, err := Read(bytes.NewReader(clean), "trace_view.json", r0)
	require.NoError(t, err)
	key := []byte(`"Fwd thread id"`)
	first := bytes.Index(clean, key)
	first += 1 + bytes.Index(clean[first+1:], key) + len(key) - 1
	start := bytes.LastIndex(clean[:first], []byte("}, {")) + 3
	require.Greater(t, start, 3)
	second := first + len(clean)/3
	second += bytes.IndexByte(clean[second:], '"')
	b := bytes.Clone(clean)
	b[first] ^= 0x20
	b[second] ^= 0x04
	for _, split := range []bool{false, true} {
		r := model.NewRank("r")
		var st Stats
		if split {
			defer func(v int64) { MinSplitBytes = v }(MinSplitBytes)
			MinSplitBytes = 1 << 16
			st, err = ReadFile(bytes.NewReader(b), int64(len(b)), "trace_view.json", r, 4)
		} else {
			st, err = Read(bytes.NewReader(b), "trace_view.json", r)
		}
		require.NoError(t, err)
		require.True(t, r.Partial, "split %v", split)
		require.Equal(t, st0.Events, st.Events, "split %v", split)
		require.Equal(t, int64(2), st.BadEvents, "split %v", split)
		require.Contains(t, r.PartialReason, fmt.Sprintf("trace_view.json is malformed at byte %d", start))
		require.Greater(t, len(r.Tasks), len(r0.Tasks)*9/10, "split %v", split)
		require.Len(t, r.Warnings, 1, "split %v: %v", split, r.Warnings)
	}
}

// A ']' where an event should start is not the end of the array when
// events follow it: the read goes on and the rank is partial.
func TestReadEarlyClose(t *testing.T) {
	evs := []string{hwMeta, task("a", 2, `"1"`, "1"), task("b", 2, `"2"`, "1"), task("c", 2, `"3"`, "1")}
	data := "[" + strings.Join(evs, ", ") + "]"
	at := strings.Index(data, `{"ph":"X","name":"b"`)
	damaged := data[:at-2] + "]" + data[at-1:]
	r, st := readBoth(t, damaged)
	require.True(t, r.Partial)
	require.Equal(t, int64(4), st.Events)
	require.Len(t, r.Tasks, 3)
	require.Contains(t, r.PartialReason, fmt.Sprintf("a ']' at byte %d is followed by more data", at-2))
	// trailing bytes after a real close that hold no event only warn
	r, _ = readBoth(t, data+"\n\x00\x00\x00")
	require.False(t, r.Partial)
	require.Len(t, r.Tasks, 3)
	require.Equal(t, []string{fmt.Sprintf("ignored 3 byte(s) after the closing ']' (from byte %d): not events", len(data)+1)}, warnMessages(r))
}

func warnMessages(r *model.Rank) []string {
	var out []string
	for _, w := range r.Warnings {
		out = append(out, w.Message)
	}
	return out
}
