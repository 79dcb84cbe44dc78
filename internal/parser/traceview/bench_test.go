package traceview

import (
	"bufio"
	"bytes"
	"os"
	"runtime"
	"testing"
	"time"

	"github.com/npuprof/npuprof/internal/bench/benchdata"
	"github.com/npuprof/npuprof/internal/bench/walkref"
	"github.com/npuprof/npuprof/internal/parser/model"
)

// BenchmarkRead measures the trace reader alone (MB/s via SetBytes) on the
// in-memory trace, or on cached files of NPUPROF_BENCH_SIZES.
func BenchmarkRead(b *testing.B) {
	sizes, err := benchdata.Sizes()
	if err != nil {
		b.Fatal(err)
	}
	if len(sizes) == 0 {
		data := benchdata.SmallTrace(b)
		b.Run("mem-4MB", func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				r := model.NewRank("bench")
				if _, err := Read(bytes.NewReader(data), "bench", r); err != nil {
					b.Fatal(err)
				}
			}
		})
		return
	}
	for _, sz := range sizes {
		p := benchdata.TraceFile(b, sz)
		st, err := os.Stat(p)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(sz.Name, func(b *testing.B) {
			b.SetBytes(st.Size())
			b.ReportAllocs()
			cpu0 := benchdata.CPUTime()
			for b.Loop() {
				f, err := os.Open(p)
				if err != nil {
					b.Fatal(err)
				}
				r := model.NewRank(p)
				_, err = Read(bufio.NewReaderSize(f, 1), p, r)
				f.Close()
				if err != nil {
					b.Fatal(err)
				}
			}
			benchdata.ReportCPU(b, st.Size(), cpu0)
		})
	}
}

// BenchmarkWalk is the floor the reader is compared with: a loop that only
// walks the bytes (string-aware) and counts top-level events, reading the
// same blocks.
func BenchmarkWalk(b *testing.B) {
	sizes, _ := benchdata.Sizes()
	for _, sz := range sizes {
		p := benchdata.TraceFile(b, sz)
		st, _ := os.Stat(p)
		b.Run(sz.Name, func(b *testing.B) {
			b.SetBytes(st.Size())
			cpu0 := benchdata.CPUTime()
			for b.Loop() {
				f, err := os.Open(p)
				if err != nil {
					b.Fatal(err)
				}
				events, err := walkref.Events(f)
				f.Close()
				if err != nil || events == 0 {
					b.Fatalf("walk %s: %d events, %v", p, events, err)
				}
			}
			benchdata.ReportCPU(b, st.Size(), cpu0)
		})
	}
}

// BenchmarkReadFile is BenchmarkRead with the file read in GOMAXPROCS
// parts at once (ReadFile, as the CLI does for a single rank); wall-clock
// MB/s grows with the CPUs, cpu-MB/s shows the cost of splitting.
func BenchmarkReadFile(b *testing.B) {
	sizes, err := benchdata.Sizes()
	if err != nil {
		b.Fatal(err)
	}
	if len(sizes) == 0 {
		b.Skip("set NPUPROF_BENCH_SIZES (e.g. 200MB) or run `make bench`")
	}
	parts := runtime.GOMAXPROCS(0)
	for _, sz := range sizes {
		p := benchdata.TraceFile(b, sz)
		st, err := os.Stat(p)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(sz.Name, func(b *testing.B) {
			b.SetBytes(st.Size())
			b.ReportAllocs()
			cpu0 := benchdata.CPUTime()
			for b.Loop() {
				f, err := os.Open(p)
				if err != nil {
					b.Fatal(err)
				}
				r := model.NewRank(p)
				s, err := ReadFile(f, st.Size(), p, r, parts)
				f.Close()
				if err != nil {
					b.Fatal(err)
				}
				if s.Parts != parts {
					b.Fatalf("%d parts joined, want %d", s.Parts, parts)
				}
			}
			benchdata.ReportCPU(b, st.Size(), cpu0)
		})
	}
}

// BenchmarkBuild measures what runs on one CPU after the parts of a split
// file are read: absorbing the later parts and building the model
// (joinParts), on the cached files of NPUPROF_BENCH_SIZES read in
// GOMAXPROCS parts (at least 2). The parts are read outside the timer.
func BenchmarkBuild(b *testing.B) {
	sizes, err := benchdata.Sizes()
	if err != nil {
		b.Fatal(err)
	}
	if len(sizes) == 0 {
		b.Skip("set NPUPROF_BENCH_SIZES (e.g. 200MB) or run `make bench`")
	}
	parts := max(2, runtime.GOMAXPROCS(0))
	for _, sz := range sizes {
		p := benchdata.TraceFile(b, sz)
		st, err := os.Stat(p)
		if err != nil {
			b.Fatal(err)
		}
		f, err := os.Open(p)
		if err != nil {
			b.Fatal(err)
		}
		var cuts []int64
		for k := 1; k < parts; k++ {
			cuts = append(cuts, findBoundary(f, st.Size()*int64(k)/int64(parts), st.Size()))
		}
		b.Run(sz.Name, func(b *testing.B) {
			b.ReportAllocs()
			var cpu time.Duration
			for b.Loop() {
				b.StopTimer()
				r := model.NewRank(p)
				rds, err := readParts(f, st.Size(), p, r, cuts, false)
				if err != nil || len(rds) != parts {
					b.Fatalf("%d parts joined, want %d (%v)", len(rds), parts, err)
				}
				runtime.GC()
				b.StartTimer()
				cpu0 := benchdata.CPUTime()
				joinParts(rds, p, r)
				cpu += benchdata.CPUTime() - cpu0
			}
			// the process's CPU time (GC included): the wall time of a
			// loaded machine includes waiting for a CPU
			b.ReportMetric(cpu.Seconds()*1e3/float64(b.N), "cpu-ms/op")
		})
		f.Close()
	}
}
