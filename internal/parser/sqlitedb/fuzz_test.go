package sqlitedb

import (
	"database/sql"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/npuprof/npuprof/internal/parser/model"
	"github.com/npuprof/npuprof/internal/testutil"
)

// fuzzDBs are the in-memory databases of a fuzzing process, one per
// schema variant (fuzzSchemaDB): the schema is built once, and each input
// only inserts its rows in a transaction that is rolled back. Building the
// schema per input was a third of an input's time.
var fuzzDBs struct {
	sync.Mutex
	m map[uint16]*sql.DB
}

// execer is what fuzzRows needs: an *sql.DB or an *sql.Tx.
type execer interface {
	Exec(query string, args ...any) (sql.Result, error)
}

// schemaBits are the variant bits that change the schema: 1 a TASK
// without endNs; 2 and 4 TASK and STRING_IDS as views over renamed tables;
// 8, 16, 32 COMPUTE_TASK_INFO, STRING_IDS, COMMUNICATION_OP missing.
const schemaBits = 63

// fuzzSchemaDB is the database holding the schema of variant: the tables
// and columns the reader reads, changed as schemaBits says.
func fuzzSchemaDB(variant uint16) (*sql.DB, error) {
	key := variant & schemaBits
	fuzzDBs.Lock()
	defer fuzzDBs.Unlock()
	if db := fuzzDBs.m[key]; db != nil {
		return db, nil
	}
	db, err := sql.Open("sqlite", fmt.Sprintf("file:fuzz%d?mode=memory&cache=private", key))
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	tasks := "CREATE TABLE TASK (startNs INTEGER, endNs INTEGER, connectionId INTEGER, globalTaskId INTEGER, taskType INTEGER, streamId INTEGER, modelId INTEGER)"
	if key&1 != 0 {
		tasks = "CREATE TABLE TASK (startNs INTEGER, connectionId INTEGER, globalTaskId INTEGER, taskType INTEGER, streamId INTEGER, modelId INTEGER)"
	}
	stmts := []string{
		"CREATE TABLE STRING_IDS (id INTEGER PRIMARY KEY, value TEXT)",
		tasks,
		"CREATE TABLE COMPUTE_TASK_INFO (name INTEGER, globalTaskId INTEGER PRIMARY KEY, taskType INTEGER, opType INTEGER, inputShapes INTEGER)",
		"CREATE TABLE COMMUNICATION_OP (opName INTEGER, startNs INTEGER, endNs INTEGER, connectionId INTEGER, groupName INTEGER, opType INTEGER)",
		"CREATE TABLE STEP_TIME (id INTEGER, startNs INTEGER, endNs INTEGER)",
	}
	for _, q := range stmts {
		if _, err := db.Exec(q); err != nil {
			db.Close()
			return nil, err
		}
	}
	// the variants' changes may not all apply (DROP TABLE of a table
	// that is now a view): what applies is the schema
	for _, bq := range []struct {
		bit uint16
		q   string
	}{
		{2, "ALTER TABLE TASK RENAME TO T2; CREATE VIEW TASK AS SELECT * FROM T2"},
		{4, "ALTER TABLE STRING_IDS RENAME TO S2; CREATE VIEW STRING_IDS AS SELECT * FROM S2"},
		{8, "DROP TABLE COMPUTE_TASK_INFO"},
		{16, "DROP TABLE STRING_IDS"},
		{32, "DROP TABLE COMMUNICATION_OP"},
	} {
		if key&bq.bit != 0 {
			_, _ = db.Exec(bq.q)
		}
	}
	if fuzzDBs.m == nil {
		fuzzDBs.m = map[uint16]*sql.DB{}
	}
	fuzzDBs.m[key] = db
	return db, nil
}

