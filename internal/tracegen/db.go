package tracegen

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strconv"

	_ "modernc.org/sqlite" // the "sqlite" database/sql driver (pure Go)
)

// torchDBSchema is the schema of torch_npu's ascend_pytorch_profiler_{rank}.db
// as the profiler writes it: the CREATE statements of the pristine real
// sample (Ascend-msinsight test data, db/level1 rank1), verbatim.
var torchDBSchema = []string{
	`CREATE TABLE SESSION_TIME_INFO (startTimeNs INTEGER,endTimeNs INTEGER)`,
	`CREATE TABLE NPU_INFO (id INTEGER,name TEXT)`,
	`CREATE TABLE HOST_INFO (hostUid TEXT,hostName TEXT)`,
	`CREATE TABLE ENUM_HCCL_RDMA_TYPE (id INTEGER PRIMARY KEY,name TEXT)`,
	`CREATE TABLE ENUM_MSTX_EVENT_TYPE (id INTEGER PRIMARY KEY,name TEXT)`,
	`CREATE TABLE ENUM_HCCL_LINK_TYPE (id INTEGER PRIMARY KEY,name TEXT)`,
	`CREATE TABLE ENUM_HCCL_TRANSPORT_TYPE (id INTEGER PRIMARY KEY,name TEXT)`,
	`CREATE TABLE ENUM_HCCL_DATA_TYPE (id INTEGER PRIMARY KEY,name TEXT)`,
	`CREATE TABLE ENUM_MODULE (id INTEGER PRIMARY KEY,name TEXT)`,
	`CREATE TABLE ENUM_API_TYPE (id INTEGER PRIMARY KEY,name TEXT)`,
	`CREATE TABLE COMPUTE_TASK_INFO (name INTEGER,globalTaskId INTEGER PRIMARY KEY,blockDim INTEGER,mixBlockDim INTEGER,taskType INTEGER,opType INTEGER,inputFormats INTEGER,inputDataTypes INTEGER,inputShapes INTEGER,outputFormats INTEGER,outputDataTypes INTEGER,outputShapes INTEGER,attrInfo INTEGER)`,
	`CREATE TABLE NPU_MEM (type INTEGER,ddr NUMERIC,hbm NUMERIC,timestampNs INTEGER,deviceId INTEGER)`,
	`CREATE TABLE CANN_API (startNs INTEGER,endNs INTEGER,type INTEGER,globalTid INTEGER,connectionId INTEGER PRIMARY KEY,name INTEGER)`,
	`CREATE TABLE TASK (startNs INTEGER,endNs INTEGER,deviceId INTEGER,connectionId INTEGER,globalTaskId INTEGER,globalPid INTEGER,taskType INTEGER,contextId INTEGER,streamId INTEGER,taskId INTEGER,modelId INTEGER)`,
	`CREATE TABLE COMMUNICATION_TASK_INFO (name INTEGER,globalTaskId INTEGER,taskType INTEGER,planeId INTEGER,groupName INTEGER,notifyId INTEGER,rdmaType INTEGER,srcRank INTEGER,dstRank INTEGER,transportType INTEGER,size INTEGER,dataType INTEGER,linkType INTEGER,opId INTEGER)`,
	`CREATE TABLE NPU_OP_MEM (operatorName INTEGER,addr INTEGER,type INTEGER,size INTEGER,timestampNs INTEGER,globalTid INTEGER,totalAllocate NUMERIC,totalReserve NUMERIC,component INTEGER,deviceId INTEGER)`,
	`CREATE INDEX CommunicationTaskIndex ON COMMUNICATION_TASK_INFO (globalTaskId)`,
	`CREATE TABLE NPU_MODULE_MEM (moduleId INTEGER,timestampNs INTEGER,totalReserved NUMERIC,deviceId INTEGER)`,
	`CREATE TABLE TASK_PMU_INFO (globalTaskId INTEGER,name INTEGER,value NUMERIC)`,
	`CREATE INDEX TaskIndex ON TASK (startNs,globalTaskId)`,
	`CREATE TABLE HBM (deviceId INTEGER,timestampNs INTEGER,bandwidth NUMERIC,hbmId INTEGER,type INTEGER)`,
	`CREATE TABLE LLC (deviceId INTEGER,llcId INTEGER,timestampNs INTEGER,hitRate REAL,throughput INTEGER,mode INTEGER)`,
	`CREATE TABLE META_DATA (name TEXT,value TEXT)`,
	`CREATE TABLE SOC_BANDWIDTH_LEVEL (l2BufferBwLevel INTEGER,mataBwLevel INTEGER,timestampNs NUMERIC,deviceId INTEGER)`,
	`CREATE TABLE ACC_PMU (accId INTEGER,readBwLevel INTEGER,writeBwLevel INTEGER,readOstLevel INTEGER,writeOstLevel INTEGER,timestampNs NUMERIC,deviceId INTEGER)`,
	`CREATE TABLE AICORE_FREQ (deviceId INTEGER,timestampNs NUMERIC,freq INTEGER)`,
	`CREATE TABLE COMMUNICATION_OP (opName INTEGER,startNs INTEGER,endNs INTEGER,connectionId INTEGER,groupName INTEGER,opId INTEGER PRIMARY KEY,relay INTEGER,retry INTEGER,dataType INTEGER,algType INTEGER,count NUMERIC,opType INTEGER)`,
	`CREATE TABLE STRING_IDS (id INTEGER PRIMARY KEY,value TEXT)`,
	`CREATE TABLE RANK_DEVICE_MAP (rankId INTEGER, deviceId INTEGER)`,
	`CREATE TABLE STEP_TIME (id INTEGER, startNs INTEGER, endNs INTEGER)`,
	`CREATE TABLE PYTORCH_API (startNs TEXT, endNs TEXT, globalTid INTEGER, connectionId INTEGER, name INTEGER, sequenceNumber INTEGER, fwdThreadId INTEGER, inputDtypes INTEGER, inputShapes INTEGER, callchainId INTEGER, type INTEGER)`,
	`CREATE TABLE CONNECTION_IDS (id INTEGER, connectionId INTEGER)`,
	`CREATE TABLE MEMORY_RECORD (component INTEGER, timestamp INTEGER, totalAllocated INTEGER, totalReserved INTEGER, totalActive INTEGER, streamPtr INTEGER, deviceId INTEGER)`,
	`CREATE TABLE OP_MEMORY (name INTEGER, size INTEGER, allocationTime INTEGER, releaseTime INTEGER, activeReleaseTime INTEGER, duration INTEGER, activeDuration INTEGER, allocationTotalAllocated INTEGER, allocationTotalReserved INTEGER, allocationTotalActive INTEGER, releaseTotalAllocated INTEGER, releaseTotalReserved INTEGER, releaseTotalActive INTEGER, streamPtr INTEGER, deviceId INTEGER)`,
	`CREATE TABLE PYTORCH_CALLCHAINS (id INTEGER, stack INTEGER, stackDepth INTEGER)`,
}

