// Package sqlitedb reads the SQLite exports of the Ascend profilers into
// the normalized model (docs/formats.md#sqlite-exports): torch_npu's
// ascend_pytorch_profiler_{rank}.db, msprof's msprof_{ts}.db (the same
// schema without the PyTorch tables) and torch_npu's analysis.db.
//
// Times are read as int64 ns straight from the INTEGER columns (some
// writers store PYTORCH_API times as TEXT: those are parsed as decimal
// integers, never through float64). Every name-like INTEGER column is an id
// into STRING_IDS. Only the columns the profiler itself writes are read:
// the rank0 sample DB was re-saved by MindStudio Insight, which adds
// `depth`, `waitNs`, OVERLAP_ANALYSIS and more; none of them is needed.
//
// The driver is modernc.org/sqlite (pure Go: no cgo, so `go install` works
// everywhere). Databases are opened read-only and immutable: npuprof never
// writes into the input, not even a journal.
package sqlitedb

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	_ "modernc.org/sqlite" // registers the "sqlite" database/sql driver

	"github.com/npuprof/npuprof/internal/parser/model"
	"github.com/npuprof/npuprof/internal/parser/summary"
	"github.com/npuprof/npuprof/internal/parser/timeparse"
)

// Open opens a profiler database read-only. The caller closes it.
func Open(path string) (*sql.DB, error) {
	// SQLite reads a file: URI; a relative path would turn its first
	// element into the URI's authority ("file://db/x.db"), so the path is
	// made absolute first.
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(abs), RawQuery: "mode=ro&immutable=1"}
	db, err := sql.Open("sqlite", u.String())
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	db.SetMaxOpenConns(1)
	if err := db.Ping(); err != nil {
		db.Close()
		return nil, fmt.Errorf("%s: not a readable SQLite database: %w", path, err)
	}
	return db, nil
}

// querier is what the readers need of a database: an *sql.DB, or an
// *sql.Tx (the fuzz target reads a database it builds in a transaction).
type querier interface {
	Query(query string, args ...any) (*sql.Rows, error)
}

// schema is what a database holds: table name -> column set.
type schema map[string]map[string]bool

func readSchema(db querier, path string) (schema, error) {
	// views are read like tables: a re-saved or post-processed export may
	// turn a table into a view over others
	rows, err := db.Query(`SELECT name FROM sqlite_master WHERE type IN ('table', 'view')`)
	if err != nil {
		return nil, fmt.Errorf("%s: not a SQLite database: %w", path, err)
	}
	var tables []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			rows.Close()
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		tables = append(tables, n)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	s := schema{}
	for _, t := range tables {
		cols := map[string]bool{}
		cr, err := db.Query(`SELECT name FROM pragma_table_info(?)`, t)
		if err != nil {
			return nil, fmt.Errorf("%s: table %s: %w", path, t, err)
		}
		for cr.Next() {
			var c string
			if err := cr.Scan(&c); err == nil {
				cols[c] = true
			}
		}
		cr.Close()
		s[t] = cols
	}
	return s, nil
}

// has reports whether table t exists with every listed column.
func (s schema) has(t string, cols ...string) bool {
	c, ok := s[t]
	if !ok {
		return false
	}
	for _, x := range cols {
		if !c[x] {
			return false
		}
	}
	return true
}

// missing names the first absent column of t ("" when all are there).
// selectCols is a SELECT list: cols, then each of opt that table has, NULL
// in place of those it lacks.
func (s schema) selectCols(table string, cols []string, opt ...string) string {
	for _, c := range opt {
		if s.has(table, c) {
			cols = append(cols, c)
		} else {
			cols = append(cols, "NULL")
		}
	}
	return strings.Join(cols, ", ")
}

func (s schema) missing(t string, cols ...string) string {
	c, ok := s[t]
	if !ok {
		return "table " + t
	}
	for _, x := range cols {
		if !c[x] {
			return t + "." + x
		}
	}
	return ""
}

