package traceview

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/npuprof/npuprof/internal/parser/model"
	"github.com/npuprof/npuprof/internal/tracegen"
)

// TestDeviceMetaFirstSameModel: real torch_npu traces name the device
// processes before their slices, which lets the reader skip Overlap
// Analysis slices and the args of HCCL and Python slices unread; tracegen's
// default names them after. Both orders of the same run must give the same
// model, event for event.
func TestDeviceMetaFirstSameModel(t *testing.T) {
	for _, name := range []string{"ep-fc1-cumsum-steps", "ep-fc1", "clean"} {
		s, ok := tracegen.Lookup(name)
		if !ok {
			t.Fatalf("no scenario %s", name)
		}
		s.Ranks, s.Layers, s.Steps = 2, 3, 4
		var last, first bytes.Buffer
		if _, err := tracegen.WriteTrace(&last, s, 1); err != nil {
			t.Fatal(err)
		}
		s.DeviceMetaFirst = true
		if _, err := tracegen.WriteTrace(&first, s, 1); err != nil {
			t.Fatal(err)
		}
		if bytes.Equal(last.Bytes(), first.Bytes()) {
			t.Fatalf("%s: DeviceMetaFirst changed nothing", name)
		}
		// the orders really differ: the Ascend Hardware process_name comes
		// before its first slice only with DeviceMetaFirst
		if hwNamedFirst(t, last.Bytes()) || !hwNamedFirst(t, first.Bytes()) {
			t.Fatalf("%s: metadata order not as requested", name)
		}
		r1, r2 := model.NewRank("r"), model.NewRank("r")
		st1, err1 := Read(bytes.NewReader(last.Bytes()), "trace_view.json", r1)
		st2, err2 := Read(bytes.NewReader(first.Bytes()), "trace_view.json", r2)
		if err1 != nil || err2 != nil {
			t.Fatal(err1, err2)
		}
		if st1.Events != st2.Events || st1.Events == 0 {
			t.Fatalf("%s: events %d vs %d", name, st1.Events, st2.Events)
		}
		if len(r1.Tasks) == 0 || len(r1.HCCL) == 0 || len(r1.FrameworkOps) == 0 || len(r1.Links) == 0 {
			t.Fatalf("%s: empty model: %d tasks %d hccl %d ops %d links", name, len(r1.Tasks), len(r1.HCCL), len(r1.FrameworkOps), len(r1.Links))
		}
		if !equalRanks(r1, r2) {
			t.Fatalf("%s: metadata-first and metadata-last traces built different models", name)
		}
	}
}

func hwNamedFirst(t *testing.T, data []byte) bool {
	var evs []struct {
		Ph   string          `json:"ph"`
		Name string          `json:"name"`
		Pid  json.RawMessage `json:"pid"`
		Args struct {
			Name string `json:"name"`
		} `json:"args"`
	}
	if err := json.Unmarshal(data, &evs); err != nil {
		t.Fatal(err)
	}
	hw := ""
	for _, e := range evs {
		if e.Ph == "M" && e.Name == "process_name" && e.Args.Name == "Ascend Hardware" {
			hw = string(e.Pid)
		}
	}
	for _, e := range evs {
		if string(e.Pid) != hw {
			continue
		}
		return e.Ph == "M"
	}
	return false
}

// TestLateOpsSameModel: a rank whose tasks' array is large makes its
// framework ops after the tasks, from a second decode of the Python logs
// (lateOpsBytes); the model is the same as the one made in one decode,
// read whole or in parts.
func TestLateOpsSameModel(t *testing.T) {
	defer func(b int, m int64, c func()) { lateOpsBytes, MinSplitBytes, Collect = b, m, c }(lateOpsBytes, MinSplitBytes, Collect)
	MinSplitBytes = 0
	// the logs moved into the tasks' array (a tail) are collected
	collected := 0
	Collect = func() { collected++ }
	steps := 0
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
		data := buf.Bytes()
		for _, parts := range []int{1, 3} {
			read := func(late bool) *model.Rank {
				lateOpsBytes = 1 << 62
				if late {
					lateOpsBytes = 0
				}
				r := model.NewRank("r")
				if _, err := ReadFile(bytes.NewReader(data), int64(len(data)), "trace_view.json", r, parts); err != nil {
					t.Fatal(err)
				}
				return r
			}
			one := read(false)
			before := collected
			late := read(true)
			if collected == before {
				t.Fatalf("%s in %d part(s): no collection after the logs moved into the tasks' array", name, parts)
			}
			if len(one.FrameworkOps) == 0 || len(one.Links) == 0 {
				t.Fatalf("%s: %d ops %d links", name, len(one.FrameworkOps), len(one.Links))
			}
			steps += len(one.Steps)
			if !equalRanks(one, late) || !reflect.DeepEqual(one.Threads, late.Threads) {
				t.Fatalf("%s in %d part(s): the ops made after the tasks differ", name, parts)
			}
		}
	}
	if steps == 0 {
		t.Fatal("no ProfilerStep slice read: the steps' pass is not compared")
	}
}