// analysisDBSchema is the schema of torch_npu's analysis.db (same sample).
var analysisDBSchema = []string{
	`CREATE TABLE StepTraceTime (step TEXT, computing NUMERIC, communication_not_overlapped NUMERIC, overlapped NUMERIC, communication NUMERIC, free NUMERIC, stage NUMERIC, bubble NUMERIC, communication_not_overlapped_and_exclude_receive NUMERIC, preparing NUMERIC)`,
	`CREATE TABLE CommAnalyzerBandwidth (hccl_op_name TEXT, group_name TEXT, transport_type TEXT, transit_size NUMERIC, transit_time NUMERIC, bandwidth NUMERIC, large_packet_ratio NUMERIC, package_size NUMERIC, count NUMERIC, total_duration NUMERIC, step TEXT, type TEXT)`,
	`CREATE TABLE CommAnalyzerMatrix (hccl_op_name TEXT, group_name TEXT, src_rank TEXT, dst_rank TEXT, transport_type TEXT, transit_size NUMERIC, transit_time NUMERIC, bandwidth NUMERIC, step TEXT, type TEXT, op_name TEXT)`,
	`CREATE TABLE CommAnalyzerTime (hccl_op_name TEXT, group_name TEXT, start_timestamp NUMERIC, elapse_time NUMERIC, transit_time NUMERIC, wait_time NUMERIC, synchronization_time NUMERIC, idle_time NUMERIC, step TEXT, type TEXT)`,
}

// ENUM_HCCL_DATA_TYPE ids (sample values).
var hcclDataTypes = map[string]int{"INT8": 0, "INT16": 1, "INT32": 2, "FP16": 3, "FP32": 4, "INT64": 5, "UINT64": 6,
	"UINT8": 7, "UINT16": 8, "UINT32": 9, "FP64": 10, "BFP16": 11, "BF16": 11, "INT128": 12}

