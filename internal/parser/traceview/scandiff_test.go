package traceview

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"github.com/npuprof/npuprof/internal/parser/timeparse"
	"math/rand"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"unsafe"

	"github.com/npuprof/npuprof/internal/parser/model"
	"github.com/npuprof/npuprof/internal/testutil"
	"github.com/npuprof/npuprof/internal/tracegen"
)

// The event scanner's fast paths (8-byte key recognition, skipping by
// words, digit groups, the id caches) must not change what it reads: these
// tests compare it with the frozen scanner of scanref_test.go event by
// event — every event field (the same bytes of the same buffer) and the
// returned index, including iMore and iBad.

// sameValue reports whether two values are the same slice of the same
// buffer with the same flags (a nil slice differs from an empty one).
func sameValue(a, b value) bool {
	return unsafe.SliceData(a.b) == unsafe.SliceData(b.b) && len(a.b) == len(b.b) &&
		a.str == b.str && a.esc == b.esc && a.set == b.set
}

func diffEvent(a, b *event) string {
	fields := []struct {
		n    string
		x, y value
	}{
		{"ph", a.phV, b.phV}, {"name", a.name, b.name}, {"cat", a.cat, b.cat},
		{"pid", a.pid, b.pid}, {"tid", a.tid, b.tid}, {"ts", a.ts, b.ts},
		{"dur", a.dur, b.dur}, {"id", a.id, b.id}, {"taskType", a.taskType, b.taskType},
		{"stream", a.stream, b.stream}, {"modelID", a.modelID, b.modelID},
		{"argName", a.argName, b.argName}, {"argLabels", a.argLabels, b.argLabels},
	}
	for _, f := range fields {
		if !sameValue(f.x, f.y) {
			return fmt.Sprintf("%s: ref %q %+v, fast %q %+v", f.n, f.x.b, f.x, f.y.b, f.y)
		}
	}
	if a.hasArgs != b.hasArgs || a.kind != b.kind || a.pidIdx != b.pidIdx {
		return fmt.Sprintf("hasArgs %v/%v kind %d/%d pidIdx %d/%d", a.hasArgs, b.hasArgs, a.kind, b.kind, a.pidIdx, b.pidIdx)
	}
	return ""
}

// checkScanSame parses data as the reader does, with the reference and the
// fast scanner side by side, each with its own reader that learns process
// kinds from the events (so the skipping paths run), and with no reader.
// It stops at the first event that is cut or not an object. It also
// parses the object at every '{' of data, and every event cut at a few
// points, without a reader. It returns the number of events compared.
func checkScanSame(t *testing.T, name string, data []byte) int {
	t.Helper()
	var syms1, syms2 model.Syms
	rd1 := newReader(newSource(bytes.NewReader(nil)), &syms1)
	rd2 := newReader(newSource(bytes.NewReader(nil)), &syms2)
	cmp := func(where string, b []byte, i int, rd1, rd2 *reader) (int, *event, *event) {
		var e1, e2 event
		n1 := parseEventRef(b, i, &e1, rd1)
		n2 := parseEvent(b, i, &e2, rd2)
		if n1 != n2 {
			t.Fatalf("%s: %s at %d: ref returns %d, fast %d (%.120q)", name, where, i, n1, n2, b[i:])
		}
		if d := diffEvent(&e1, &e2); d != "" && n1 >= 0 {
			t.Fatalf("%s: %s at %d: %s (%.160q)", name, where, i, d, b[i:])
		}
		return n1, &e1, &e2
	}
	n := 0
	i := 0
	for i < len(data) && data[i] != '[' {
		i++
	}
	i++
	for i < len(data) {
		c := data[i]
		if isSpace(c) || c == ',' {
			i++
			continue
		}
		if c != '{' {
			break
		}
		end, e1, e2 := cmp("event", data, i, rd1, rd2)
		cmp("event without reader", data, i, nil, nil)
		if end < 0 {
			break
		}
		// the same event cut short: both must ask for more, or both
		// find it malformed first
		for _, k := range []int{1, 2, 7, (end - i) / 2, end - i - 1} {
			if k > 0 && i+k < end {
				cmp("cut event", data[:i+k], i, nil, nil)
			}
		}
		rd1.event(e1)
		rd2.event(e2)
		n++
		i = end
	}
	if len(data) < 1<<16 {
		for j := range data {
			if data[j] == '{' {
				cmp("object", data, j, nil, nil)
			}
			// within a window, so that this stays linear
			w := data[:min(len(data), j+512)]
			if c := data[j]; c == '{' || c == '[' {
				if a, b := skipCompositeRef(w, j), skipComposite(w, j); a != b {
					t.Fatalf("%s: skipComposite at %d: ref %d, fast %d (%.120q)", name, j, a, b, data[j:])
				}
			}
			if a, b := skipRestRef(w, j), skipRest(w, j); a != b {
				t.Fatalf("%s: skipRest at %d: ref %d, fast %d (%.120q)", name, j, a, b, data[j:])
			}
		}
	}
	return n
}

