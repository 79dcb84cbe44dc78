package summary

import (
	"bytes"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/npuprof/npuprof/internal/bench/benchdata"
	"github.com/npuprof/npuprof/internal/tracegen"
)

// The summary readers' benchmarks read the kernel_details.csv and
// communication.json of the cached bench ranks (NPUPROF_BENCH_SIZES, e.g.
// 200MB: a 35.8 MB kernel_details.csv and a 25.6 MB communication.json),
// or, without it, those of a small generated rank. Files are read into
// memory first: the numbers are the readers' own (MB/s of the file, and
// cpu-MB/s including the GC's work on other cores).

var (
	smallRankOnce sync.Once
	smallRankDir  string
	smallRankErr  error
)

// smallRank generates a ~4 MB-trace rank of the bench scenario once per
// process (about 0.7 MB of kernel_details.csv, 0.5 MB of
// communication.json).
func smallRank(b *testing.B) string {
	smallRankOnce.Do(func() {
		s, _ := tracegen.Lookup(benchdata.Scenario)
		s.CommJSON = true
		s, smallRankErr = tracegen.SizedScenario(s, 4e6)
		if smallRankErr != nil {
			return
		}
		smallRankDir, smallRankErr = os.MkdirTemp("", "npuprof-summary-bench")
		if smallRankErr != nil {
			return
		}
		_, smallRankErr = tracegen.GenerateRank(smallRankDir, s, 0)
	})
	if smallRankErr != nil {
		b.Fatal(smallRankErr)
	}
	m, err := filepath.Glob(filepath.Join(smallRankDir, "*_ascend_pt"))
	if err != nil || len(m) != 1 {
		b.Fatalf("%s: expected one *_ascend_pt folder, found %v", smallRankDir, m)
	}
	return m[0]
}

// benchFiles calls run once per input: (sub-benchmark name, file data).
func benchFiles(b *testing.B, name string, run func(b *testing.B, data []byte)) {
	sizes, err := benchdata.Sizes()
	if err != nil {
		b.Fatal(err)
	}
	type input struct{ name, dir string }
	var ins []input
	if len(sizes) == 0 {
		ins = append(ins, input{"small", smallRank(b)})
	}
	for _, sz := range sizes {
		ins = append(ins, input{sz.Name, benchdata.RankDir(b, sz)})
	}
	for _, in := range ins {
		data, err := os.ReadFile(filepath.Join(in.dir, tracegen.OutputDir, name))
		if err != nil {
			b.Fatal(err)
		}
		b.Run(in.name, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			cpu0 := benchdata.CPUTime()
			run(b, data)
			benchdata.ReportCPU(b, int64(len(data)), cpu0)
		})
	}
}

func BenchmarkReadKernelDetails(b *testing.B) {
	benchFiles(b, "kernel_details.csv", func(b *testing.B, data []byte) {
		for b.Loop() {
			rows := 0
			issues, err := ReadKernelDetails(bytes.NewReader(data), "kernel_details.csv", func(*KernelRow) { rows++ })
			if err != nil || issues.Skipped != 0 || rows == 0 {
				b.Fatalf("%d rows, %d skipped, %v", rows, issues.Skipped, err)
			}
		}
	})
}

func BenchmarkReadCommunication(b *testing.B) {
	benchFiles(b, "communication.json", func(b *testing.B, data []byte) {
		for b.Loop() {
			ops, err := ReadCommunication(bytes.NewReader(data), "communication.json")
			if err != nil || len(ops) == 0 {
				b.Fatalf("%d ops, %v", len(ops), err)
			}
		}
	})
}
