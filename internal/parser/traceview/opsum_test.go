package traceview

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/npuprof/npuprof/internal/parser/model"
	"github.com/npuprof/npuprof/internal/tracegen"
)

// TestOpSummarySameLaunches: a rank reduced once read (WillReduceEarly)
// gets its framework ops' summary in place of the ops when each thread's
// ops come in time order; after ReduceFrameworkEarly, SortTasks and
// DropDuplicates it has the launches, op name counts and duplicate counts
// of the same rank read with its ops made, in one part or three, small
// (ops made first) or large (ops made last), on traces whose events are
// each written twice in place (exact duplicate ops, tasks and links) or
// a third of them again at the end (out of order: the ops are made).
func TestOpSummarySameLaunches(t *testing.T) {
	defer func(b int, m int64, c func(), s bool) {
		lateOpsBytes, MinSplitBytes, Collect, summarizeOps = b, m, c, s
	}(lateOpsBytes, MinSplitBytes, Collect, summarizeOps)
	MinSplitBytes = 0
	summarized, dups := 0, 0
	for _, name := range []string{"ep-fc1-cumsum-steps", "host-bound", "clean"} {
		s, ok := tracegen.Lookup(name)
		if !ok {
			t.Fatalf("no scenario %s", name)
		}
		s.Ranks, s.Layers, s.Steps = 2, 3, 4
		var buf bytes.Buffer
		if _, err := tracegen.WriteTrace(&buf, s, 1); err != nil {
			t.Fatal(err)
		}
		for _, how := range []string{"as written", "each twice", "a third again"} {
			data := rewriteEvents(t, buf.Bytes(), how)
			for _, parts := range []int{1, 3} {
				for _, late := range []bool{false, true} {
					lateOpsBytes = 1 << 62
					if late {
						lateOpsBytes = 0
					}
					read := func(summary bool) (*model.Rank, bool, string) {
						summarizeOps = summary
						r := model.NewRank("r")
						r.WillReduceEarly()
						if _, err := ReadFile(bytes.NewReader(data), int64(len(data)), "trace_view.json", r, parts); err != nil {
							t.Fatal(err)
						}
						made := len(r.FrameworkOps) > 0
						r.ReduceFrameworkEarly()
						r.SortTasks()
						d := r.DropDuplicates()
						var b bytes.Buffer
						v := r.TaskLaunches()
						for i := range v.Len() {
							fmt.Fprintf(&b, "%d@%d ", v.Task(i), v.End(i))
						}
						counts := make([]int32, r.Syms.Len())
						r.CountOpNames(counts)
						fmt.Fprintln(&b, counts, d, r.Have.Framework)
						if summary && !made {
							summarized++
							if d.Ops > 0 {
								dups++
							}
						}
						return r, made, b.String()
					}
					made, _, want := read(false)
					sum, opsMade, got := read(true)
					at := fmt.Sprintf("%s %s in %d part(s), late %v", name, how, parts, late)
					if got != want {
						t.Fatalf("%s: summarized\n%s\nmade\n%s", at, got, want)
					}
					if !equalRanks(made, sum) {
						t.Fatalf("%s: the models differ", at)
					}
					if opsMade != (how == "a third again") {
						t.Fatalf("%s: ops made %v", at, opsMade)
					}
				}
			}
		}
	}
	if summarized == 0 || dups == 0 {
		t.Fatalf("%d reads summarized the ops, %d with duplicates", summarized, dups)
	}
}

// rewriteEvents rewrites a trace's events: "each twice" writes each
// event that is not metadata twice in a row; "a third again" appends
// every third of them again, shuffled.
func rewriteEvents(t *testing.T, data []byte, how string) []byte {
	t.Helper()
	if how == "as written" {
		return data
	}
	var evs []json.RawMessage
	if err := json.Unmarshal(data, &evs); err != nil {
		t.Fatal(err)
	}
	var out, again []json.RawMessage
	for i, e := range evs {
		var h struct{ Ph string }
		if err := json.Unmarshal(e, &h); err != nil {
			t.Fatal(err)
		}
		out = append(out, e)
		switch {
		case h.Ph == "M":
		case how == "each twice":
			out = append(out, e)
		case i%3 == 0:
			again = append(again, e)
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	rng.Shuffle(len(again), func(i, j int) { again[i], again[j] = again[j], again[i] })
	b, err := json.Marshal(append(out, again...))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestHCCLArraySized: a large HCCL log's collectives are counted before
// they are made, so their array is allocated once at its length; the
// model is the one appends give, in one part or three.
func TestHCCLArraySized(t *testing.T) {
	defer func(b int, m int64) { sizeHCCLBytes, MinSplitBytes = b, m }(sizeHCCLBytes, MinSplitBytes)
	MinSplitBytes = 0
	s, ok := tracegen.Lookup("ep-fc1-cumsum-steps")
	if !ok {
		t.Fatal("no scenario")
	}
	s.Ranks, s.Layers, s.Steps = 2, 6, 5
	var buf bytes.Buffer
	if _, err := tracegen.WriteTrace(&buf, s, 1); err != nil {
		t.Fatal(err)
	}
	data := buf.Bytes()
	for _, parts := range []int{1, 3} {
		read := func(size int) *model.Rank {
			sizeHCCLBytes = size
			r := model.NewRank("r")
			if _, err := ReadFile(bytes.NewReader(data), int64(len(data)), "trace_view.json", r, parts); err != nil {
				t.Fatal(err)
			}
			return r
		}
		grown, sized := read(1<<62), read(0)
		// (an allocation of len rounds up to its size class)
		if one := slices.Grow([]model.HCCLOp(nil), len(sized.HCCL)); len(sized.HCCL) == 0 || cap(sized.HCCL) != cap(one) {
			t.Fatalf("%d part(s): %d collectives in an array of %d", parts, len(sized.HCCL), cap(sized.HCCL))
		}
		if !equalRanks(grown, sized) {
			t.Fatalf("%d part(s): the models differ", parts)
		}
	}
}