// asInt converts a scanned SQLite value to int64: INTEGER as is, TEXT as
// a decimal integer (or decimal µs-free number text), REAL only when it is
// integral. NULL and anything else report false.
func asInt(v any) (int64, bool) {
	switch x := v.(type) {
	case int64:
		return x, true
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1<<62 {
			return int64(x), true
		}
		return 0, false
	case string:
		return parseIntText(x)
	case []byte:
		return parseIntText(string(x))
	}
	return 0, false
}

func parseIntText(s string) (int64, bool) {
	s = strings.TrimSpace(s)
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return n, true
	}
	return 0, false
}

// asFloat converts a NUMERIC/REAL/TEXT value to float64.
func asFloat(v any) (float64, bool) {
	switch x := v.(type) {
	case int64:
		return float64(x), true
	case float64:
		return x, true
	case string:
		f, err := strconv.ParseFloat(strings.TrimSpace(x), 64)
		return f, err == nil
	case []byte:
		f, err := strconv.ParseFloat(strings.TrimSpace(string(x)), 64)
		return f, err == nil
	}
	return 0, false
}

func asText(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case []byte:
		return string(x)
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	}
	return ""
}

// MaxStringBytes is the longest string (a name, an op type, shapes) taken
// from a database's STRING_IDS; a longer one is cut there and marked
// (truncatedMark), with one warning per file. No profiler writes one that
// long; a damaged or hostile file might, and every task naming it would
// carry it into the results.
const MaxStringBytes = 4096

// truncatedMark ends a string cut at MaxStringBytes.
const truncatedMark = "…[cut]"

// stringBudget is how many bytes of strings are taken from a database of
// size bytes in all: proportional to the file (its strings cannot hold
// more), and at least 64 MiB. Past it strings are replaced by the mark.
func stringBudget(size int64) int64 { return max(64<<20, 2*size) }

// strings is the STRING_IDS table.
type stringIDs map[int64]string

func (s stringIDs) get(v any) string {
	id, ok := asInt(v)
	if !ok {
		return ""
	}
	return s[id]
}

// readStrings reads STRING_IDS, each value cut at MaxStringBytes (SQLite
// hands over only the first bytes, with the full length) and all of them
// within stringBudget(size).
func readStrings(db querier, sc schema, path string, size int64, r *model.Rank) (stringIDs, error) {
	ids := stringIDs{}
	if !sc.has("STRING_IDS", "id", "value") {
		if sc.has("TASK") || sc.has("COMMUNICATION_OP") {
			r.Warn(path, "no STRING_IDS table with id and value: every name, task type and shape is unknown")
		}
		return ids, nil
	}
	rows, err := db.Query(`SELECT id, substr(CAST(value AS BLOB), 1, ?), length(CAST(value AS BLOB)) FROM STRING_IDS`, MaxStringBytes)
	if err != nil {
		return nil, fmt.Errorf("%s: STRING_IDS: %w", path, err)
	}
	defer rows.Close()
	budget := stringBudget(size)
	var cut, over int
	var firstCut int64
	for rows.Next() {
		var id int64
		var v []byte
		var n sql.NullInt64
		if err := rows.Scan(&id, &v, &n); err != nil {
			return nil, fmt.Errorf("%s: STRING_IDS: %w", path, err)
		}
		s := string(v)
		if n.Int64 > MaxStringBytes {
			if cut == 0 {
				firstCut = id
			}
			cut++
			s = strings.ToValidUTF8(s, "") + truncatedMark
		}
		if budget -= int64(len(s)); budget < 0 {
			over++
			s = truncatedMark
		}
		ids[id] = s
	}
	if cut > 0 {
		r.Warnings = append(r.Warnings, model.Warning{File: path, Count: cut, Message: fmt.Sprintf(
			"%d STRING_IDS value(s) longer than %d bytes were cut there and end with %q (first id %d)", cut, MaxStringBytes, truncatedMark, firstCut)})
	}
	if over > 0 {
		r.Warnings = append(r.Warnings, model.Warning{File: path, Count: over, Message: fmt.Sprintf(
			"the STRING_IDS values add up to more than %d bytes (twice the file, at least 64 MiB): %d value(s) past that were replaced by %q", stringBudget(size), over, truncatedMark)})
	}
	return ids, rows.Err()
}