func TestScanSameGenerated(t *testing.T) {
	for _, s := range tracegen.Scenarios() {
		s.Layers, s.Steps = 3, 3
		for _, first := range []bool{false, true} {
			s.DeviceMetaFirst = first
			var buf bytes.Buffer
			if _, err := tracegen.WriteTrace(&buf, s, 1); err != nil {
				t.Fatal(err)
			}
			name := fmt.Sprintf("%s metafirst=%v", s.Name, first)
			if n := checkScanSame(t, name, buf.Bytes()); n < 1000 {
				t.Fatalf("%s: only %d events compared", name, n)
			}
		}
	}
}

func TestScanSameSamples(t *testing.T) {
	dir := testutil.SamplesDir(t)
	var files []string
	for _, pat := range []string{"*/*/*/*/*/*/*/*/trace_view.json", "*/*/*/*/*/*/*/trace_view.json", "*/*/*/*/*/*/trace_view.json", "*/*/*/*/*/trace_view.json", "*/*/*/*/trace_view.json"} {
		m, _ := filepath.Glob(filepath.Join(dir, pat))
		files = append(files, m...)
	}
	if len(files) == 0 {
		t.Fatal("no trace_view.json among the samples")
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if n := checkScanSame(t, f, data); n == 0 {
			t.Fatalf("%s: no events compared", f)
		}
	}
}

func TestScanSameBroken(t *testing.T) {
	var files []string
	for _, pat := range []string{"*.json", "*/*.json", "*/*/*.json", "*/*/*/*.json"} {
		m, _ := filepath.Glob(filepath.Join("..", "..", "..", "testdata", "broken", pat))
		files = append(files, m...)
	}
	if len(files) == 0 {
		t.Fatal("no broken corpus")
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		checkScanSame(t, f, data)
	}
}

// TestScanSameMutations mutates a generated trace at random (bytes
// flipped, deleted, inserted or duplicated, spaces added) and compares the
// scanners on the result.
func TestScanSameMutations(t *testing.T) {
	s, _ := tracegen.Lookup("ep-fc1-cumsum-steps")
	s.Ranks, s.Layers, s.Steps, s.DeviceMetaFirst = 2, 2, 2, true
	var buf bytes.Buffer
	if _, err := tracegen.WriteTrace(&buf, s, 0); err != nil {
		t.Fatal(err)
	}
	orig := buf.Bytes()
	rng := rand.New(rand.NewSource(7))
	for round := range 300 {
		// a window of the trace, so every round is quick
		start := rng.Intn(len(orig) - 4096)
		data := append([]byte("["), orig[start:start+4096]...)
		for range 1 + rng.Intn(6) {
			data = mutate(rng, data)
		}
		checkScanSame(t, "mutation "+strconv.Itoa(round), data)
	}
}

