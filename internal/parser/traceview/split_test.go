package traceview

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/npuprof/npuprof/internal/parser/model"
	"github.com/npuprof/npuprof/internal/testutil"
	"github.com/npuprof/npuprof/internal/tracegen"
)

// checkSplit reads data sequentially and split into parts, and fails
// unless both reads give the same stats, error and model.
func checkSplit(t *testing.T, data []byte, parts int) int {
	t.Helper()
	defer func(v int64) { MinSplitBytes = v }(MinSplitBytes)
	MinSplitBytes = 0
	r1 := model.NewRank("r")
	st1, err1 := Read(bytes.NewReader(data), "trace_view.json", r1)
	r2 := model.NewRank("r")
	st2, err2 := ReadFile(bytes.NewReader(data), int64(len(data)), "trace_view.json", r2, parts)
	joined := st2.Parts
	st2.Parts = st1.Parts
	if fmt.Sprint(err1) != fmt.Sprint(err2) || st1 != st2 {
		t.Fatalf("%d parts: sequential %v %+v, split %v %+v", parts, err1, st1, err2, st2)
	}
	if err1 == nil && !equalRanks(r1, r2) {
		t.Fatalf("%d parts: sequential and split reads built different models:\n%s\n%s", parts, dump(r1), dump(r2))
	}
	return joined
}

func dump(r *model.Rank) string {
	return fmt.Sprintf("%d tasks %d hccl %d ops %d links %d steps warnings %v partial %v %q have %+v device %d plane %+v own %+v per device %+v",
		len(r.Tasks), len(r.HCCL), len(r.FrameworkOps), len(r.Links), len(r.Steps), r.Warnings, r.Partial, r.PartialReason, r.Have, r.Device,
		r.HCCLPlane, r.OwnOverlap, r.PerDevice)
}

// TestReadFileSplitMatchesRead: a file read in parts gives exactly what one
// sequential read gives, for both metadata orders, any number of parts,
// and files cut anywhere (the cut can fall in a part's middle, or in an
// event that a guessed boundary lies inside).
func TestReadFileSplitMatchesRead(t *testing.T) {
	for _, name := range []string{"ep-fc1-cumsum-steps", "ep-fc1", "clean-steps"} {
		for _, first := range []bool{false, true} {
			s, ok := tracegen.Lookup(name)
			if !ok {
				t.Fatalf("no scenario %s", name)
			}
			s.Ranks, s.Layers, s.Steps = 2, 3, 4
			s.DeviceMetaFirst = first
			var b bytes.Buffer
			if _, err := tracegen.WriteTrace(&b, s, 0); err != nil {
				t.Fatal(err)
			}
			data := b.Bytes()
			t.Run(fmt.Sprintf("%s/metafirst=%v", name, first), func(t *testing.T) {
				for _, parts := range []int{2, 3, 4, 7, 16} {
					if got := checkSplit(t, data, parts); got != parts {
						t.Errorf("%d parts asked, %d joined", parts, got)
					}
				}
				// truncated anywhere
				for k := 1; k < 40; k++ {
					checkSplit(t, data[:len(data)*k/40], 3)
				}
			})
		}
	}
	t.Run("small", func(t *testing.T) {
		for _, parts := range []int{2, 3, 5} {
			checkSplit(t, []byte(smallTrace), parts)
			checkSplit(t, []byte(`{"traceEvents": `+smallTrace+`}`), parts)
		}
	})
}

// TestReadFileSplitBroken: the broken-input corpus (malformed events,
// garbage between events, bad timestamps) reads the same split as whole.
func TestReadFileSplitBroken(t *testing.T) {
	root := testutil.RepoRoot()
	var files []string
	for _, p := range []string{"*.json", "*/*.json", "*/*/*.json", "*/*/*/*.json"} {
		m, _ := filepath.Glob(filepath.Join(root, "testdata", "broken", p))
		files = append(files, m...)
	}
	if len(files) == 0 {
		t.Fatal("no broken-input corpus under testdata/broken")
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, parts := range []int{2, 3} {
			checkSplit(t, data, parts)
		}
	}
}