// Read reads a torch_npu (ascend_pytorch_profiler_{rank}.db) or msprof
// (msprof_{ts}.db) database into r: device tasks (TASK joined with
// COMPUTE_TASK_INFO), collectives (COMMUNICATION_OP), framework ops
// (PYTORCH_API), steps (STEP_TIME), metadata (META_DATA) and the rank
// (RANK_DEVICE_MAP). An error means the file is not a profiler database.
func Read(path string, r *model.Rank) error {
	db, err := Open(path)
	if err != nil {
		return err
	}
	defer db.Close()
	var size int64
	if st, err := os.Stat(path); err == nil {
		size = st.Size()
	}
	return readDB(db, path, size, r)
}

// readDB is Read on an open database of size bytes, named path in
// messages.
func readDB(db querier, path string, size int64, r *model.Rank) error {
	sc, err := readSchema(db, path)
	if err != nil {
		return err
	}
	if !sc.has("TASK") && !sc.has("COMMUNICATION_OP") {
		return fmt.Errorf("%s: not a profiler database: no TASK or COMMUNICATION_OP table", path)
	}
	strs, err := readStrings(db, sc, path, size, r)
	if err != nil {
		return err
	}
	readRankMap(db, sc, path, r)
	readMetaData(db, sc, path, r)
	conn, err := readTasks(db, sc, path, strs, r)
	if err != nil {
		return err
	}
	hconn, err := readCommOps(db, sc, path, strs, r)
	if err != nil {
		return err
	}
	readSteps(db, sc, path, r)
	readPyTorch(db, sc, path, strs, r, conn, hconn)
	readOverlap(db, sc, path, r)
	if note := tasksNote(sc, path); note != "" {
		// without device tasks there is no timeline: collectives alone
		// would make every kernel count a measured 0
		r.Tasks, r.HCCL, r.Links = nil, nil, nil
		r.Have.Timeline, r.Have.HCCL = false, false
		r.Have.TimelineNote, r.Have.HCCLNote = note, note
	}
	r.Have.TimelineFile = path
	return nil
}

// tasksNote says why a database has no usable device tasks ("" when its
// TASK table, or view, has every column read).
func tasksNote(sc schema, path string) string {
	m := sc.missing("TASK", "startNs", "endNs", "taskType", "streamId")
	if m == "" {
		return ""
	}
	return fmt.Sprintf("%s has no %s, so no device task can be read", path, m)
}

// optional runs q (args its parameters) over a table the database may
// lack: nil when it has no table with the need columns, or when the query
// fails, which is a warning naming the table.
func optional(db querier, sc schema, path string, r *model.Rank, table string, need []string, q string, args ...any) *sql.Rows {
	if !sc.has(table, need...) {
		return nil
	}
	rows, err := db.Query(q, args...)
	if err != nil {
		r.Warn(path, "%s: %v", table, err)
		return nil
	}
	return rows
}

func readRankMap(db querier, sc schema, path string, r *model.Rank) {
	rows := optional(db, sc, path, r, "RANK_DEVICE_MAP", []string{"rankId", "deviceId"}, `SELECT rankId, deviceId FROM RANK_DEVICE_MAP`)
	if rows == nil {
		return
	}
	defer rows.Close()
	n := 0
	byDev := map[int]int{}
	for rows.Next() {
		var rk, dev any
		if rows.Scan(&rk, &dev) != nil {
			continue
		}
		n++
		rv, rok := asInt(rk)
		dv, dok := asInt(dev)
		rok, dok = rok && rv >= 0 && rv < 1<<20, dok && dv >= 0 && dv < 1<<15
		if rok && n == 1 {
			r.Rank = int(rv)
		}
		if dok && n == 1 {
			r.Device = int(dv)
		}
		if rok && dok {
			byDev[int(dv)] = int(rv)
		}
	}
	if n > 1 {
		// one process driving several devices: each device's rank, for
		// the rank of each (model.Rank.SplitDevices)
		r.RankOfDevice = byDev
	}
}

