package traceview

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/npuprof/npuprof/internal/parser/model"
	"github.com/npuprof/npuprof/internal/tracegen"
)

// TestReadFileMapped: a plain file read through mapped windows (here one
// page each, so nearly every event crosses a window, and an event larger
// than a window makes it grow) gives exactly what Read gives, in one part
// or several, whole or truncated.
func TestReadFileMapped(t *testing.T) {
	if !canMap {
		t.Skip("files are mapped on Linux only")
	}
	defer func(w int, m int64) { mapWindow, MinSplitBytes = w, m }(mapWindow, MinSplitBytes)
	mapWindow, MinSplitBytes = pageSize, 0
	s, _ := tracegen.Lookup("ep-fc1-cumsum-steps")
	s.Ranks, s.Layers, s.Steps = 2, 3, 3
	s.DeviceMetaFirst = true
	var b bytes.Buffer
	if _, err := tracegen.WriteTrace(&b, s, 0); err != nil {
		t.Fatal(err)
	}
	// one event far larger than a window
	big := `{"ph": "X", "name": "aten::big", "pid": 1, "tid": 1, "ts": "5.000", "dur": 1, "cat": "cpu_op", "args": {"Call stack": "` + strings.Repeat("f;", 3*pageSize) + `"}}, `
	data := append([]byte("["+big), b.Bytes()[1:]...)
	dir := t.TempDir()
	for _, cut := range []int{len(data), len(data) * 2 / 3, len(data)/2 + 7} {
		p := filepath.Join(dir, fmt.Sprintf("trace-%d.json", cut))
		if err := os.WriteFile(p, data[:cut], 0o644); err != nil {
			t.Fatal(err)
		}
		want := model.NewRank("r")
		wst, werr := Read(bytes.NewReader(data[:cut]), "trace_view.json", want)
		for _, parts := range []int{1, 2, 3} {
			f, err := os.Open(p)
			if err != nil {
				t.Fatal(err)
			}
			got := model.NewRank("r")
			gst, gerr := ReadFile(f, int64(cut), "trace_view.json", got, parts)
			f.Close()
			gst.Parts = wst.Parts
			if fmt.Sprint(werr) != fmt.Sprint(gerr) || wst != gst {
				t.Fatalf("cut %d, %d parts: Read %v %+v, mapped %v %+v", cut, parts, werr, wst, gerr, gst)
			}
			if werr == nil && !equalRanks(want, got) {
				t.Fatalf("cut %d, %d parts: mapped read built a different model", cut, parts)
			}
		}
	}
}

// TestReadFileMappedShrinks: a file that shrinks under the mapping (the
// profiler still writing, a user cleaning up) is a read error naming the
// file, not a crash.
func TestReadFileMappedShrinks(t *testing.T) {
	if !canMap {
		t.Skip("files are mapped on Linux only")
	}
	defer func(w int) { mapWindow = w }(mapWindow)
	mapWindow = pageSize
	var b bytes.Buffer
	s, _ := tracegen.Lookup("clean")
	s.Ranks, s.Layers, s.Steps = 2, 2, 2
	if _, err := tracegen.WriteTrace(&b, s, 0); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "trace_view.json")
	if err := os.WriteFile(p, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := os.Truncate(p, int64(b.Len()/3)); err != nil {
		t.Fatal(err)
	}
	_, err = ReadFile(f, int64(b.Len()), "trace_view.json", model.NewRank("r"), 1)
	if err == nil || !strings.Contains(err.Error(), "trace_view.json: read error") || !strings.Contains(err.Error(), "changed") {
		t.Fatalf("got %v, want a read error saying the file changed", err)
	}
	runtime.GC()
}
