package traceview

import (
	"bytes"
	"encoding/json"
	"testing"
	"testing/iotest"

	"github.com/npuprof/npuprof/internal/parser/model"
	"github.com/npuprof/npuprof/internal/testutil"
	"github.com/npuprof/npuprof/internal/tracegen"
)

// compactTrace keeps every metadata event and every k-th other event of a
// generated trace: a small seed that still has every process and event kind.
func compactTrace(tb testing.TB, full []byte, k int) []byte {
	var evs []json.RawMessage
	if err := json.Unmarshal(full, &evs); err != nil {
		tb.Fatal(err)
	}
	var keep []json.RawMessage
	for i, e := range evs {
		var h struct{ Ph string }
		_ = json.Unmarshal(e, &h)
		if h.Ph == "M" || i%k == 0 {
			keep = append(keep, e)
		}
	}
	b, err := json.Marshal(keep)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// FuzzRead feeds arbitrary bytes to the trace reader. Crashers found by
// `make fuzz` live in testdata/fuzz/FuzzRead/, named after what they break.
//
// Properties: no panic; the model passes Validate and has no task ending
// before it starts; the same bytes read one byte at a time give the same
// model (block refills never change the result); a file is partial exactly
// when the reader saw it truncated or skipped bytes that are not an event
// (resynchronising); and a well-formed JSON array of objects is read
// completely (every element counted, nothing truncated or skipped).
func FuzzRead(f *testing.F) {
	f.Add([]byte(smallTrace))
	f.Add([]byte(`{"traceEvents": ` + smallTrace + `}`))
	// a Kineto trace: header, base time, the NPU process, a typed kernel,
	// a host process known by its label
	f.Add([]byte(`{"schemaVersion": 1, "distributedInfo": {"rank": 2}, "baseTimeNanoseconds": 1782967788000000000, "traceEvents": [` +
		`{"ph": "X", "cat": "kernel", "name": "hcom_allReduce__1_0_1", "pid": 3, "tid": 7, "ts": 12.5, "dur": 1.250, "args": {"streamId": 7, "type": "KERNEL_AICORE"}},` +
		`{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": 9, "tid": 9, "ts": 10, "dur": 9.001},` +
		`{"ph": "M", "name": "process_name", "pid": 3, "tid": 0, "args": {"name": "NPU"}},` +
		`{"ph": "M", "name": "process_labels", "pid": 9, "tid": 0, "args": {"labels": "CPU"}}], "traceName": "x"}`))
	f.Add([]byte(smallTrace[:len(smallTrace)/2]))
	f.Add([]byte(`[]`))
	f.Add([]byte(``))
	f.Add([]byte(`[{"ph":"X","name":"a","pid":1,"tid":1,"ts":"9223372036854775.807","dur":1e308}]`))
	var gen bytes.Buffer
	if _, err := tracegen.WriteTrace(&gen, testutil.Tiny(), 0); err != nil {
		f.Fatal(err)
	}
	f.Add(compactTrace(f, gen.Bytes(), 25))
	testutil.AddSeedFiles(f, "testdata/broken/*.json", "testdata/broken/*/*.json", "testdata/broken/*/*/*.json")

	f.Fuzz(func(t *testing.T, data []byte) {
		defer testutil.Watchdog(data)()
		// with the real event limit, and with a tiny one so the skipping
		// of oversized events is fuzzed too,
		// and with a small first buffer (fast, and every refill and
		// growth path is taken even in block reads)
		defer func(v, b int) { MaxEventBytes, blockSize = v, b }(MaxEventBytes, blockSize)
		blockSize = 256
		for _, limit := range []int{MaxEventBytes, 200} {
			MaxEventBytes = limit
			checkRead(t, data)
		}
	})
}

func checkRead(t *testing.T, data []byte) {
	r1 := model.NewRank("r")
	st1, err1 := Read(bytes.NewReader(data), "trace_view.json", r1)
	r2 := model.NewRank("r")
	st2, err2 := Read(iotest.OneByteReader(bytes.NewReader(data)), "trace_view.json", r2)
	if (err1 == nil) != (err2 == nil) || st1 != st2 {
		t.Fatalf("limit %d: block and one-byte reads differ: %v %+v / %v %+v", MaxEventBytes, err1, st1, err2, st2)
	}
	if err1 != nil {
		return
	}
	if err := r1.Validate(); err != nil {
		t.Fatalf("model invalid: %v", err)
	}
	for _, x := range r1.Tasks {
		if r1.Dur(&x) < 0 || r1.End(&x) < x.Start {
			t.Fatalf("task %q: start %d dur %d", r1.Str(r1.Name(&x)), x.Start, r1.Dur(&x))
		}
	}
	for _, h := range r1.HCCL {
		if h.Dur < 0 || h.End() < h.Start {
			t.Fatalf("hccl %q: start %d dur %d", r1.Str(h.Name), h.Start, h.Dur)
		}
	}
	if !equalRanks(r1, r2) {
		t.Fatalf("limit %d: block and one-byte reads built different models", MaxEventBytes)
	}
	if r1.Partial != (st1.Truncated || st1.Resyncs > 0) {
		t.Fatalf("partial %v but truncated %v, resynchronised %d times", r1.Partial, st1.Truncated, st1.Resyncs)
	}
	if st1.Malformed && !st1.Truncated {
		t.Fatalf("malformed without stopping: %+v", st1)
	}
	var objs []map[string]json.RawMessage
	if json.Unmarshal(data, &objs) == nil && bytes.HasPrefix(bytes.TrimLeft(data, " \t\r\n"), []byte("[")) {
		if st1.Truncated || st1.Resyncs > 0 || st1.Events+st1.Skipped != int64(len(objs)) {
			t.Fatalf("limit %d: valid array of %d objects: %+v, warnings %v", MaxEventBytes, len(objs), st1, r1.Warnings)
		}
	}
}

func equalRanks(a, b *model.Rank) bool {
	// symbols resolved: the reads may number them differently
	at, ah, ao := a.Resolved()
	bt, bh, bo := b.Resolved()
	ja, _ := json.Marshal([]any{at, ah, ao, a.Links, a.Steps, a.Warnings, a.Partial, a.PartialReason, a.Have, a.Device, a.HCCLPlane, a.OwnOverlap, a.PerDevice})
	jb, _ := json.Marshal([]any{bt, bh, bo, b.Links, b.Steps, b.Warnings, b.Partial, b.PartialReason, b.Have, b.Device, b.HCCLPlane, b.OwnOverlap, b.PerDevice})
	return bytes.Equal(ja, jb)
}