// deviceTag is the device of a row of a database whose TASK table holds
// several devices, to tag the row with (model.Rank.Devices).
func deviceTag(v any) int16 {
	if d, ok := asInt(v); ok && d >= 0 && d < 1<<15 {
		return int16(d)
	}
	return -1
}

// Overlap Analysis kinds by the type of an OVERLAP_ANALYSIS row (the
// sums of the real capture's rows equal its StepTraceTime columns).
var overlapKinds = []string{"Computing", "Communication", "Communication(Not Overlapped)", "Free"}

// readOverlap reads OVERLAP_ANALYSIS (deviceId, startNs, endNs, type):
// the profiler's own Overlap Analysis (msprof's DB writer, and MindStudio
// Insight when it opened the file), per device when the database holds
// several.
func readOverlap(db querier, sc schema, path string, r *model.Rank) {
	cols := "NULL"
	if sc.has("OVERLAP_ANALYSIS", "deviceId") {
		cols = "deviceId"
	}
	rows := optional(db, sc, path, r, "OVERLAP_ANALYSIS", []string{"startNs", "endNs", "type"}, "SELECT startNs, endNs, type, "+cols+" FROM OVERLAP_ANALYSIS")
	if rows == nil {
		return
	}
	defer rows.Close()
	var st, en, typ, dev any
	bad := 0
	for rows.Next() {
		if rows.Scan(&st, &en, &typ, &dev) != nil {
			bad++
			continue
		}
		s, ok1 := asInt(st)
		e, ok2 := asInt(en)
		k, ok3 := asInt(typ)
		if !ok1 || !ok2 || !ok3 || e < s || k < 0 || k >= int64(len(overlapKinds)) {
			bad++
			continue
		}
		own := &r.OwnOverlap
		if len(r.Devices) > 0 {
			d := deviceTag(dev)
			if d < 0 {
				bad++
				continue
			}
			own = &r.Part(int(d)).OwnOverlap
		}
		own.Add(overlapKinds[k], s, e-s)
	}
	if bad > 0 {
		r.Warnings = append(r.Warnings, model.Warning{File: path, Message: "skipped OVERLAP_ANALYSIS rows with missing or reversed times, an unknown type or no device", Count: bad})
	}
}

// readMetaData turns META_DATA (name, JSON value) rows into the same
// fields profiler_metadata.json fills: ENV_VARIABLES, parallel_group_info
// and the other keys.
func readMetaData(db querier, sc schema, path string, r *model.Rank) {
	rows := optional(db, sc, path, r, "META_DATA", []string{"name", "value"}, `SELECT name, value FROM META_DATA`)
	if rows == nil {
		return
	}
	obj := map[string]json.RawMessage{}
	for rows.Next() {
		var n, v sql.NullString
		if rows.Scan(&n, &v) != nil || !n.Valid {
			continue
		}
		raw := json.RawMessage(v.String)
		if !json.Valid(raw) {
			raw, _ = json.Marshal(v.String)
		}
		obj[n.String] = raw
	}
	rows.Close()
	data, _ := json.Marshal(obj)
	md, err := summary.ReadProfilerMetadata(strings.NewReader(string(data)), path+" (META_DATA)")
	if err != nil {
		r.Warn(path, "%v", err)
		return
	}
	if len(md.Env) > 0 {
		r.Env = md.Env
	}
	if len(md.Groups) > 0 {
		r.Groups = md.Groups
	}
	if r.Metadata == nil {
		r.Metadata = map[string]string{}
	}
	for k, v := range md.Other {
		r.Metadata[k] = v
	}
}

