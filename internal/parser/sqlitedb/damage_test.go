package sqlitedb

import (
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/npuprof/npuprof/internal/parser/model"
	"github.com/npuprof/npuprof/internal/testutil"
	"github.com/npuprof/npuprof/internal/tracegen"
)

// tinyDB writes a tiny generated torch_npu database and returns its path.
func tinyDB(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	_, err := tracegen.GenerateLayout(dir, testutil.Tiny(), tracegen.LayoutTorchNPUDB)
	require.NoError(t, err)
	dbs, _ := filepath.Glob(filepath.Join(dir, "*", "*", "ascend_pytorch_profiler_*.db"))
	require.NotEmpty(t, dbs)
	return dbs[0]
}

// edit runs SQL statements on a copy of the database at src and returns
// the copy's path.
func edit(t *testing.T, src string, stmts ...string) string {
	t.Helper()
	b, err := os.ReadFile(src)
	require.NoError(t, err)
	p := filepath.Join(t.TempDir(), filepath.Base(src))
	require.NoError(t, os.WriteFile(p, b, 0o644))
	db, err := sql.Open("sqlite", p)
	require.NoError(t, err)
	defer db.Close()
	for _, q := range stmts {
		_, err := db.Exec(q)
		require.NoError(t, err, q)
	}
	return p
}

func readRank(t *testing.T, p string) *model.Rank {
	t.Helper()
	r := model.NewRank(p)
	require.NoError(t, Read(p, r))
	return r
}

// A 20 MB string used by a compute task's name (the issue: 50 MB gave a
// 1.76 GB peak and a 300 MB JSON output, without a warning) is cut at
// MaxStringBytes and marked, with one warning for the file.
func TestHugeStringIsCut(t *testing.T) {
	src := tinyDB(t)
	clean := readRank(t, src)
	p := edit(t, src, `UPDATE STRING_IDS SET value = CAST(zeroblob(20000000) AS TEXT) || 'x' WHERE id = (SELECT name FROM COMPUTE_TASK_INFO LIMIT 1)`)
	r := readRank(t, p)
	require.Len(t, r.Tasks, len(clean.Tasks))
	long := 0
	for i := 0; i < r.Syms.Len(); i++ {
		s := r.Syms.Str(model.Sym(i))
		require.LessOrEqual(t, len(s), MaxStringBytes+len(truncatedMark))
		if strings.HasSuffix(s, truncatedMark) {
			long++
		}
	}
	require.Equal(t, 1, long)
	var msgs []string
	for _, w := range r.Warnings {
		msgs = append(msgs, w.Message)
	}
	require.Contains(t, strings.Join(msgs, "\n"), "1 STRING_IDS value(s) longer than 4096 bytes were cut there and end with \"…[cut]\"")

	// and the total taken from a file is bounded by its size
	require.Equal(t, int64(64<<20), stringBudget(1000))
	require.Equal(t, int64(200<<20), stringBudget(100<<20))
}

// Views are read like tables: TASK and STRING_IDS turned into views over
// renamed tables give the same rank (they gave no task and no name).
func TestViewsReadLikeTables(t *testing.T) {
	src := tinyDB(t)
	clean := readRank(t, src)
	require.NotEmpty(t, clean.Tasks)
	p := edit(t, src,
		`ALTER TABLE TASK RENAME TO TASK_DATA`, `CREATE VIEW TASK AS SELECT * FROM TASK_DATA`,
		`ALTER TABLE STRING_IDS RENAME TO STRING_DATA`, `CREATE VIEW STRING_IDS AS SELECT * FROM STRING_DATA`)
	r := readRank(t, p)
	require.Equal(t, len(clean.Tasks), len(r.Tasks))
	require.Equal(t, clean.Str(r.Name(&clean.Tasks[0])), r.Str(r.Name(&r.Tasks[0])))
	require.True(t, r.Have.Timeline)
}

// A TASK table that is missing, or lacks endNs, leaves no device timeline
// with the reason: collectives alone made every kernel count a measured 0.
func TestMissingTaskIsUnavailable(t *testing.T) {
	src := tinyDB(t)
	for what, stmt := range map[string]string{
		"table TASK":    `DROP TABLE TASK`,
		"TASK.endNs":    `ALTER TABLE TASK DROP COLUMN endNs`,
		"TASK.taskType": `ALTER TABLE TASK RENAME COLUMN taskType TO kind`,
	} {
		p := edit(t, src, stmt)
		r := readRank(t, p)
		require.False(t, r.Have.Timeline, what)
		require.False(t, r.Have.HCCL, what)
		require.Empty(t, r.Tasks, what)
		require.Empty(t, r.HCCL, what)
		require.Equal(t, p+" has no "+what+", so no device task can be read", r.Have.TimelineNote, what)
	}
	// no STRING_IDS: said, not silent
	r := readRank(t, edit(t, src, `DROP TABLE STRING_IDS`))
	require.Equal(t, "no STRING_IDS table with id and value: every name, task type and shape is unknown", r.Warnings[0].Message)
}