// TestFindBoundary: the guessed cut is the '{' of an event that follows
// `}, ` (any whitespace), not a brace inside a string.
func TestFindBoundary(t *testing.T) {
	data := []byte(`[{"name": "a}, {\"x", "pid": 1},` + "\n  " + `{"name": "b"}]`)
	got := findBoundary(bytes.NewReader(data), 2, int64(len(data)))
	want := int64(bytes.LastIndexByte(data, '{'))
	if got != want {
		t.Fatalf("findBoundary = %d, want %d", got, want)
	}
	if got := findBoundary(bytes.NewReader(data), want+1, int64(len(data))); got != -1 {
		t.Fatalf("no boundary after the last event: got %d", got)
	}
}

// FuzzReadFile: any input reads the same in parts as whole.
func FuzzReadFile(f *testing.F) {
	f.Add([]byte(smallTrace))
	f.Add([]byte(smallTrace[:len(smallTrace)/2]))
	var gen bytes.Buffer
	s := testutil.Tiny()
	s.DeviceMetaFirst = true
	if _, err := tracegen.WriteTrace(&gen, s, 0); err != nil {
		f.Fatal(err)
	}
	f.Add(compactTrace(f, gen.Bytes(), 25))
	testutil.AddSeedFiles(f, "testdata/broken/*.json", "testdata/broken/*/*.json", "testdata/broken/*/*/*.json")
	f.Fuzz(func(t *testing.T, data []byte) {
		defer testutil.Watchdog(data)()
		defer func(b int) { blockSize = b }(blockSize)
		blockSize = 256
		for _, parts := range []int{2, 3} {
			checkSplit(t, data, parts)
		}
	})
}

// TestReadFileWrongGuess: a guessed boundary can lie inside an event (a
// name ending in "}, {" looks exactly like one); the part before it then
// reads on by itself, and the result is still the sequential one.
func TestReadFileWrongGuess(t *testing.T) {
	var b bytes.Buffer
	b.WriteString(`[{"name": "process_name", "pid": 1, "tid": 0, "args": {"name": "Ascend Hardware"}, "ph": "M"}`)
	for i := 0; i < 50; i++ {
		name := "k"
		if i == 25 {
			name = "x}, {"
		}
		fmt.Fprintf(&b, `, {"name": %q, "pid": 1, "tid": 2, "ts": "%d.000", "dur": 1.5, "args": {"Task Type": "AI_CORE"}, "ph": "X"}`, name, 1000+10*i)
	}
	b.WriteString("]")
	data := b.Bytes()
	fake := int64(bytes.Index(data, []byte(`}, {", "pid"`)) + 3)
	real := int64(bytes.LastIndex(data, []byte(`}, {"name"`)) + 3)
	if got := findBoundary(bytes.NewReader(data), fake-5, int64(len(data))); got != fake {
		t.Fatalf("findBoundary = %d, want the fake boundary %d", got, fake)
	}
	r1 := model.NewRank("r")
	st1, err1 := Read(bytes.NewReader(data), "trace_view.json", r1)
	for _, cuts := range [][]int64{{fake}, {fake, real}, {real}} {
		r2 := model.NewRank("r")
		st2, err2 := readCuts(bytes.NewReader(data), int64(len(data)), "trace_view.json", r2, cuts, false)
		want := 1
		if cuts[0] == real {
			want = 2
		}
		if st2.Parts != want {
			t.Errorf("cuts %v: %d parts joined, want %d", cuts, st2.Parts, want)
		}
		st2.Parts = st1.Parts
		if err1 != nil || err2 != nil || st1 != st2 || !equalRanks(r1, r2) {
			t.Fatalf("cuts %v: sequential %v %+v %s, split %v %+v %s", cuts, err1, st1, dump(r1), err2, st2, dump(r2))
		}
		if len(r2.Tasks) != 50 {
			t.Fatalf("cuts %v: %d tasks, want 50", cuts, len(r2.Tasks))
		}
	}
}