// readTasks reads TASK joined with COMPUTE_TASK_INFO. A task with compute
// info is a compute kernel (what msprof's overlap analysis counts as
// Computing) unless its name marks a collective run as a kernel; a task
// without it is named by its host task type (EVENT_WAIT, MEMCPY_ASYNC,
// Notify Wait, ...) and is never Computing. It returns the task indexes by
// connectionId, for the framework-op links.
func readTasks(db querier, sc schema, path string, strs stringIDs, r *model.Rank) (map[int64][]int32, error) {
	if m := sc.missing("TASK", "startNs", "endNs", "taskType", "streamId"); m != "" {
		if sc.has("TASK") {
			r.Warn(path, "TASK table lacks %s: device timeline unavailable", m)
		}
		return nil, nil
	}
	cols := []string{"t.startNs", "t.endNs", "t.taskType", "t.streamId"}
	opt := func(table, col, expr string) {
		if sc.has(table, col) {
			cols = append(cols, expr)
		} else {
			cols = append(cols, "NULL")
		}
	}
	opt("TASK", "modelId", "t.modelId")
	opt("TASK", "connectionId", "t.connectionId")
	opt("TASK", "deviceId", "t.deviceId")
	join := ""
	if sc.has("COMPUTE_TASK_INFO", "globalTaskId", "name") && sc.has("TASK", "globalTaskId") {
		join = " LEFT JOIN COMPUTE_TASK_INFO c ON c.globalTaskId = t.globalTaskId"
		cols = append(cols, "c.name")
		opt("COMPUTE_TASK_INFO", "opType", "c.opType")
		opt("COMPUTE_TASK_INFO", "taskType", "c.taskType")
		opt("COMPUTE_TASK_INFO", "inputShapes", "c.inputShapes")
		cols = append(cols, "c.globalTaskId")
	} else {
		cols = append(cols, "NULL", "NULL", "NULL", "NULL", "NULL")
		r.Warn(path, "no COMPUTE_TASK_INFO table: device tasks have no op names, so no task counts as Computing")
	}
	q := "SELECT " + strings.Join(cols, ", ") + " FROM TASK t" + join
	conn := map[int64][]int32{}
	var tt, stream, modelID, cid, dev, cname, cop, ctt, cshape, cgid any
	devs, lastDev := map[int16]bool{}, int16(0)
	if err := spanRows(db, path, "TASK", q, r, []any{&tt, &stream, &modelID, &cid, &dev, &cname, &cop, &ctt, &cshape, &cgid}, func(s, dur int64) {
		hostType := strs.get(tt)
		ext := model.TaskExtra{ModelID: 4294967295, Stream: -1, Device: deviceTag(dev)}
		if ext.Device != lastDev || len(devs) == 0 {
			devs[ext.Device], lastDev = true, ext.Device
		}
		if v, ok := asInt(stream); ok {
			ext.Stream = int32(v)
		}
		if v, ok := asInt(modelID); ok {
			ext.ModelID = uint32(v)
		}
		if cgid != nil {
			name, opType, taskType := strs.get(cname), strs.get(cop), strs.get(ctt)
			if opType == "" || opType == "N/A" {
				opType = model.OpTypeFromName(name)
			}
			if taskType == "" || taskType == "N/A" {
				taskType = hostType
			}
			ext.Name, ext.OpType, ext.TaskType = r.Intern(name), r.Intern(opType), r.Intern(taskType)
			ext.InputShapes = r.Intern(strings.Trim(strs.get(cshape), `"`))
			if model.IsCommKernelName(name) {
				ext.Class = model.ClassCommKernel
			} else {
				ext.Class = model.ClassCompute
			}
		} else {
			ext.Name = r.Intern(hostType)
			ext.TaskType = ext.Name
			ext.Class = model.ClassifyTask(hostType, hostType)
			if ext.Class == model.ClassCompute {
				// a kernel-typed task without op info: msprof does not
				// count it as Computing either
				ext.Class = model.ClassOther
			}
		}
		t := r.NewTask(s, dur, ext)
		if v, ok := asInt(cid); ok {
			conn[v] = append(conn[v], int32(len(r.Tasks)))
		}
		r.Tasks = append(r.Tasks, t)
	}); err != nil {
		return nil, err
	}
	r.Have.Timeline = len(r.Tasks) > 0
	if len(devs) > 1 {
		// one process driving several devices: a rank of each
		// (model.Rank.SplitDevices); a task of no device is in none
		for d := range devs {
			if d >= 0 {
				r.AddDevice(int(d))
			}
		}
		if devs[-1] {
			r.Warn(path, "TASK rows without a deviceId are in no device's rank")
		}
	} else {
		r.ClearTaskDevices()
	}
	return conn, nil
}