// dbTaskType is the TASK.taskType host type of a device task.
func dbTaskType(t *devTask) string {
	switch t.kind {
	case tkKernel, tkAivComm:
		tt := t.taskType
		if t.kind == tkKernel {
			tt = t.k.taskType
		}
		switch tt {
		case "AI_CORE":
			return "KERNEL_AICORE"
		case "AI_VECTOR_CORE":
			return "KERNEL_AIVEC"
		case "AI_CPU":
			return "KERNEL_AICPU"
		}
		return tt
	case tkEventWait:
		return "EVENT_WAIT"
	case tkEventRecord:
		return "EVENT_RECORD"
	case tkPlaceholder:
		return "PROFILING_ENABLE"
	}
	return t.name // MEMCPY_ASYNC, Notify Wait, SDMA, Write Value
}

// dbOut writes one rank's ascend_pytorch_profiler_{rank}.db while the
// passes run (one transaction; strings interned into STRING_IDS).
type dbOut struct {
	path   string
	db     *sql.DB
	tx     *sql.Tx
	st     map[string]*sql.Stmt
	strs   map[string]int64
	gtid   int64 // globalTaskId
	opID   int64
	pyConn int64
	tid    int64 // globalTid of the main thread
	gpid   int64
	first  int64
	last   int64
	err    error
	// ovStmt inserts an OVERLAP_ANALYSIS row; nil until the table is
	// made (overlap)
	ovStmt *sql.Stmt
}

var dbInserts = map[string]string{
	"task":     `INSERT INTO TASK VALUES (?,?,?,?,?,?,?,?,?,?,?)`,
	"compute":  `INSERT INTO COMPUTE_TASK_INFO VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)`,
	"commop":   `INSERT INTO COMMUNICATION_OP VALUES (?,?,?,?,?,?,?,?,?,?,?,?)`,
	"commtask": `INSERT INTO COMMUNICATION_TASK_INFO VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)`,
	"py":       `INSERT INTO PYTORCH_API VALUES (?,?,?,?,?,?,?,?,?,?,?)`,
	"conn":     `INSERT INTO CONNECTION_IDS VALUES (?,?)`,
	"step":     `INSERT INTO STEP_TIME VALUES (?,?,?)`,
	"cann":     `INSERT INTO CANN_API VALUES (?,?,?,?,?,?)`,
}

func createDB(path string, schema []string) (*sql.DB, *sql.Tx, error) {
	os.Remove(path)
	abs, err := filepath.Abs(path) // a relative path would become the URI's authority
	if err != nil {
		return nil, nil, err
	}
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(abs)}
	db, err := sql.Open("sqlite", u.String())
	if err != nil {
		return nil, nil, err
	}
	db.SetMaxOpenConns(1)
	tx, err := db.Begin()
	if err != nil {
		db.Close()
		return nil, nil, err
	}
	for _, q := range schema {
		if _, err := tx.Exec(q); err != nil {
			tx.Rollback()
			db.Close()
			return nil, nil, fmt.Errorf("tracegen: %s: %w", path, err)
		}
	}
	return db, tx, nil
}

func newDBOut(path string, info *rankInfo) (*dbOut, error) {
	db, tx, err := createDB(path, torchDBSchema)
	if err != nil {
		return nil, err
	}
	d := &dbOut{path: path, db: db, tx: tx, st: map[string]*sql.Stmt{}, strs: map[string]int64{},
		tid: info.pid<<32 | info.pid, gpid: info.pid, first: -1}
	for k, q := range dbInserts {
		s, err := tx.Prepare(q)
		if err != nil {
			tx.Rollback()
			db.Close()
			return nil, err
		}
		d.st[k] = s
	}
	return d, nil
}

// str interns s into STRING_IDS.
func (d *dbOut) str(s string) int64 {
	if id, ok := d.strs[s]; ok {
		return id
	}
	id := int64(len(d.strs))
	d.strs[s] = id
	return id
}

func (d *dbOut) exec(k string, args ...any) {
	if d.err != nil {
		return
	}
	if _, err := d.st[k].Exec(args...); err != nil {
		d.err = fmt.Errorf("tracegen: %s: %s: %w", d.path, k, err)
	}
}

