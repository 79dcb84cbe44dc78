package service

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"
)

// writeRequests writes a request.csv of n requests in the datetime
// spelling (vLLM's 41-character request ids) and returns its size.
func writeRequests(tb testing.TB, dir string, n int) int64 {
	tb.Helper()
	path := filepath.Join(dir, RequestCSV)
	f, err := os.Create(path)
	require.NoError(tb, err)
	w := bufio.NewWriterSize(f, 1<<20)
	fmt.Fprintln(w, "http_rid,start_datetime,recv_token_size,reply_token_size,execution_time(ms),queue_wait_time(ms),first_token_latency(ms),cache_hit_rate")
	for i := range n {
		us := i * 1250
		fmt.Fprintf(w, "chatcmpl-%032x,2025-11-20 %02d:%02d:%02d:%06d,%d,%d,%d.%03d,%d.%03d,%d.%03d,0.%d\n",
			uint64(i)*0x9e3779b97f4a7c15, 10+us/3_600_000_000, us/60_000_000%60, us/1_000_000%60, us%1_000_000,
			512+i%1024, 24+i%40, 3000+i%997, i%1000, i%50, i%997, 40+i%200, i%1000, i%10)
	}
	require.NoError(tb, w.Flush())
	require.NoError(tb, f.Close())
	st, err := os.Stat(path)
	require.NoError(tb, err)
	return st.Size()
}

// readMeasured reads dir and returns the heap the profile keeps and the
// bytes allocated while reading.
func readMeasured(tb testing.TB, dir string) (kept, allocated uint64, n int) {
	tb.Helper()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	p, err := Read(dir)
	require.NoError(tb, err)
	runtime.GC()
	runtime.ReadMemStats(&after)
	n = p.Requests.Len()
	runtime.KeepAlive(p)
	return after.HeapAlloc - before.HeapAlloc, after.TotalAlloc - before.TotalAlloc, n
}

// The reader keeps 28 bytes a request (its seven columns, the four times
// as int32 µs from a base: model.NsColumn; sized once from the file's line
// count, no growth by doubling) and allocates little beyond them while
// reading (its two 256 KiB read buffers): both within 0.3× of the file,
// the trace reader's bound (BenchmarkReadRequests1M: 0.27× at a million).
func TestReadRequestsMemoryBounded(t *testing.T) {
	dir := t.TempDir()
	const n = 100_000
	size := writeRequests(t, dir, n)
	kept, allocated, got := readMeasured(t, dir)
	require.Equal(t, n, got)
	require.LessOrEqual(t, kept, uint64(n*28+64<<10), "kept %d bytes for %d requests", kept, n)
	require.LessOrEqual(t, float64(kept), 0.3*float64(size), "kept %d bytes of a %d-byte file", kept, size)
	require.LessOrEqual(t, allocated, kept+1<<20, "allocated %d bytes beyond the %d kept", allocated-kept, kept)
	require.LessOrEqual(t, float64(allocated), 0.3*float64(size)+1<<20, "allocated %d bytes reading %d", allocated, size)
}

// BenchmarkReadRequests1M reads a service folder of one million requests
// (104 MB of request.csv): ns/op, the bytes kept a request and the
// peak-heap share of the file (docs/performance.md).
func BenchmarkReadRequests1M(b *testing.B) {
	dir := b.TempDir()
	const n = 1_000_000
	size := writeRequests(b, dir, n)
	b.SetBytes(size)
	b.ResetTimer()
	var kept, allocated uint64
	for range b.N {
		kept, allocated, _ = readMeasured(b, dir)
	}
	b.ReportMetric(float64(kept)/n, "B-kept/request")
	b.ReportMetric(float64(kept)/float64(size), "kept/file")
	b.ReportMetric(float64(allocated)/float64(size), "alloc/file")
	b.ReportMetric(float64(size)/n, "B-file/request")
}
