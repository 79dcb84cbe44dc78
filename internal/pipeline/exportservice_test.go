package pipeline

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/stretchr/testify/require"

	"github.com/npuprof/npuprof/internal/inputs/service"
	"github.com/npuprof/npuprof/internal/parser/model"
	"github.com/npuprof/npuprof/internal/parser/parquetio"
	"github.com/npuprof/npuprof/internal/tracegen"
)

// readRows reads every row of one Parquet file.
func readRows[T any](t *testing.T, path string) []T {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	r := parquet.NewGenericReader[T](f)
	defer r.Close()
	rows := make([]T, r.NumRows())
	n, err := r.Read(rows)
	if n < len(rows) {
		require.NoError(t, err)
	}
	return rows[:n]
}

// export writes a service folder beside the rank folder as the tables
// service_requests and service_batches, row for row, and the export is
// still analyzed back.
func TestExportServiceTables(t *testing.T) {
	dir := t.TempDir()
	_, err := tracegen.GenerateRank(filepath.Join(dir, "rank0_ascend_pt"), tracegen.FieldReport2()[0], 0)
	require.NoError(t, err)
	svc := filepath.Join(dir, "service")
	_, err = tracegen.GenerateService(svc, tracegen.ServiceScenarios()[2], tracegen.ServiceDatetime)
	require.NoError(t, err)
	p, err := service.Read(svc)
	require.NoError(t, err)

	out := filepath.Join(t.TempDir(), "out")
	x, err := Export(context.Background(), dir, out, ExportOptions{})
	require.NoError(t, err)
	require.Equal(t, svc, x.Service)
	reqs := readRows[parquetio.ServiceRequest](t, parquetio.ServiceFile(out, parquetio.TableServiceRequests))
	require.Len(t, reqs, p.Requests.Len())
	for i, r := range reqs {
		require.Equal(t, p.Requests.Start.At(i), *r.StartNs)
		require.Equal(t, p.Requests.TTFT.At(i), *r.TTFTNs)
		require.Equal(t, p.Requests.ReplyTokens[i], *r.ReplyTokens)
	}
	batches := readRows[parquetio.ServiceBatch](t, parquetio.ServiceFile(out, parquetio.TableServiceBatches))
	require.Len(t, batches, p.Batches.Len())
	sched := 0
	for i, b := range batches {
		require.Equal(t, p.Batches.Start[i], *b.StartNs)
		if b.Kind == parquetio.ServiceBatchSchedule {
			sched++
			require.Equal(t, model.BatchSchedule, p.Batches.Kind[i])
		}
		if v := p.Batches.Prefill[i]; v != model.NoServiceValue {
			require.Equal(t, v, *b.Prefill)
		} else {
			require.Nil(t, b.Prefill)
		}
	}
	require.Positive(t, sched)

	res, err := Analyze(context.Background(), out, Options{})
	require.NoError(t, err)
	require.Len(t, res.Ranks, 1)
}
