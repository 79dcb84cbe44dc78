package jsonbench

import (
	"bufio"
	"encoding/json"
	"io"
	"os"
	"runtime"
	"testing"

	"github.com/bytedance/sonic"
	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/minio/simdjson-go"

	"github.com/npuprof/npuprof/internal/bench/benchdata"
	"github.com/npuprof/npuprof/internal/parser/model"
	"github.com/npuprof/npuprof/internal/parser/timeparse"
	"github.com/npuprof/npuprof/internal/parser/traceview"
)

// tally is what every candidate computes: X events and their total
// duration in ns.
type tally struct {
	x   int64
	dur int64
}

func (t *tally) add(ph string, dur []byte) {
	if ph != "X" {
		return
	}
	t.x++
	if ns, ok := timeparse.MicrosToNanos(dur); ok {
		t.dur += ns
	}
}

// event is the struct the decoders fill.
type event struct {
	Ph   string          `json:"ph"`
	Name string          `json:"name"`
	Pid  json.RawMessage `json:"pid"`
	Tid  json.RawMessage `json:"tid"`
	Ts   json.RawMessage `json:"ts"`
	Dur  json.RawMessage `json:"dur"`
	Cat  string          `json:"cat"`
	Args struct {
		TaskType string          `json:"Task Type"`
		Stream   json.RawMessage `json:"Physic Stream Id"`
		ModelID  json.RawMessage `json:"Model Id"`
	} `json:"args"`
}

func open(tb testing.TB, path string) (*os.File, io.Reader) {
	f, err := os.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	return f, bufio.NewReaderSize(f, 1<<20)
}

// encoding/json: a streaming Decoder, one struct per array element.
func readEncodingJSON(tb testing.TB, path string) tally {
	f, r := open(tb, path)
	defer f.Close()
	dec := json.NewDecoder(r)
	if _, err := dec.Token(); err != nil {
		tb.Fatal(err)
	}
	var t tally
	for dec.More() {
		var e event
		if err := dec.Decode(&e); err != nil {
			tb.Fatal(err)
		}
		t.add(e.Ph, e.Dur)
	}
	return t
}

// json/v2 (github.com/go-json-experiment/json, encoding/json/v2 under
// GOEXPERIMENT=jsonv2): UnmarshalDecode per element from a jsontext.Decoder.
func readJSONv2(tb testing.TB, path string) tally {
	f, r := open(tb, path)
	defer f.Close()
	dec := jsontext.NewDecoder(r)
	if _, err := dec.ReadToken(); err != nil {
		tb.Fatal(err)
	}
	var t tally
	for dec.PeekKind() != ']' {
		var e event
		if err := jsonv2.UnmarshalDecode(dec, &e); err != nil {
			tb.Fatal(err)
		}
		t.add(e.Ph, e.Dur)
	}
	return t
}

// jsontext tokens: the low-level streaming tokenizer, fields picked by hand.
func readJSONText(tb testing.TB, path string) tally {
	f, r := open(tb, path)
	defer f.Close()
	dec := jsontext.NewDecoder(r)
	if _, err := dec.ReadToken(); err != nil {
		tb.Fatal(err)
	}
	var t tally
	var ph string
	var dur []byte
	for dec.PeekKind() != ']' {
		if _, err := dec.ReadToken(); err != nil { // '{'
			tb.Fatal(err)
		}
		ph, dur = "", dur[:0]
		for dec.PeekKind() != '}' {
			k, err := dec.ReadToken()
			if err != nil {
				tb.Fatal(err)
			}
			switch k.String() {
			case "ph":
				v, _ := dec.ReadToken()
				ph = v.String()
			case "dur":
				v, _ := dec.ReadValue()
				dur = append(dur, v...)
			case "name", "pid", "tid", "ts", "cat":
				if _, err := dec.ReadValue(); err != nil {
					tb.Fatal(err)
				}
			case "args":
				if dec.PeekKind() != '{' {
					dec.SkipValue()
					continue
				}
				dec.ReadToken()
				for dec.PeekKind() != '}' {
					ak, _ := dec.ReadToken()
					switch ak.String() {
					case "Task Type", "Physic Stream Id", "Model Id":
						dec.ReadValue()
					default:
						dec.SkipValue()
					}
				}
				dec.ReadToken()
			default:
				if err := dec.SkipValue(); err != nil {
					tb.Fatal(err)
				}
			}
		}
		dec.ReadToken() // '}'
		t.add(ph, dur)
	}
	return t
}

