package analysis

import (
	"database/sql"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/npuprof/npuprof/internal/parser/model"
	"github.com/npuprof/npuprof/internal/parser/sqlitedb"
	"github.com/npuprof/npuprof/internal/testutil"
)

// dbTruth reads the reference numbers straight from the sample databases
// with SQL, independently of npuprof's reader.
func dbTruth(t *testing.T, db *sql.DB, q string, args ...any) float64 {
	t.Helper()
	var v sql.NullFloat64
	require.NoError(t, db.QueryRow(q, args...).Scan(&v), q)
	require.True(t, v.Valid, q)
	return v.Float64
}

// The torch_npu db export (docs/formats.md#sqlite-exports): collectives equal
// COMMUNICATION_OP, the per-step breakdown equals analysis.db's
// StepTraceTime, EVENT_WAIT equals the TASK rows of that type. rank0's DB
// was re-saved by MindStudio Insight (extra columns), rank1's is pristine.
func TestDBSamplesMatchProfiler(t *testing.T) {
	for _, rank := range []int{0, 1} {
		t.Run(filepath.Base(dbRankDir(rank)), func(t *testing.T) {
			dir := testutil.Sample(t, dbRankDir(rank))
			res, p := loadProfile(t, dbRankDir(rank))
			require.Len(t, res.Ranks, 1)
			rr := res.Ranks[0]
			require.Empty(t, rr.Errors)
			require.Equal(t, model.FormatTorchNPUDB, rr.Format)
			require.Equal(t, rank, rr.Rank, "rank from RANK_DEVICE_MAP")
			require.Equal(t, rank, rr.Device)
			require.Equal(t, "Level1", rr.ProfilerLevel)

			db, err := sqlitedb.Open(filepath.Join(dir, "ASCEND_PROFILER_OUTPUT", "ascend_pytorch_profiler_"+string(rune('0'+rank))+".db"))
			require.NoError(t, err)
			defer db.Close()
			commUs := dbTruth(t, db, `SELECT SUM(endNs - startNs) / 1000.0 FROM COMMUNICATION_OP`)
			commN := dbTruth(t, db, `SELECT COUNT(*) FROM COMMUNICATION_OP`)
			waits := dbTruth(t, db, `SELECT COUNT(*) FROM TASK WHERE taskType = (SELECT id FROM STRING_IDS WHERE value = 'EVENT_WAIT')`)
			waitUs := dbTruth(t, db, `SELECT SUM(endNs - startNs) / 1000.0 FROM TASK WHERE taskType = (SELECT id FROM STRING_IDS WHERE value = 'EVENT_WAIT')`)
			m := rr.Metrics
			require.Equal(t, commUs, m["hccl.total.time_us"])
			require.Equal(t, commN, m["hccl.total.count"])
			require.Equal(t, commN, m["hccl.allreduce.count"])
			require.Equal(t, waits, m["event_wait.count"])
			require.Equal(t, 10.0, waits)
			within(t, waitUs, m["event_wait.time_us"], 1e-9, "event_wait.time_us")
			if rank == 0 {
				require.Equal(t, 102108.1, commUs)
			}

			ref := p.Ranks[0].StepTrace
			require.Len(t, ref, 1, "analysis.db StepTraceTime")
			require.Len(t, StepsOf(rr), 1, "STEP_TIME")
			s := StepsOf(rr)[0]
			require.Equal(t, "50", ref[0].Step)
			require.Equal(t, 50, s.Step)
			if rank == 0 {
				require.Equal(t, 102108.1, ref[0].Communication)
			}
			within(t, ref[0].Computing, us(s.Computing), 0.001, "computing")
			within(t, ref[0].Communication, us(s.Communication), 0.001, "communication")
			within(t, ref[0].CommunicationNotOverlapped, us(s.CommunicationNotOverlapped), 0.001, "not overlapped")
			within(t, ref[0].Overlapped, us(s.Overlapped), 0.001, "overlapped")
			within(t, ref[0].Free, us(s.Free), 0.001, "free")
			within(t, ref[0].Preparing, us(s.DeviceStart-s.HostStart), 0.001, "preparing")
			require.NotEmpty(t, p.Ranks[0].FrameworkOps, "PYTORCH_API (TEXT startNs) read")
		})
	}
}

func dbRankDir(rank int) string {
	return "Ascend-msinsight/test/data/pytorch/db/level1/rank" + string(rune('0'+rank)) + "_ascend_pt"
}
