package summary

import (
	"bytes"
	"encoding/json"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/npuprof/npuprof/internal/parser/model"
	"github.com/npuprof/npuprof/internal/testutil"
)

// Fuzz targets for every summary reader. Each is seeded from the
// generator's output, the broken-input corpus (testdata/broken) and a few
// hand-made edge cases; crashers live in testdata/fuzz/<Target>/, named
// after what they break.

// checkIssues asserts RowIssues is consistent: at most 5 line numbers, in
// increasing order, after the header, and one reason per skipped row.
func checkIssues(t *testing.T, ri RowIssues) {
	t.Helper()
	if len(ri.Lines) > 5 || ri.Skipped < len(ri.Lines) {
		t.Fatalf("issues: %d skipped, lines %v", ri.Skipped, ri.Lines)
	}
	if !slices.IsSorted(ri.Lines) || (len(ri.Lines) > 0 && ri.Lines[0] < 2) {
		t.Fatalf("issue lines %v not increasing after the header", ri.Lines)
	}
	n := 0
	for _, c := range ri.Reasons {
		n += c
	}
	if n != ri.Skipped {
		t.Fatalf("reasons %v do not add up to %d skipped rows", ri.Reasons, ri.Skipped)
	}
}

func FuzzReadKernelDetails(f *testing.F) {
	f.Add([]byte("Name,Type,Accelerator Core,Start Time(us),Duration(us)\r\na,A,AI_CORE,100.5\t,2\r\nb,B,AI_CORE,N/A,2\r\nc,C,AI_CORE,101\r\n"))
	f.Add([]byte("Step Id,Model ID,Task ID,Stream ID,Name,Type,OP State,Accelerator Core,Start Time(us),Duration(us),Wait Time(us),Block Dim,Mix Block Dim,HF32 Eligible,Input Shapes\n50,4294967295,1,2,\"a,b\",T,N/A,AI_CORE,\"1736408883704643.212\t\",53.741,0,1,0,NO,\"\"\"32,3;1\"\"\"\n"))
	f.Add([]byte("op name,start_time (us),task duration(us)\nx,1,2\n"))
	f.Add([]byte("Name,Start Time(us),Duration(us)\nx,9223372036854775.807,9223372036854775.807\n"))
	testutil.AddGeneratedSeeds(f, "kernel_details.csv")
	testutil.AddSeedFiles(f, "testdata/broken/*/*.csv", "testdata/broken/*/*/*.csv", "testdata/broken/*/*/*/*.csv")
	f.Fuzz(func(t *testing.T, data []byte) {
		defer testutil.Watchdog(data)()
		issues, err := ReadKernelDetails(bytes.NewReader(data), "kernel_details.csv", func(k *KernelRow) {
			if k.Dur < 0 || k.Start+k.Dur < k.Start {
				t.Fatalf("row at line %d: start %d dur %d", k.Line, k.Start, k.Dur)
			}
			if k.Line < 2 {
				t.Fatalf("row at line %d: the header is line 1", k.Line)
			}
		})
		if err == nil {
			checkIssues(t, issues)
		}
		// the same rows and issues as the reader on encoding/csv
		sameKernelRows(t, data, "kernel_details.csv")
	})
}

func FuzzReadStepTraceTime(f *testing.F) {
	f.Add([]byte("Step,Computing,Communication(Not Overlapped),Overlapped,Communication,Free,Stage,Bubble,Communication(Not Overlapped and Exclude Receive),Preparing\n50,8873.756,1,2,3,4,5,6,7,8\n,NaN,1,2,3,4,5,6,7,8\n"))
	testutil.AddGeneratedSeeds(f, "step_trace_time.csv")
	testutil.AddSeedFiles(f, "testdata/broken/*/*.csv", "testdata/broken/*/*/*.csv", "testdata/broken/*/*/*/*.csv")
	f.Fuzz(func(t *testing.T, data []byte) {
		defer testutil.Watchdog(data)()
		rows, issues, err := ReadStepTraceTime(bytes.NewReader(data), "step_trace_time.csv")
		if err != nil {
			return
		}
		checkIssues(t, issues)
		for _, r := range rows {
			for _, v := range []float64{r.Computing, r.CommunicationNotOverlapped, r.Overlapped, r.Communication, r.Free, r.Stage, r.Bubble, r.Preparing} {
				if math.IsNaN(v) || math.IsInf(v, 0) {
					t.Fatalf("step %q: non-finite value in %+v", r.Step, r)
				}
			}
		}
	})
}

func FuzzReadProfilerInfo(f *testing.F) {
	f.Add([]byte(`{"config":{"common_config":{"schedule":null},"experimental_config":{"_profiler_level":"Level1","_export_type":["text"]}},"rank_id":99999999999999999999}`))
	testutil.AddGeneratedSeeds(f, "profiler_info_*.json")
	testutil.AddSeedFiles(f, "testdata/broken/*/profiler_info*.json", "testdata/broken/*/*/profiler_info*.json")
	f.Fuzz(func(t *testing.T, data []byte) {
		defer testutil.Watchdog(data)()
		info, err := ReadProfilerInfo(bytes.NewReader(data), "profiler_info_0.json")
		if err == nil && (info.Rank < -1 || info.Rank >= 1<<20) {
			t.Fatalf("rank %d out of range", info.Rank)
		}
	})
}

