package traceview

import (
	"bytes"
	"strings"
	"testing"

	"github.com/npuprof/npuprof/internal/parser/model"
	"github.com/npuprof/npuprof/internal/tracegen"
)

// transportOf finds the key wherever it is, and only the key, and names
// the transport its value gives, with any white space around the colon.
func TestTransportOf(t *testing.T) {
	for args, want := range map[string]uint8{
		`{"transport type": "SDMA"}`:                         planeSDMA,
		`{"task type": "Memcpy", "transport type": "RDMA"}`:  planeRDMA,
		`{"transport type" :"SDMA", "size(Byte)": 0}`:        planeSDMA,
		"{\"transport type\"\t:\n \"RDMA\"}":                 planeRDMA,
		`{"transport type": "LOCAL"}`:                        planeOther,
		`{"task type": "Notify_Wait", "transport type":"X"}`: planeOther,
		`{"transport type": "SDMAX"}`:                        planeOther,
		`{"transport type": 3}`:                              planeOther,
		`"transport type"`:                                   planeOther,
		`{"transport typeize(Byte)": 1}`:                     0,
		`{"transport pype": "SDMA", "data type": "y"}`:       0,
		`{"alg_type": "MESH", "data_type": "BFP16"}`:         0,
		`{"Task Type": "SDMA", "Physic Stream Id": 0}`:       0,
		`transport type"`:                                    0,
		`y`:                                                  0,
		``:                                                   0,
	} {
		if got := transportOf([]byte(args)); got != want {
			t.Errorf("%s: %v, want %v", args, got, want)
		}
	}
}

// hasCtrl finds a byte below 0x20 anywhere, in a word or the tail, and
// nothing else (not 0x20, 0x7f or bytes of 0x80 and above).
func TestHasCtrl(t *testing.T) {
	for i := 0; i < 20; i++ {
		for _, c := range []byte{0, 5, '\t', 0x1f} {
			b := []byte("AI_VECTOR_CORE_AI_CORE")[:i+1]
			b[i] = c
			if !hasCtrl(string(b)) {
				t.Errorf("%q: no control byte found", b)
			}
		}
	}
	for _, s := range []string{"", " ", "AI_VECTOR_CORE", "hcom_allGather__115_0_1", "\x7f\x80\xff\xf0 !~", "中文名字 with spaces"} {
		if hasCtrl(s) {
			t.Errorf("%q: a control byte found", s)
		}
	}
}

// An Overlap Analysis slice of one kind on the thread of another (a
// duplicated chunk: "Free" with Computing's pid, tid and times) is named
// and left out of the profiler's own overlap; a file whose threads are not
// named for the kinds is read as before.
func TestOverlapSliceOnAnotherThreadNamed(t *testing.T) {
	s, ok := tracegen.Lookup("clean")
	if !ok {
		t.Fatal("no scenario clean")
	}
	s.Ranks, s.Layers, s.Steps = 1, 2, 2
	var b bytes.Buffer
	if _, err := tracegen.WriteTrace(&b, s, 0); err != nil {
		t.Fatal(err)
	}
	read := func(data []byte) *model.Rank {
		r := model.NewRank("r")
		if _, err := ReadWithOverlap(bytes.NewReader(data), "trace_view.json", r); err != nil {
			t.Fatal(err)
		}
		return r
	}
	whole := read(b.Bytes())
	if whole.OwnOverlap.Slices == 0 || len(whole.Warnings) > 0 {
		t.Fatalf("whole: %+v %v", whole.OwnOverlap, whole.Warnings)
	}
	const from = `{"name": "Computing", "pid"`
	damaged := bytes.Replace(b.Bytes(), []byte(from), []byte(`{"name": "Free", "pid"`), 1)
	r := read(damaged)
	want := `1 Overlap Analysis slice(s) of one kind on the thread of another (first: "Free" on thread "Computing")`
	if len(r.Warnings) != 1 || !strings.HasPrefix(r.Warnings[0].Message, want) {
		t.Fatalf("want %q, got %v", want, r.Warnings)
	}
	if r.OwnOverlap.Free != whole.OwnOverlap.Free || r.OwnOverlap.Computing >= whole.OwnOverlap.Computing || r.OwnOverlap.Slices != whole.OwnOverlap.Slices-1 {
		t.Fatalf("own overlap: whole %+v, damaged %+v", whole.OwnOverlap, r.OwnOverlap)
	}
	// threads not named for the kinds: the slices are read by their names
	renamed := bytes.ReplaceAll(damaged, []byte(`"args": {"name": "Computing"}`), []byte(`"args": {"name": "Thread 0"}`))
	if bytes.Equal(renamed, damaged) {
		t.Fatal("no Computing thread name")
	}
	if r := read(renamed); len(r.Warnings) > 0 || r.OwnOverlap.Slices != whole.OwnOverlap.Slices {
		t.Fatalf("unnamed threads: %v %+v", r.Warnings, r.OwnOverlap)
	}
}