// readCommOps reads COMMUNICATION_OP, the collective big ops. groupName
// is the communicator name itself, so the group resolves through
// parallel_group_info directly (no hash).
func readCommOps(db querier, sc schema, path string, strs stringIDs, r *model.Rank) (map[int64][]int32, error) {
	if m := sc.missing("COMMUNICATION_OP", "opName", "startNs", "endNs"); m != "" {
		if sc.has("COMMUNICATION_OP") {
			r.Warn(path, "COMMUNICATION_OP lacks %s: collectives unavailable", m)
		} else if r.Have.Timeline {
			// msprof writes the table only when collectives ran.
			r.Have.HCCL = true
		}
		return nil, nil
	}
	cols := sc.selectCols("COMMUNICATION_OP", []string{"startNs", "endNs", "opName"}, "groupName", "opType", "connectionId", "deviceId")
	split := len(r.Devices) > 0
	if split && !sc.has("COMMUNICATION_OP", "deviceId") {
		r.Warn(path, "TASK holds devices %v, but COMMUNICATION_OP has no deviceId: its collectives cannot be split by device and are in no device's rank", r.Devices)
	}
	byComm := map[string]string{}
	for _, g := range r.Groups {
		byComm[g.Comm] = g.Name
	}
	conn := map[int64][]int32{}
	var name, group, opType, cid, dev any
	q := "SELECT " + cols + " FROM COMMUNICATION_OP"
	if err := spanRows(db, path, "COMMUNICATION_OP", q, r, []any{&name, &group, &opType, &cid, &dev}, func(s, dur int64) {
		n := strs.get(name)
		typ := model.HCCLTypeFromName(n)
		if typ == "unknown" {
			typ = model.HCCLTypeFromName(strs.get(opType))
		}
		hash, grp := model.HCCLHashSuffix(n), ""
		if comm := strs.get(group); comm != "" {
			grp = byComm[comm]
			if grp == "" && hash == "" {
				hash = model.NewGroup(comm, "", -1, nil).HashSuffix
			}
		}
		h := model.HCCLOp{Start: s, Dur: dur, Name: r.Intern(n), Type: r.Intern(typ), HashSuffix: r.Intern(hash),
			Group: r.Intern(grp), Variant: r.Intern(model.HCCLVariant(n))}
		if split {
			h.Device = deviceTag(dev)
		}
		if v, ok := asInt(cid); ok {
			conn[v] = append(conn[v], int32(len(r.HCCL)))
		}
		r.HCCL = append(r.HCCL, h)
	}); err != nil {
		return nil, err
	}
	r.Have.HCCL = true
	r.Have.Timeline = r.Have.Timeline || len(r.HCCL) > 0
	return conn, nil
}

// spanRows runs q over table, its first two columns startNs and endNs and
// the others scanned into rest, and calls fn with each row's start and
// duration. Rows with missing or reversed times (or so far apart that
// end-start overflows) are skipped and counted in one warning.
func spanRows(db querier, path, table, q string, r *model.Rank, rest []any, fn func(start, dur int64)) error {
	rows, err := db.Query(q)
	if err != nil {
		return fmt.Errorf("%s: reading %s: %w", path, table, err)
	}
	defer rows.Close()
	var start, end any
	dst := append([]any{&start, &end}, rest...)
	bad := 0
	for rows.Next() {
		if err := rows.Scan(dst...); err != nil {
			return fmt.Errorf("%s: reading %s: %w", path, table, err)
		}
		s, ok1 := asInt(start)
		e, ok2 := asInt(end)
		if !ok1 || !ok2 || e < s || e-s < 0 {
			bad++
			continue
		}
		fn(s, e-s)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("%s: reading %s: %w", path, table, err)
	}
	if bad > 0 {
		r.Warnings = append(r.Warnings, model.Warning{File: path, Message: "skipped " + table + " rows with missing or reversed startNs/endNs", Count: bad})
	}
	return nil
}