// host writes one step's torch ops (PYTORCH_API, times as TEXT like the
// real sample), their CONNECTION_IDS links and the STEP_TIME row.
func (d *dbOut) host(st *rankStep, steps bool) {
	op := func(name string, ts, dur int64, conn any) {
		d.exec("py", strconv.FormatInt(ts, 10), strconv.FormatInt(ts+dur, 10), d.tid, conn, d.str(name), nil, nil, nil, nil, nil, 50001)
	}
	if steps {
		d.exec("step", st.step, st.psStart, st.psEnd)
		op("ProfilerStep#"+strconv.Itoa(st.step), st.psStart, st.psEnd-st.psStart, nil)
	}
	for i := range st.host {
		h := &st.host[i]
		if h.task < 0 {
			op(h.name, h.ts, h.dur, nil)
			continue
		}
		c := d.pyConn
		d.pyConn++
		op(h.name, h.ts, h.dur, c)
		d.exec("conn", c, st.tasks[h.task].conn)
	}
}

// device writes one step's device tasks and collectives.
func (d *dbOut) device(o *rankOut, st *rankStep) {
	ri := o.info
	opIDs := map[int]int64{}
	for i := range st.tasks {
		t := &st.tasks[i]
		if d.first < 0 || t.start < d.first {
			d.first = t.start
		}
		d.last = max(d.last, t.start+t.dur)
		if t.kind == tkHCCL {
			d.opID++
			opIDs[i] = d.opID
			g := ri.coll[t.c.group]
			dt, ok := hcclDataTypes[t.c.dtype]
			if !ok {
				dt = 65534
			}
			d.exec("commop", d.str(ri.opName(t)), t.start, t.start+t.dur, t.conn, d.str(g.Comm), d.opID, 0, 0, dt,
				d.str(t.c.alg), t.count, d.str(t.c.opType))
		}
	}
	for i := range st.tasks {
		t := &st.tasks[i]
		if t.kind == tkHCCL {
			continue
		}
		d.gtid++
		ctx := t.subID
		modelID := int64(4294967295)
		if t.kind == tkKernel {
			modelID = int64(t.modelID)
		}
		d.exec("task", t.start, t.start+t.dur, ri.device, t.conn, d.gtid, d.gpid, d.str(dbTaskType(t)), ctx, t.stream, t.taskID, modelID)
		switch t.kind {
		case tkKernel:
			sh := o.shapeOf(t)
			d.exec("compute", d.str(t.k.name), d.gtid, t.k.block, t.k.mixBlock, d.str(t.k.taskType), d.str(t.k.opType),
				d.str(sh.inFormats), d.str(sh.inTypes), d.str(quoted(sh.inShapes)), d.str(sh.outFormats), d.str(sh.outTypes), d.str(quoted(sh.outShapes)), d.str(""))
		case tkAivComm:
			d.exec("compute", d.str(t.name), d.gtid, 0, 0, d.str(t.taskType), d.str(t.name), d.str(""), d.str(""), d.str(""), d.str(""), d.str(""), d.str(""), d.str(""))
		case tkSubtask:
			g := ri.coll[t.c.group]
			d.exec("commtask", d.str(t.planeName), d.gtid, d.str(t.planeName), t.plane, d.str(g.Comm), 0, 65535, g.Rank, t.peer, 0, t.size, 65535, 1, opIDs[t.parent])
		}
	}
	if st.syncDur > 0 {
		d.exec("cann", st.syncTS, st.syncTS+st.syncDur, 20000, d.tid, int64(st.syncConn), d.str("aclrtSynchronizeStream"))
	}
	for i := range o.ov {
		d.overlap(o, &o.ov[i])
	}
}

// overlap writes one Overlap Analysis slice to OVERLAP_ANALYSIS
// (deviceId, startNs, endNs, type: 0 Computing, 1 Communication, 2
// Communication(Not Overlapped), 3 Free), which msprof's DB writer
// writes from CANN 8.5 (the writer of the extremes window,
// Scenario.extremesWindow); nothing for an older writer.
func (d *dbOut) overlap(o *rankOut, e *ovEvent) {
	if d.err != nil || !o.s.extremesWindow() {
		return
	}
	if d.ovStmt == nil {
		const q = `CREATE TABLE OVERLAP_ANALYSIS (id INTEGER PRIMARY KEY AUTOINCREMENT, deviceId INTEGER, startNs INTEGER, endNs INTEGER, type INTEGER)`
		if _, err := d.tx.Exec(q); err != nil {
			d.err = fmt.Errorf("tracegen: %s: %w", d.path, err)
			return
		}
		if d.ovStmt, d.err = d.tx.Prepare(`INSERT INTO OVERLAP_ANALYSIS (deviceId, startNs, endNs, type) VALUES (?,?,?,?)`); d.err != nil {
			return
		}
	}
	if _, err := d.ovStmt.Exec(o.info.device, e.start, e.start+e.dur, e.tid); err != nil {
		d.err = fmt.Errorf("tracegen: %s: OVERLAP_ANALYSIS: %w", d.path, err)
	}
}

