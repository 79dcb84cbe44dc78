package traceview

import (
	"reflect"
	"testing"

	"github.com/npuprof/npuprof/internal/parser/model"
)

// tailLog is a log of short records (a few bytes each) followed by long
// ones (large ts jumps, durations, streams and model ids: about 28
// bytes), whose decoding runs ahead of the 16-byte tasks written behind
// it: short records after long ones make the tasks overtake it.
func tailLog(short, long int, name uint32) *plog {
	lg := &plog{}
	ts := int64(1_000_000)
	for range short {
		ts += 10
		lg.add(fTaskType, 1, ts, 5, name, 2, -1, 0)
	}
	for i := range long {
		ts += 1 << 50 * int64(1-2*(i%2))
		lg.add(fTaskType|fStream|fModel, 300, ts, 1<<45, 1<<14, 1<<13, 1<<40+int64(i), 1<<31)
	}
	return lg
}

// identity is the map of n ids to themselves.
func identity(n int) []uint32 {
	m := make([]uint32, n)
	for i := range m {
		m[i] = uint32(i)
	}
	return m
}

// TestTailSameSlices: logs moved into an array's spare capacity decode to
// the same slices while the array is filled from the front, the unread
// rest evacuated when an element would overwrite it (in a log's own
// chunks, in a segment of a later part); the array is never reallocated.
func TestTailSameSlices(t *testing.T) {
	const n = 3000
	for _, c := range []struct {
		name string
		logs func() []*plog
	}{
		{"own chunks", func() []*plog { return []*plog{tailLog(3*n/4, n/4, 3), tailLog(3*n/4, n/4, 4)} }},
		{"segment", func() []*plog {
			lg, seg := tailLog(n, 0, 3), tailLog(n, n/2, 4)
			lg.segs = []logSeg{{chunks: seg.chunks, tmap: identity(301), names: identity(1<<14 + 1)}}
			return []*plog{lg}
		}},
	} {
		var want []slice
		var s slice
		for _, lg := range c.logs() {
			for d := newDecoder(lg); d.next(&s); {
				want = append(want, s)
			}
		}
		logs := c.logs()
		tasks := make([]model.DeviceTask, 0, len(want))
		tl := newTail(tasks, logs)
		if tl.base == nil {
			t.Fatalf("%s: no tail", c.name)
		}
		evacuated := false
		var got []slice
		for _, lg := range logs {
			for d, room := newDecoder(lg), 0; d.next(&s); {
				got = append(got, s)
				if len(tasks) >= room {
					room = tl.reserve(len(tasks)+1, taskBytes, &d)
					evacuated = evacuated || tl.base == nil
				}
				tasks = append(tasks, model.DeviceTask{Start: s.ts, Extra: model.Extra(s.name)})
			}
		}
		if !evacuated {
			t.Fatalf("%s: the tasks never overtook the tail: evacuate is not tested", c.name)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: the slices decoded from the tail differ", c.name)
		}
		for i := range tasks {
			if tasks[i].Start != want[i].ts || tasks[i].Extra != model.Extra(want[i].name) {
				t.Fatalf("%s: task %d overwritten", c.name, i)
			}
		}
		if cap(tasks) != len(want) {
			t.Fatalf("%s: the array was reallocated (cap %d)", c.name, cap(tasks))
		}
	}
}

// TestTailElementsHoldNoPointers: a tail writes log bytes into the
// arrays' spare capacity, which the collector must never scan.
func TestTailElementsHoldNoPointers(t *testing.T) {
	for _, v := range []any{model.DeviceTask{}, model.FrameworkOp{}} {
		if hasPointers(reflect.TypeOf(v)) {
			t.Errorf("%T holds pointers", v)
		}
	}
}

func hasPointers(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Struct:
		for i := range t.NumField() {
			if hasPointers(t.Field(i).Type) {
				return true
			}
		}
		return false
	case reflect.Array:
		return hasPointers(t.Elem())
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64:
		return false
	}
	return true
}