// readSteps reads STEP_TIME (id, startNs, endNs): torch_npu writes one row
// per ProfilerStep#N when a schedule was used (the same bounds as the
// ProfilerStep#N op of the text export).
func readSteps(db querier, sc schema, path string, r *model.Rank) {
	rows := optional(db, sc, path, r, "STEP_TIME", []string{"id", "startNs", "endNs"}, `SELECT id, startNs, endNs FROM STEP_TIME`)
	if rows == nil {
		return
	}
	defer rows.Close()
	var id, s, e any
	for rows.Next() {
		if rows.Scan(&id, &s, &e) != nil {
			continue
		}
		i, ok1 := asInt(id)
		st, ok2 := asInt(s)
		en, ok3 := asInt(e)
		if !ok1 || !ok2 || !ok3 || en < st {
			r.Warn(path, "STEP_TIME row with unreadable id/startNs/endNs skipped")
			continue
		}
		r.Steps = append(r.Steps, model.Step{ID: int(i), Start: st, End: en})
	}
}

// pytorchOp is ENUM_API_TYPE "op" (50001): torch ops. 50002 are task-queue
// enqueues, 50003 Python tracer slices, 50004 mstx markers.
const pytorchOp = 50001

// readPyTorch reads the torch ops of PYTORCH_API and links them to the
// device tasks they launched through CONNECTION_IDS.
func readPyTorch(db querier, sc schema, path string, strs stringIDs, r *model.Rank, taskConn, hcclConn map[int64][]int32) {
	rows := optional(db, sc, path, r, "PYTORCH_API", []string{"startNs", "endNs", "name", "globalTid", "type"},
		`SELECT startNs, endNs, name, globalTid, connectionId FROM PYTORCH_API WHERE type = ? OR type IS NULL`, pytorchOp)
	if rows == nil {
		return
	}
	opConn := map[int64]int32{}
	var s, e, name, tid, cid any
	bad := 0
	for rows.Next() {
		if rows.Scan(&s, &e, &name, &tid, &cid) != nil {
			bad++
			continue
		}
		st, ok1 := asInt(s)
		en, ok2 := asInt(e)
		if !ok1 || !ok2 || en < st {
			bad++
			continue
		}
		n := strs.get(name)
		if rest, ok := strings.CutPrefix(n, "ProfilerStep#"); ok {
			// the steps come from STEP_TIME; a DB without it still has
			// the step ops
			if !sc.has("STEP_TIME") {
				if id, err := strconv.Atoi(rest); err == nil {
					r.Steps = append(r.Steps, model.Step{ID: id, Start: st, End: en})
				}
			}
			continue
		}
		t, _ := asInt(tid)
		if c, ok := asInt(cid); ok {
			opConn[c] = int32(len(r.FrameworkOps))
		}
		r.FrameworkOps = append(r.FrameworkOps, model.FrameworkOp{Start: st, Dur: en - st, Name: r.Intern(n), Thread: r.Threads.ID(t)})
	}
	rows.Close()
	if bad > 0 {
		r.Warnings = append(r.Warnings, model.Warning{File: path, Message: "skipped PYTORCH_API rows with unreadable startNs/endNs", Count: bad})
	}
	r.Have.Framework = len(r.FrameworkOps) > 0
	if len(opConn) == 0 || !sc.has("CONNECTION_IDS", "id", "connectionId") {
		return
	}
	cr, err := db.Query(`SELECT id, connectionId FROM CONNECTION_IDS`)
	if err != nil {
		return
	}
	defer cr.Close()
	var id, c any
	for cr.Next() {
		if cr.Scan(&id, &c) != nil {
			continue
		}
		i, ok1 := asInt(id)
		cc, ok2 := asInt(c)
		op, ok3 := opConn[i]
		if !ok1 || !ok2 || !ok3 {
			continue
		}
		for _, t := range taskConn[cc] {
			if cl := r.Class(&r.Tasks[t]); cl == model.ClassCompute || cl == model.ClassCommKernel {
				r.Links = append(r.Links, model.Link{Op: op, Task: t, HCCL: -1})
			}
		}
		for _, h := range hcclConn[cc] {
			r.Links = append(r.Links, model.Link{Op: op, Task: -1, HCCL: h})
		}
	}
}