// close writes the tables known at the end and commits.
func (d *dbOut) close(ri *rankInfo, env obj) error {
	defer d.db.Close()
	if d.err != nil {
		d.tx.Rollback()
		return d.err
	}
	x := func(q string, args ...any) {
		if d.err == nil {
			if _, err := d.tx.Exec(q, args...); err != nil {
				d.err = fmt.Errorf("tracegen: %s: %w", d.path, err)
			}
		}
	}
	envJSON, _ := json.Marshal(env)
	pgi := map[string]any{}
	for _, g := range ri.groups {
		pgi[g.Comm] = map[string]any{"group_name": g.Name, "group_rank": g.Rank, "global_ranks": g.GlobalRanks}
	}
	pgiJSON, _ := json.Marshal(pgi)
	for _, kv := range [][2]string{{"SCHEMA_VERSION_MICRO", "0"}, {"SCHEMA_VERSION_MINOR", "0"}, {"SCHEMA_VERSION_MAJOR", "1"},
		{"SCHEMA_VERSION", "1.0.0"}, {"ENV_VARIABLES", string(envJSON)}, {"parallel_group_info", string(pgiJSON)}} {
		x(`INSERT INTO META_DATA VALUES (?,?)`, kv[0], kv[1])
	}
	x(`INSERT INTO RANK_DEVICE_MAP VALUES (?,?)`, ri.rank, ri.device)
	x(`INSERT INTO NPU_INFO VALUES (?,?)`, ri.device, "Ascend910B")
	x(`INSERT INTO HOST_INFO VALUES (?,?)`, "3538958389648580163", "node0")
	x(`INSERT INTO SESSION_TIME_INFO VALUES (?,?)`, d.first-20_000_000, d.last+20_000_000)
	for id, n := range map[int]string{5000: "runtime", 5500: "hccl", 10000: "node", 15000: "model", 20000: "acl", 50001: "op", 50002: "queue", 50003: "trace", 50004: "mstx"} {
		x(`INSERT INTO ENUM_API_TYPE VALUES (?,?)`, id, n)
	}
	for n, id := range hcclDataTypes {
		if n != "BF16" {
			x(`INSERT INTO ENUM_HCCL_DATA_TYPE VALUES (?,?)`, id, n)
		}
	}
	x(`INSERT INTO ENUM_HCCL_DATA_TYPE VALUES (?,?)`, 65534, "N/A")
	x(`INSERT INTO ENUM_HCCL_DATA_TYPE VALUES (?,?)`, 65535, "INVALID_TYPE")
	strs := make([]string, 0, len(d.strs))
	for s := range d.strs {
		strs = append(strs, s)
	}
	sort.Slice(strs, func(i, j int) bool { return d.strs[strs[i]] < d.strs[strs[j]] })
	for _, s := range strs {
		x(`INSERT INTO STRING_IDS VALUES (?,?)`, d.strs[s], s)
	}
	if d.err != nil {
		d.tx.Rollback()
		return d.err
	}
	return d.tx.Commit()
}

// writeAnalysisDB writes analysis.db with the StepTraceTime rows (µs).
func writeAnalysisDB(path string, s Scenario, acc *truthAcc) error {
	db, tx, err := createDB(path, analysisDBSchema)
	if err != nil {
		return err
	}
	defer db.Close()
	rows := acc.rows
	if !s.ProfilerSteps {
		win := acc.win.end - acc.win.start
		rows = []stepRow{{compute: acc.computeNs, notOv: acc.notOvNs, comm: acc.commNs, free: win - acc.unionNs, stage: win}}
	}
	for _, r := range rows {
		if _, err := tx.Exec(`INSERT INTO StepTraceTime VALUES (?,?,?,?,?,?,?,?,?,?)`, r.step, us(r.compute), us(r.notOv),
			us(r.comm-r.notOv), us(r.comm), us(r.free), us(r.stage), 0, us(r.notOv), us(r.preparing)); err != nil {
			tx.Rollback()
			return err
		}
	}
	return tx.Commit()
}

// dbPaths returns the DB paths of a rank folder.
func dbPaths(rdir string, rank int) (profiler, analysis string) {
	out := filepath.Join(rdir, OutputDir)
	return filepath.Join(out, "ascend_pytorch_profiler_"+strconv.Itoa(rank)+".db"), filepath.Join(out, "analysis.db")
}