// sonic: bytedance's JIT decoder. It has no token-level streaming API for
// the elements of one huge array: the whole array is decoded into a slice.
func readSonic(tb testing.TB, path string) tally {
	f, r := open(tb, path)
	defer f.Close()
	var evs []event
	if err := sonic.ConfigDefault.NewDecoder(r).Decode(&evs); err != nil {
		tb.Fatal(err)
	}
	var t tally
	for i := range evs {
		t.add(evs[i].Ph, evs[i].Dur)
	}
	return t
}

// simdjson-go: SIMD parsing of a whole document held in memory (it streams
// only newline-delimited JSON, which trace_view.json is not).
func readSimdJSON(tb testing.TB, path string) tally {
	data, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	pj, err := simdjson.Parse(data, nil)
	if err != nil {
		tb.Fatal(err)
	}
	iter := pj.Iter()
	iter.Advance()
	_, root, err := iter.Root(nil)
	if err != nil {
		tb.Fatal(err)
	}
	arr, err := root.Array(nil)
	if err != nil {
		tb.Fatal(err)
	}
	var t tally
	var obj *simdjson.Object
	var elem *simdjson.Element
	ai := arr.Iter()
	var durBuf []byte
	for ai.Advance() != simdjson.TypeNone {
		obj, err = ai.Object(obj)
		if err != nil {
			tb.Fatal(err)
		}
		var ph string
		durBuf = durBuf[:0]
		for _, k := range []string{"ph", "name", "pid", "tid", "ts", "dur", "cat", "args"} {
			elem = obj.FindKey(k, elem)
			if elem == nil {
				continue
			}
			switch k {
			case "ph":
				ph, _ = elem.Iter.String()
			case "dur":
				if f, err := elem.Iter.Float(); err == nil {
					durBuf = appendFloat(durBuf, f)
				}
			case "args":
				if a, err := elem.Iter.Object(nil); err == nil {
					for _, ak := range []string{"Task Type", "Physic Stream Id", "Model Id"} {
						a.FindKey(ak, nil)
					}
				}
			}
		}
		t.add(ph, durBuf)
	}
	return t
}

// the hand-written reader: npuprof's internal/parser/traceview (which also builds
// the model, so it does more than the others).
func readTraceview(tb testing.TB, path string) tally {
	f, r := open(tb, path)
	defer f.Close()
	rank := model.NewRank(path)
	st, err := traceview.Read(r, path, rank)
	if err != nil {
		tb.Fatal(err)
	}
	return tally{x: st.Events}
}

var candidates = []struct {
	name string
	read func(testing.TB, string) tally
}{
	{"traceview", readTraceview},
	{"encoding-json", readEncodingJSON},
	{"jsonv2", readJSONv2},
	{"jsontext-tokens", readJSONText},
	{"sonic", readSonic},
	{"simdjson-go", readSimdJSON},
}

func sizes(tb testing.TB) []benchdata.Size {
	s, err := benchdata.Sizes()
	if err != nil {
		tb.Fatal(err)
	}
	if len(s) == 0 {
		s = []benchdata.Size{{Name: "20MB", Bytes: 20e6}}
	}
	return s
}

func BenchmarkReaders(b *testing.B) {
	for _, sz := range sizes(b) {
		path := benchdata.TraceFile(b, sz)
		st, err := os.Stat(path)
		if err != nil {
			b.Fatal(err)
		}
		for _, c := range candidates {
			if c.name == "simdjson-go" && !simdjson.SupportedCPU() {
				continue
			}
			b.Run(sz.Name+"/"+c.name, func(b *testing.B) {
				b.SetBytes(st.Size())
				b.ReportAllocs()
				runtime.GC()
				var peak peakHeap
				peak.start()
				cpu0 := benchdata.CPUTime()
				for b.Loop() {
					c.read(b, path)
				}
				benchdata.ReportCPU(b, st.Size(), cpu0)
				b.ReportMetric(float64(peak.stop())/(1<<20), "peak-heap-MiB")
			})
		}
	}
}

// All candidates see the same events.
func TestCandidatesAgree(t *testing.T) {
	sz := sizes(t)[0]
	if sz.Bytes > 50e6 {
		sz = benchdata.Size{Name: "20MB", Bytes: 20e6}
	}
	path := benchdata.TraceFile(t, sz)
	var want tally
	for _, c := range candidates[1:] {
		if c.name == "simdjson-go" && !simdjson.SupportedCPU() {
			continue
		}
		got := c.read(t, path)
		if want.x == 0 {
			want = got
		}
		if got != want {
			t.Errorf("%s: %d X events, %d ns; encoding/json: %d, %d", c.name, got.x, got.dur, want.x, want.dur)
		}
	}
	if want.x == 0 {
		t.Fatal("no X events")
	}
}