var mutationBytes = []byte(`"\{}[],: 0123456789.-eE` + "\t\n\xff")

func mutate(rng *rand.Rand, b []byte) []byte {
	if len(b) < 2 {
		return append(b, '{')
	}
	p := rng.Intn(len(b))
	switch rng.Intn(5) {
	case 0:
		b[p] = mutationBytes[rng.Intn(len(mutationBytes))]
	case 1:
		b = append(b[:p], b[p+1:]...)
	case 2:
		b = append(b[:p], append([]byte{mutationBytes[rng.Intn(len(mutationBytes))]}, b[p:]...)...)
	case 3:
		n := min(1+rng.Intn(12), len(b)-p)
		b = append(b[:p+n], append(append([]byte(nil), b[p:p+n]...), b[p+n:]...)...)
	case 4:
		b = append(b[:p], append([]byte("  "), b[p:]...)...)
	}
	return b
}

// FuzzScanSame: on any input the fast scanner reads what the reference
// scanner reads.
func FuzzScanSame(f *testing.F) {
	f.Add([]byte(smallTrace))
	f.Add([]byte(`[{"name": "a", "pid": 1, "tid": 2, "ts": "1736410582431668.784", "dur": 3.5, "args": {"Model Id": 4294967295, "Task Type": "AI_CORE", "Physic Stream Id": 2, "Task Id": 139760, "Batch Id": 0, "Subtask Id": 4294967295, "connection_id": 199320}, "ph": "X"}]`))
	f.Add([]byte(`[{"ph": "M", "name": "process_name", "pid": 9, "tid": 0, "args": {"name": "HCCL"}}, {"name": "x", "pid": 9, "tid": 0, "ts": "1.5", "dur": 1, "args": {"a": [1, {"b": "}"}], "c": "\"]"}, "ph": "X"}]`))
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
		checkScanSame(t, "fuzz", data)
		// the number parsers on the first bytes
		for _, k := range []int{0, 3, 8, 9, 16, 17, 20, 21} {
			if k <= len(data) {
				checkNumbers(t, data[:k])
			}
		}
	})
}

func checkNumbers(t *testing.T, b []byte) {
	t.Helper()
	n1, ok1 := parseIntRef(b)
	n2, ok2 := parseInt(b)
	if n1 != n2 || ok1 != ok2 {
		t.Fatalf("parseInt(%q): ref %d %v, fast %d %v", b, n1, ok1, n2, ok2)
	}
	n1, ok1 = usToNsRef(b)
	n2, ok2 = usToNs(b)
	if n1 != n2 || ok1 != ok2 {
		t.Fatalf("usToNs(%q): ref %d %v, fast %d %v", b, n1, ok1, n2, ok2)
	}
}

func TestNumbersSame(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	digits := []byte("0123456789")
	odd := []byte("0123456789.-+e/:\x00\xff ")
	for range 200000 {
		n := rng.Intn(24)
		b := make([]byte, n)
		for j := range b {
			if rng.Intn(12) == 0 {
				b[j] = odd[rng.Intn(len(odd))]
			} else {
				b[j] = digits[rng.Intn(10)]
			}
		}
		checkNumbers(t, b)
	}
	for _, s := range []string{"1736410582431668.784", "3847.834", "17.908", "0.7", "4.0", "12345.678", "123456.78", "1.2345", "12.", ".125", "1.2.3", "-1.25", "+1.25", "1e.5", "00000.000", "99999.999", "4294967295", "-9223372036854775808", "9223372036854775807", "9223372036854775808", "18446744073709551615", "99999999", "00000000", "12345678.9", "1234567812345678", "12345678123456789"} {
		checkNumbers(t, []byte(s))
	}
	// every byte in every position of an 8-digit group
	base := []byte("31415926")
	for p := range 8 {
		for c := range 256 {
			b := append([]byte(nil), base...)
			b[p] = byte(c)
			v, ok := eightDigits(b)
			want, err := strconv.ParseUint(string(b), 10, 64)
			allDigits := err == nil && !bytes.ContainsAny(b, "+-")
			if ok != allDigits || (ok && v != want) {
				t.Fatalf("eightDigits(%q) = %d %v", b, v, ok)
			}
		}
	}
}