// TestReadFileWithOverlapSplit: the trace's own Overlap Analysis reads
// the same in parts as whole (whether the processes are named before
// their slices or after).
func TestReadFileWithOverlapSplit(t *testing.T) {
	defer func(m int64) { MinSplitBytes = m }(MinSplitBytes)
	MinSplitBytes = 0
	for _, first := range []bool{true, false} {
		var gen bytes.Buffer
		s := testutil.Tiny()
		s.DeviceMetaFirst = first
		if _, err := tracegen.WriteTrace(&gen, s, 0); err != nil {
			t.Fatal(err)
		}
		data := gen.Bytes()
		whole := model.NewRank("r")
		if _, err := ReadWithOverlap(bytes.NewReader(data), "trace_view.json", whole); err != nil {
			t.Fatal(err)
		}
		if whole.OwnOverlap.Slices == 0 || whole.OwnOverlap.Free <= 0 {
			t.Fatalf("meta first %v: no Overlap Analysis read: %+v", first, whole.OwnOverlap)
		}
		skipped := model.NewRank("r")
		if _, err := Read(bytes.NewReader(data), "trace_view.json", skipped); err != nil {
			t.Fatal(err)
		}
		if skipped.OwnOverlap.Slices != 0 {
			t.Fatalf("meta first %v: Read decoded the Overlap Analysis: %+v", first, skipped.OwnOverlap)
		}
		for _, parts := range []int{2, 3, 5} {
			r := model.NewRank("r")
			st, err := ReadFileWithOverlap(bytes.NewReader(data), int64(len(data)), "trace_view.json", r, parts)
			if err != nil {
				t.Fatal(err)
			}
			if st.Parts < 2 {
				t.Fatalf("meta first %v, %d parts: read as %d", first, parts, st.Parts)
			}
			if r.OwnOverlap != whole.OwnOverlap {
				t.Fatalf("meta first %v, %d parts: %+v, whole %+v", first, parts, r.OwnOverlap, whole.OwnOverlap)
			}
		}
	}
}

// Plane tasks whose args lost their transport type, and a task type with
// a raw control character, are named alike read whole or in parts,
// whichever metadata order: in a later part the HCCL process is not known
// when their args are read, and the names are another interner's.
func TestSplitNamesPlaneTasksWithoutTransport(t *testing.T) {
	for _, first := range []bool{false, true} {
		s, ok := tracegen.Lookup("ep-fc1")
		if !ok {
			t.Fatal("no scenario ep-fc1")
		}
		s.Ranks, s.Layers, s.Steps = 2, 3, 4
		s.DeviceMetaFirst = first
		var b bytes.Buffer
		if _, err := tracegen.WriteTrace(&b, s, 0); err != nil {
			t.Fatal(err)
		}
		// every fourth plane task's key damaged, and every seventh
		// written without the space after its colon (valid)
		parts := bytes.Split(b.Bytes(), []byte(`"transport type": "`))
		var d bytes.Buffer
		want := 0
		for i, p := range parts {
			d.Write(p)
			switch {
			case i == len(parts)-1:
			case i%4 == 1:
				d.WriteString(`"transport pype": "`)
				want++
			case i%7 == 2:
				d.WriteString(`"transport type":"`)
			default:
				d.WriteString(`"transport type": "`)
			}
		}
		if want == 0 {
			t.Fatal("no plane tasks")
		}
		// and a task type with a raw control character (named), then one
		// written escaped (not)
		data := bytes.Replace(d.Bytes(), []byte(`"Task Type": "AI_CORE"`), []byte("\"Task Type\": \"AI_COR\x05\""), 1)
		k := bytes.LastIndex(data, []byte(`"Task Type": "AI_VECTOR_CORE"`))
		data = append(data[:k:k], append([]byte(`"Task Type": "AI_VECTOR_COR\u0005"`), data[k+len(`"Task Type": "AI_VECTOR_CORE"`):]...)...)
		d.Reset()
		d.Write(data)
		r := model.NewRank("r")
		if _, err := Read(bytes.NewReader(d.Bytes()), "trace_view.json", r); err != nil {
			t.Fatal(err)
		}
		msg := fmt.Sprintf("%d HCCL plane task(s) (on \"Plane\" threads) have no \"transport type\" in their args", want)
		ctrl := `1 device task or collective name(s) or task type(s) hold a control character, which no JSON string may hold unescaped (first: "AI_COR\x05")`
		for _, m := range []string{msg, ctrl} {
			found := false
			for _, w := range r.Warnings {
				found = found || strings.HasPrefix(w.Message, m)
			}
			if !found {
				t.Fatalf("metafirst=%v: want %q, got %v", first, m, r.Warnings)
			}
		}
		for _, n := range []int{2, 3, 5} {
			checkSplit(t, d.Bytes(), n)
		}
	}
}