// ReadAnalysis reads torch_npu's analysis.db: StepTraceTime (the
// profiler's own per-step breakdown, µs) and CommAnalyzerTime (per-op
// communication time info, ms). Both are kept for cross-checks.
func ReadAnalysis(path string, r *model.Rank) error {
	db, err := Open(path)
	if err != nil {
		return err
	}
	defer db.Close()
	sc, err := readSchema(db, path)
	if err != nil {
		return err
	}
	if sc.has("StepTraceTime", "step", "computing", "communication_not_overlapped", "communication", "free") {
		cols := sc.selectCols("StepTraceTime", []string{"step", "computing", "communication_not_overlapped", "communication", "free"},
			"overlapped", "stage", "bubble", "preparing", "deviceId")
		rows, err := db.Query("SELECT " + cols + " FROM StepTraceTime")
		if err != nil {
			return fmt.Errorf("%s: StepTraceTime: %w", path, err)
		}
		var v [10]any
		for rows.Next() {
			if rows.Scan(&v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7], &v[8], &v[9]) != nil {
				continue
			}
			var row model.StepTraceRow
			var ok [4]bool
			row.Step = asText(v[0])
			row.Computing, ok[0] = asFloat(v[1])
			row.CommunicationNotOverlapped, ok[1] = asFloat(v[2])
			row.Communication, ok[2] = asFloat(v[3])
			row.Free, ok[3] = asFloat(v[4])
			if !ok[0] || !ok[1] || !ok[2] || !ok[3] {
				r.Warn(path, "StepTraceTime row %q with non-numeric times skipped", row.Step)
				continue
			}
			// a NULL (or absent) overlapped is not measured, never 0
			var hasOverlapped bool
			row.Overlapped, hasOverlapped = asFloat(v[5])
			row.NoOverlapped = !hasOverlapped
			row.Stage, _ = asFloat(v[6])
			row.Bubble, _ = asFloat(v[7])
			row.Preparing, row.HasPreparing = asFloat(v[8])
			if d, ok := asInt(v[9]); ok {
				row.Device = strconv.FormatInt(d, 10)
			}
			r.StepTrace = append(r.StepTrace, row)
		}
		rows.Close()
	}
	if sc.has("CommAnalyzerTime", "hccl_op_name", "group_name", "elapse_time") {
		cols := sc.selectCols("CommAnalyzerTime", []string{"hccl_op_name", "group_name", "elapse_time"},
			"start_timestamp", "transit_time", "wait_time", "synchronization_time", "idle_time", "step", "type")
		rows, err := db.Query("SELECT " + cols + " FROM CommAnalyzerTime")
		if err != nil {
			return fmt.Errorf("%s: CommAnalyzerTime: %w", path, err)
		}
		defer rows.Close()
		var v [10]any
		for rows.Next() {
			if rows.Scan(&v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7], &v[8], &v[9]) != nil {
				continue
			}
			op := asText(v[0])
			if op == "" || op == "Total Op Info" {
				continue
			}
			ci := model.CommOpInfo{Op: op, GroupHash: asText(v[1]), Step: asText(v[8]), Kind: asText(v[9])}
			ci.ElapseMs, _ = asFloat(v[2])
			if st := asText(v[3]); st != "" {
				ci.Start, _ = timeparse.MicrosToNanos([]byte(st))
			}
			ci.TransitMs, _ = asFloat(v[4])
			ci.WaitMs, _ = asFloat(v[5])
			ci.SyncMs, _ = asFloat(v[6])
			ci.IdleMs, _ = asFloat(v[7])
			r.Communication = append(r.Communication, ci)
		}
	}
	return nil
}