func TestKeyWords(t *testing.T) {
	for _, c := range []struct {
		got  uint64
		text string
	}{
		{colonSpace, ": "}, {commaSpace, ", "}, {kModelID, "Model Id"}, {kTaskTyp, "Task Typ"},
		{kTypeEnd, `e"`}, {kPhysicS, "Physic S"}, {kTreamID, "tream Id"}, {kTaskID, `Task Id"`},
		{kBatchID, "Batch Id"}, {kSubtask, "Subtask "}, {kIDq, `Id"`}, {kConnecti, "connecti"},
		{kOnIDq, `on_id"`},
	} {
		if c.got != word(c.text) {
			t.Errorf("word %q: %#x, want %#x", c.text, c.got, word(c.text))
		}
	}
	if binary.LittleEndian.Uint16([]byte(": ")) != colonSpace {
		t.Fatal("not little endian")
	}
}

// TestIDKey: a raw id's key holds its bytes exactly: packed little endian
// below 8 bytes, its first and last 8 from 8 to 16.
func TestIDKey(t *testing.T) {
	rng := rand.New(rand.NewSource(5))
	for range 2000 {
		b := make([]byte, rng.Intn(18), 24)
		rng.Read(b[:cap(b)])
		if rng.Intn(2) == 0 {
			b = b[:len(b):len(b)] // at the end of a buffer
		}
		k, ok := keyOf(b, false)
		if ok != (len(b) <= 16 && cap(b) >= 8) || (ok && k.n != int32(len(b))) {
			t.Fatalf("keyOf(%q): %+v %v", b, k, ok)
		}
		if !ok {
			continue
		}
		var want idKey
		want.n = int32(len(b))
		if len(b) >= 8 {
			want.a, want.z = binary.LittleEndian.Uint64(b), binary.LittleEndian.Uint64(b[len(b)-8:])
		} else {
			for j := len(b) - 1; j >= 0; j-- {
				want.a = want.a<<8 | uint64(b[j])
			}
		}
		if k != want {
			t.Fatalf("keyOf(%q) = %+v, want %+v", b, k, want)
		}
	}
}

// TestIDCache: pids and tids that collide in the caches, or differ only in
// being quoted, resolve as without a cache.
func TestIDCache(t *testing.T) {
	var syms model.Syms
	rd := newReader(newSource(bytes.NewReader(nil)), &syms)
	ref := newReader(newSource(bytes.NewReader(nil)), &syms)
	rng := rand.New(rand.NewSource(9))
	var ids [][]byte
	for j := range 200 {
		ids = append(ids, []byte(strconv.Itoa(rng.Intn(1<<30)*(j%3)+j)))
	}
	ids = append(ids, []byte(""), []byte("x"), []byte("12345678901234567"), []byte("1234567890123456"), []byte("-3"), []byte("3.0"))
	// in a read buffer, bytes follow an id (keyOf loads them, then masks
	// them off): the same ids followed by digits, at most end their buffer
	for _, id := range ids[:len(ids):len(ids)] {
		buf := append(append([]byte(nil), id...), "98765432, "...)
		ids = append(ids, buf[:len(id)])
	}
	for range 20000 {
		id := ids[rng.Intn(len(ids))]
		v := value{b: id, str: rng.Intn(2) == 0}
		if got, want := rd.pid(v), ref.pidOf(v); got != want {
			t.Fatalf("pid %q str %v: %d, want %d", id, v.str, got, want)
		}
		if got, want := rd.tid(v), ref.tidIndex(tidOf(v)); got != want {
			t.Fatalf("tid %q: %d, want %d", id, got, want)
		}
	}
}

