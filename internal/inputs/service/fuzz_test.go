package service

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/npuprof/npuprof/internal/parser/model"
	"github.com/npuprof/npuprof/internal/tracegen"
)

// FuzzReadCSV feeds any bytes to each table's reader: it never panics,
// its columns stay one length, and a per-DP cell names a row read.
func FuzzReadCSV(f *testing.F) {
	dir := f.TempDir()
	for i, sp := range []string{tracegen.ServiceMicros, tracegen.ServiceMillis, tracegen.ServiceDatetime} {
		sub := filepath.Join(dir, sp)
		if _, err := tracegen.GenerateService(sub, tracegen.ServiceScenarios()[1], sp); err != nil {
			f.Fatal(err)
		}
		for t, n := range []string{RequestCSV, BatchCSV, KVCacheCSV, ForwardCSV} {
			if b, err := os.ReadFile(filepath.Join(sub, n)); err == nil {
				f.Add(b, t)
				if len(b) > 40 {
					f.Add(b[:len(b)-i*3-5], t)
				}
			}
		}
	}
	f.Add([]byte(midBatch), 1)
	f.Add([]byte("name,start_time\n\"BatchSchedule,1\n"), 1)
	f.Fuzz(func(t *testing.T, data []byte, table int) {
		p := &model.ServiceProfile{}
		if table < 0 {
			table = -table
		}
		is, _ := scanCSV(bytes.NewReader(data), "fuzz.csv", newSink(p, table%4))
		if is.bad < 0 || (is.bad > 0) != (is.firstBadLine > 0) {
			t.Fatalf("issue %+v", is)
		}
		r := &p.Requests
		n := r.Len()
		if r.E2E.Len() != n || r.TTFT.Len() != n || r.QueueWait.Len() != n || len(r.RecvTokens) != n || len(r.ReplyTokens) != n || len(r.CacheHit) != n {
			t.Fatal("request columns differ in length")
		}
		b := &p.Batches
		n = b.Len()
		if len(b.Start) != n || len(b.Dur) != n || len(b.Size) != n || len(b.Prefill) != n || len(b.Decode) != n ||
			len(b.PrefillTokens) != n || len(b.DecodeTokens) != n || len(b.DP) != n || len(b.FreeBlocks) != n {
			t.Fatal("batch columns differ in length")
		}
		for _, e := range b.PerDP {
			if int(e.Row) >= n || e.Row < 0 {
				t.Fatalf("per-DP cell of row %d of %d", e.Row, n)
			}
		}
		k := &p.KV
		if len(k.Event) != k.Len() || len(k.Free) != k.Len() || len(k.Total) != k.Len() || len(k.Usage) != k.Len() {
			t.Fatal("kvcache columns differ in length")
		}
		fw := &p.Forwards
		if len(fw.Dur) != fw.Len() || len(fw.BatchSize) != fw.Len() || len(fw.DP) != fw.Len() {
			t.Fatal("forward columns differ in length")
		}
	})
}