// fuzzRows inserts one compute task, one EVENT_WAIT task and one
// collective with the fuzzed times, strings and values into a database of
// variant's schema (into the tables under the views; a missing table
// takes no row). Bit 64 stores TASK's start times as TEXT.
func fuzzRows(db execer, variant uint16, start, end int64, name, shapes string, stream, tid any) {
	task, strs := "TASK", "STRING_IDS"
	if variant&2 != 0 {
		task = "T2"
	}
	if variant&4 != 0 {
		strs = "S2"
	}
	ins := func(q string, args ...any) {
		_, _ = db.Exec(q, args...)
	}
	for id, v := range []string{name, "AI_CORE", "EVENT_WAIT", shapes, "hcom_allReduce__1_1_1", "group0", "MatMulV2"} {
		ins("INSERT INTO "+strs+" VALUES (?, ?)", id, v)
	}
	if variant&1 != 0 {
		ins("INSERT INTO "+task+" VALUES (?, 1, 1, 1, ?, 0)", start, stream)
	} else {
		ins("INSERT INTO "+task+" VALUES (?, ?, 1, 1, 1, ?, 0)", start, end, stream)
		ins("INSERT INTO "+task+" VALUES (?, ?, 2, 2, 2, ?, ?)", end, start, tid, tid)
	}
	ins("INSERT INTO COMPUTE_TASK_INFO VALUES (0, 1, 1, 6, 3)")
	ins("INSERT INTO COMMUNICATION_OP VALUES (4, ?, ?, 3, 5, 4)", start, end)
	ins("INSERT INTO STEP_TIME VALUES (?, ?, ?)", tid, start, end)
	if variant&64 != 0 {
		ins("UPDATE " + task + " SET startNs = CAST(startNs AS TEXT)")
	}
}

// FuzzReadDB reads a small profiler database built in memory from the
// fuzzed values (fuzzSchemaDB, fuzzRows) in a transaction rolled back after it:
// thousands of inputs a minute, where fuzzing
// database files spent its time in SQLite's own page checks. Properties:
// no panic; no task or collective with a negative duration; no string
// longer than MaxStringBytes and its mark; a TASK without its columns gives
// no timeline and no tasks, with the reason; a readable TASK whose row is
// in order gives its task.
func FuzzReadDB(f *testing.F) {
	f.Add(uint16(0), int64(1000), int64(2000), "aclnnMatmul_MatMulCommon_MatMulV2", "1,2;3,4", int64(3), int64(7))
	f.Add(uint16(1), int64(5), int64(1), "", "", int64(-1), int64(0))
	f.Add(uint16(2|4), int64(-9223372036854775808), int64(9223372036854775807), strings.Repeat("x", 5000), "\x00\xff", int64(1<<40), int64(-5))
	f.Add(uint16(8|16|32|64), int64(0), int64(0), "N/A", `""""`, int64(0), int64(0))
	f.Fuzz(func(t *testing.T, variant uint16, start, end int64, name, shapes string, stream, tid int64) {
		defer testutil.Watchdog(fmt.Appendf(nil, "%d %d %d %q %q %d %d", variant, start, end, name, shapes, stream, tid))()
		db, err := fuzzSchemaDB(variant)
		if err != nil {
			t.Fatal(err)
		}
		tx, err := db.Begin()
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback()
		var st, ti any = stream, tid
		if variant&128 != 0 {
			st, ti = nil, fmt.Sprint(tid)
		}
		fuzzRows(tx, variant, start, end, name, shapes, st, ti)
		r := model.NewRank("fuzz.db")
		if err := readDB(tx, "fuzz.db", 1<<20, r); err != nil {
			return
		}
		for _, x := range r.Tasks {
			if r.Dur(&x) < 0 {
				t.Fatalf("task %q has negative duration %d", r.Str(r.Name(&x)), r.Dur(&x))
			}
		}
		for _, h := range r.HCCL {
			if h.Dur < 0 {
				t.Fatalf("collective has negative duration %d", h.Dur)
			}
		}
		for i := 0; i < r.Syms.Len(); i++ {
			if n := len(r.Syms.Str(model.Sym(i))); n > MaxStringBytes+len(truncatedMark) {
				t.Fatalf("a %d-byte string", n)
			}
		}
		if variant&1 != 0 && (r.Have.Timeline || len(r.Tasks) > 0 || r.Have.TimelineNote == "") {
			t.Fatalf("TASK without endNs: timeline %v, %d tasks, note %q", r.Have.Timeline, len(r.Tasks), r.Have.TimelineNote)
		}
		if variant&(1|64) == 0 && start <= end && end-start >= 0 && len(r.Tasks) == 0 {
			t.Fatalf("TASK row %d..%d not read: %v", start, end, r.Warnings)
		}
	})
}