// TestSkipRestFlatPath checks skipRest's vector fast path (the first '}'
// closes a flat object) against the frozen scanner on dense random inputs
// made of the bytes that decide it: quotes, backslashes and brackets.
func TestSkipRestFlatPath(t *testing.T) {
	const alphabet = `"\{}[]a :,`
	rng := rand.New(rand.NewSource(7))
	buf := make([]byte, 48)
	for n := 0; n < 200_000; n++ {
		b := buf[:rng.Intn(len(buf)+1)]
		for k := range b {
			b[k] = alphabet[rng.Intn(len(alphabet))]
		}
		for i := range b {
			if want, got := skipRestRef(b, i), skipRest(b, i); want != got {
				t.Fatalf("skipRest(%q, %d) = %d, the frozen scanner says %d", b, i, got, want)
			}
		}
	}
}

// TestNumbersEveryByte: the 16.3-digit ts and the 19-digit flow id fast
// paths, with every byte value at every position.
func TestNumbersEveryByte(t *testing.T) {
	for _, base := range []string{"1736410582431668.784", "1736410582431668784", "9223372036854775807", "9223372036854775.807"} {
		for p := range len(base) {
			for c := range 256 {
				b := []byte(base)
				b[p] = byte(c)
				checkNumbers(t, b)
			}
		}
	}
}

// TestFlowIDFromTS: a flow end whose id is the digits of its ts reuses
// ts; every other id is parsed, and an id out of range drops the flow.
func TestFlowIDFromTS(t *testing.T) {
	for _, c := range []struct{ ts, id string }{
		{"1736410582431668.784", "1736410582431668784"}, // torch_npu's flow end
		{"1736410582431668.784", "1736410582431668785"},
		{"1736410582431668.784", "1736410582431661784"},
		{"1736410582431668.784", "2736410582431668784"},
		{"1736410582431668.784", "148"},
		{"1736410582431668.78", "173641058243166878"},
		{"9999999999999999.999", "9999999999999999999"}, // ts wraps, id out of range
		{"9223372036854775.807", "9223372036854775807"},
		{"9223372036854775.808", "9223372036854775808"},
	} {
		var syms model.Syms
		rd := newReader(newSource(bytes.NewReader(nil)), &syms)
		ev := event{ts: value{b: []byte(c.ts), str: true}, id: value{b: []byte(c.id)},
			pid: value{b: []byte("1")}, tid: value{b: []byte("2")}}
		rd.flowEv(true, &ev)
		id, ok := parseInt([]byte(c.id))
		if _, tsOK := usToNs([]byte(c.ts)); !tsOK {
			ok = false
		}
		if got := rd.nFlows == 1; got != ok || (ok && rd.flowLast != id) {
			t.Errorf("ts %s id %s: kept %v id %d, want kept %v id %d", c.ts, c.id, got, rd.flowLast, ok, id)
		}
	}
}

// TestUsToNsOverflow: 16-digit timestamps at the int64 edge are exact or
// refused, as timeparse decides, never wrapped.
func TestUsToNsOverflow(t *testing.T) {
	for _, s := range []string{
		"9223372036854769.999", "9223372036854770.000", "9223372036854774.999", "9223372036854775.807", "9223372036854775.808",
		"9223372036854776.000", "9999999999999999.999", "9223372036854775", "9223372036854776",
		"9999999999999999", "9223372036854775.8", "1736410582431691.063",
	} {
		want, wok := timeparse.MicrosToNanos([]byte(s))
		got, ok := usToNs([]byte(s))
		if ok != wok || (ok && got != want) {
			t.Errorf("usToNs(%q) = %d, %v; timeparse says %d, %v", s, got, ok, want, wok)
		}
		if ok && got < 0 {
			t.Errorf("usToNs(%q) wrapped to %d", s, got)
		}
	}
}