func FuzzReadProfilerMetadata(f *testing.F) {
	f.Add([]byte(`{"ENV_VARIABLES":{"HCCL_OP_EXPANSION_MODE":"AIV","X":{"a":[1,2]}},"parallel_group_info":"{\"group_name_1\":{\"group_name\":\"tp\",\"group_rank\":0,\"global_ranks\":[0,1]}}"}`))
	testutil.AddGeneratedSeeds(f, "profiler_metadata.json")
	testutil.AddSeedFiles(f, "testdata/broken/*/profiler_metadata.json", "testdata/broken/*/*/profiler_metadata.json")
	f.Fuzz(func(t *testing.T, data []byte) {
		defer testutil.Watchdog(data)()
		md, err := ReadProfilerMetadata(bytes.NewReader(data), "profiler_metadata.json")
		if err != nil {
			return
		}
		if !slices.IsSortedFunc(md.Groups, func(a, b model.Group) int { return strings.Compare(a.Comm, b.Comm) }) {
			t.Fatalf("groups not sorted by communicator: %+v", md.Groups)
		}
		for _, g := range md.Groups {
			if len(g.HashSuffix) > 3 || g.Hash == "" {
				t.Fatalf("group %+v: bad hash", g)
			}
		}
	})
}

func FuzzReadCommunication(f *testing.F) {
	f.Add([]byte(`{"step50":{"collective":{"hcom_allReduce__586_0_1@123586":{"Communication Time Info":{"Start Timestamp(us)":"1736408883700020.5","Elapse Time(ms)":0.01}},"Total Op Info":{}}}}`))
	testutil.AddGeneratedSeeds(f, "communication.json")
	testutil.AddSeedFiles(f, "testdata/broken/*/communication.json", "testdata/broken/*/*/communication.json", "testdata/broken/*/*/*/communication.json")
	f.Fuzz(func(t *testing.T, data []byte) {
		defer testutil.Watchdog(data)()
		ops, err := ReadCommunication(bytes.NewReader(data), "communication.json")
		if err != nil && len(ops) == 0 {
			return
		}
		for _, o := range ops {
			for _, v := range []float64{o.ElapseMs, o.TransitMs, o.WaitMs, o.SyncMs, o.IdleMs} {
				if math.IsNaN(v) || math.IsInf(v, 0) {
					t.Fatalf("op %+v: non-finite time", o)
				}
			}
			// an op that fails validation is refused (and the error says
			// so), never returned with a different number: what is
			// returned adds up
			if o.TransitMs != 0 && o.WaitMs != 0 && o.IdleMs != 0 {
				if d := math.Abs(o.TransitMs + o.WaitMs + o.IdleMs - o.ElapseMs); d > 5e-6+1e-6*math.Abs(o.ElapseMs) {
					t.Fatalf("op %+v returned though its times disagree by %g", o, d)
				}
			}
		}
		for i := 1; i < len(ops); i++ {
			a, b := ops[i-1], ops[i]
			if a.Step > b.Step || (a.Step == b.Step && a.Kind > b.Kind) {
				t.Fatalf("ops not in stable (step, kind) order: %+v then %+v", a, b)
			}
		}
		// the same ops as a full decode with encoding/json, whenever that
		// succeeds on valid UTF-8 (encoding/json replaces invalid bytes),
		// no op was refused, and no key repeats in the objects the reader
		// walks (encoding/json replaces a repeated step or kind wholesale
		// and merges a repeated "Communication Time Info"; the reader,
		// streaming, keeps ops from both and the last time info; real
		// files repeat no key); and the same in small blocks
		small, err2 := readCommBlocks(data, 7)
		if (err == nil) != (err2 == nil) || !reflect.DeepEqual(ops, small) {
			t.Fatalf("read in blocks of 7: %v, %v; whole: %v, %v", small, err2, ops, err)
		}
		if err != nil || !utf8.Valid(data) {
			return
		}
		want, jerr := jsonCommunication(data)
		if jerr == nil && !keysRepeat(data, 4) && !reflect.DeepEqual(want, ops) && (len(want) > 0 || len(ops) > 0) {
			t.Fatalf("encoding/json: %+v\nReadCommunication: %+v", want, ops)
		}
	})
}

// keysRepeat reports whether an object in the first levels of the JSON
// document has a key twice.
func keysRepeat(data []byte, levels int) bool {
	dec := json.NewDecoder(bytes.NewReader(data))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return false
	}
	seen := map[string]bool{}
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return false
		}
		ks, _ := k.(string)
		if seen[ks] {
			return true
		}
		seen[ks] = true
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return false
		}
		if levels > 1 && keysRepeat(raw, levels-1) {
			return true
		}
	}
	return false
}
