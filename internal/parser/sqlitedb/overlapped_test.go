package sqlitedb

import (
	"database/sql"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/npuprof/npuprof/internal/parser/model"
)

// A StepTraceTime row whose overlapped is NULL (or a table without the
// column) did not measure it: the row says so, never 0.
func TestStepTraceTimeNullOverlappedIsNotMeasured(t *testing.T) {
	for name, table := range map[string]string{
		"null":      "CREATE TABLE StepTraceTime (deviceId INTEGER, step TEXT, computing REAL, communication_not_overlapped REAL, overlapped REAL, communication REAL, free REAL)",
		"no column": "CREATE TABLE StepTraceTime (deviceId INTEGER, step TEXT, computing REAL, communication_not_overlapped REAL, communication REAL, free REAL)",
	} {
		p := filepath.Join(t.TempDir(), "analysis.db")
		db, err := sql.Open("sqlite", p)
		require.NoError(t, err)
		_, err = db.Exec(table)
		require.NoError(t, err, name)
		if name == "null" {
			_, err = db.Exec("INSERT INTO StepTraceTime VALUES (0, '1', 10.5, 2, NULL, 3, 4), (0, '2', 11, 2, 1.25, 3, 4)")
		} else {
			_, err = db.Exec("INSERT INTO StepTraceTime VALUES (0, '1', 10.5, 2, 3, 4)")
		}
		require.NoError(t, err, name)
		require.NoError(t, db.Close())
		var r model.Rank
		require.NoError(t, ReadAnalysis(p, &r), name)
		require.NotEmpty(t, r.StepTrace, name)
		require.True(t, r.StepTrace[0].NoOverlapped, name)
		require.Zero(t, r.StepTrace[0].Overlapped, name)
		if name == "null" {
			require.False(t, r.StepTrace[1].NoOverlapped)
			require.Equal(t, 1.25, r.StepTrace[1].Overlapped)
		}
	}
}
