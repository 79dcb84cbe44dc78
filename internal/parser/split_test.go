package parser

import (
	"encoding/json"
	"testing"

	"github.com/npuprof/npuprof/internal/parser/traceview"
	"github.com/npuprof/npuprof/internal/testutil"
)

// TestTracePartsSameModel: a rank whose trace is read in parts (the CPUs
// that ranks in flight leave idle) has the same model as one read
// sequentially.
func TestTracePartsSameModel(t *testing.T) {
	defer func(v int64) { traceview.MinSplitBytes = v }(traceview.MinSplitBytes)
	traceview.MinSplitBytes = 0
	_, root := testutil.GenerateTiny(t)
	srcs, err := Detect(root)
	if err != nil || len(srcs) != 1 {
		t.Fatalf("Detect: %v %v", srcs, err)
	}
	var docs [2][]byte
	for k, parts := range []int{1, 3} {
		src := srcs[0]
		src.TraceParts = parts
		r, err := ParseRank(src)
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Tasks) == 0 || len(r.HCCL) == 0 || len(r.Links) == 0 {
			t.Fatalf("parts %d: empty model", parts)
		}
		tasks, hccl, ops := r.Resolved() // the reads may number symbols differently
		docs[k], _ = json.Marshal([]any{tasks, hccl, ops, r.Links, r.Steps, r.Warnings, r.Have, r.Device, r.Partial})
	}
	if string(docs[0]) != string(docs[1]) {
		t.Fatal("a trace read in 3 parts gave a different model than a sequential read")
	}
}
