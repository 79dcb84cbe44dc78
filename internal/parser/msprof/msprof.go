// Package msprof finds and reads the files of an msprof PROF_* folder's
// text export (PROF_*/mindstudio_profiler_output, docs/formats.md#folder-names;
// op_summary's columns: docs/formats.md#kernel-details-and-op-summary-columns):
// the msprof_*.json timeline (read by package traceview through SliceReader,
// which joins its msprof_slice_* files into one JSON array), op_summary_*.csv
// (read by summary.ReadKernelDetails), task_time_*.csv,
// communication_statistic_*.csv, api_statistic_*.csv and
// PROF_*/analyze/communication*.json. Package parser puts them together
// into one model.Rank.
package msprof

// kept: its standard-library imports resemble internal/tracegen/service.go's; an import block cannot be shared
import (
	"bufio"
	"encoding/csv"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/npuprof/npuprof/internal/infile"
	"github.com/npuprof/npuprof/internal/lazyre"
	"github.com/npuprof/npuprof/internal/parser/model"
	"github.com/npuprof/npuprof/internal/parser/summary"
	"github.com/npuprof/npuprof/internal/parser/timeparse"
)

// OutputDir is the text export folder inside PROF_*.
const OutputDir = "mindstudio_profiler_output"

// Files are the text-export files of one PROF_* folder. Each list holds the
// slices of the newest export, in slice order.
type Files struct {
	Timeline    []string // msprof_*.json / msprof_slice_{k}_*.json
	OpSummary   []string // op_summary_*.csv (+ slices)
	TaskTime    []string // task_time_*.csv (+ slices)
	CommStat    []string // communication_statistic_*.csv
	APIStat     []string // api_statistic_*.csv
	OpStat      []string // op_statistic_*.csv
	CommJSON    string   // analyze/communication.json
	Devices     []int    // device_{id} folders
	OutputFound bool     // mindstudio_profiler_output exists
}

// {name}[_slice_{k}][_...]_{ts}.{ext}
var reSlice = lazyre.New(`_slice_(\d+)`)
var reTS = lazyre.New(`_(\d{8,})\.(json|csv)$`)

type sliceFile struct {
	path  string
	ts    string
	slice int
}

// pick returns the slices of the newest export among files named
// prefix...ext (prefix "msprof_" also matches "msprof_slice_").
func pick(names []string, dir, prefix, ext string) []string {
	var fs []sliceFile
	for _, n := range names {
		if !strings.HasPrefix(n, prefix) || !strings.HasSuffix(n, ext) {
			continue
		}
		f := sliceFile{path: filepath.Join(dir, n)}
		if m := reTS().FindStringSubmatch(n); m != nil {
			f.ts = m[1]
		}
		if m := reSlice().FindStringSubmatch(n); m != nil {
			f.slice, _ = strconv.Atoi(m[1])
		}
		fs = append(fs, f)
	}
	if len(fs) == 0 {
		return nil
	}
	// Prefer a sliced export (all its slices, in order); with several
	// exports, keep the newest file of each slice index. Without slices,
	// the newest single file.
	sliced := false
	for _, f := range fs {
		sliced = sliced || reSlice().MatchString(filepath.Base(f.path))
	}
	best := map[int]sliceFile{}
	for _, f := range fs {
		if sliced != reSlice().MatchString(filepath.Base(f.path)) {
			continue
		}
		if b, ok := best[f.slice]; !ok || f.ts > b.ts || (f.ts == b.ts && f.path > b.path) {
			best[f.slice] = f
		}
	}
	out := make([]string, 0, len(best))
	for _, k := range slices.Sorted(maps.Keys(best)) {
		out = append(out, best[k].path)
	}
	return out
}

var reDevice = lazyre.New(`^device_(\d{1,2})$`)

// Find lists the text-export files of the PROF_* folder prof.
func Find(prof string) Files {
	var f Files
	out := filepath.Join(prof, OutputDir)
	ents, err := os.ReadDir(out)
	if err == nil {
		f.OutputFound = true
	}
	var names []string
	for _, e := range ents {
		if !e.IsDir() {
			names = append(names, e.Name())
		}
	}
	f.Timeline = pick(names, out, "msprof_", ".json")
	f.OpSummary = pick(names, out, "op_summary_", ".csv")
	f.TaskTime = pick(names, out, "task_time_", ".csv")
	f.CommStat = pick(names, out, "communication_statistic_", ".csv")
	f.APIStat = pick(names, out, "api_statistic_", ".csv")
	f.OpStat = pick(names, out, "op_statistic_", ".csv")
	for _, n := range []string{"communication.json"} {
		if p := filepath.Join(prof, "analyze", n); fileExists(p) {
			f.CommJSON = p
		}
	}
	if f.CommJSON == "" {
		if m, _ := filepath.Glob(filepath.Join(prof, "analyze", "communication*.json")); len(m) > 0 {
			for _, p := range m {
				if !strings.Contains(filepath.Base(p), "matrix") {
					f.CommJSON = p
					break
				}
			}
		}
	}
	f.Devices = Devices(prof)
	return f
}

// Devices lists the device ids of the PROF_* folder prof's device_{id}
// folders, in order.
func Devices(prof string) []int {
	var devs []int
	top, _ := os.ReadDir(prof)
	for _, e := range top {
		if m := reDevice().FindStringSubmatch(e.Name()); m != nil && e.IsDir() {
			d, _ := strconv.Atoi(m[1])
			devs = append(devs, d)
		}
	}
	slices.Sort(devs)
	return devs
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir()
}

// SliceReader streams several JSON-array files as one array: the closing
// ']' of every file but the last and the opening '[' of every file but the
// first become a ',' (an empty slice leaves ",,", which the trace reader
// skips). Memory stays at one read buffer.
type SliceReader struct {
	paths []string
	i     int
	f     *infile.File
	br    *bufio.Reader
	state int // 0: before the first byte of a file; 1: inside
	held  []byte
	out   []byte
}

// NewSliceReader returns a reader over the files in order.
func NewSliceReader(paths []string) *SliceReader { return &SliceReader{paths: paths} }

// Close closes the open file.
func (s *SliceReader) Close() error {
	if s.f != nil {
		err := s.f.Close()
		s.f = nil
		return err
	}
	return nil
}

func (s *SliceReader) Read(p []byte) (int, error) {
	for len(s.out) == 0 {
		if err := s.fill(); err != nil {
			return 0, err
		}
	}
	n := copy(p, s.out)
	s.out = s.out[n:]
	return n, nil
}

// fill produces the next chunk into s.out.
func (s *SliceReader) fill() error {
	if s.f == nil {
		if s.i >= len(s.paths) {
			return io.EOF
		}
		p := s.paths[s.i]
		f, err := infile.Open(p, infile.Profile, infile.Opts{Root: filepath.Dir(p)})
		if err != nil {
			return err
		}
		s.f, s.br, s.state = f, bufio.NewReaderSize(f, 1<<20), 0
		if s.i > 0 {
			// drop the leading whitespace, BOM and '[' of a later slice
			for {
				b, err := s.br.ReadByte()
				if err != nil {
					break
				}
				if b == '[' {
					break
				}
				if b == ' ' || b == '\n' || b == '\r' || b == '\t' || b == 0xEF || b == 0xBB || b == 0xBF {
					continue
				}
				s.br.UnreadByte()
				break
			}
			s.out = append(s.out[:0], ',')
		}
	}
	buf := make([]byte, 1<<16)
	n, err := s.br.Read(buf)
	chunk := append(s.held, buf[:n]...)
	s.held = nil
	last := s.i == len(s.paths)-1
	if err == io.EOF {
		if !last {
			// drop the closing ']' (and trailing whitespace) of this slice
			k := len(chunk) - 1
			for k >= 0 && (chunk[k] == ' ' || chunk[k] == '\n' || chunk[k] == '\r' || chunk[k] == '\t') {
				k--
			}
			if k >= 0 && chunk[k] == ']' {
				chunk = chunk[:k]
			}
		}
		s.out = append(s.out, chunk...)
		s.f.Close()
		s.f = nil
		s.i++
		return nil
	}
	if err != nil {
		return err
	}
	if !last {
		// hold back the tail from the last non-space byte: it may be the
		// closing ']'
		k := len(chunk) - 1
		for k >= 0 && (chunk[k] == ' ' || chunk[k] == '\n' || chunk[k] == '\r' || chunk[k] == '\t') {
			k--
		}
		if k >= 0 {
			s.held = append([]byte(nil), chunk[k:]...)
			chunk = chunk[:k]
		}
	}
	s.out = append(s.out, chunk...)
	return nil
}

// TaskRow is one row of task_time_*.csv: every device task, EVENT_WAIT
// included.
type TaskRow struct {
	Name     string // kernel_name ("" for N/A)
	TaskType string // kernel_type
	Stream   int32
	TaskID   int64 // task_id, -1 when absent
	Start    int64
	Dur      int64
	Line     int // 1-based line of the row
}

var taskCols = map[string][]string{
	"name":   {"kernel_name"},
	"type":   {"kernel_type"},
	"stream": {"stream_id"},
	"task":   {"task_id"},
	"start":  {"task_start(us)"},
	"stop":   {"task_stop(us)"},
	"time":   {"task_time(us)"},
}

func cell(rec []string, idx map[string]int, k string) string {
	i, ok := idx[k]
	if !ok || i >= len(rec) {
		return ""
	}
	s := strings.TrimSpace(rec[i])
	if s == "N/A" {
		return ""
	}
	return s
}

// newCSV returns the lenient CSV reader of task_time and the statistics
// files: variable cell counts, lazy quotes; its LineTracker says where the
// input ended.
func newCSV(r io.Reader) (*csv.Reader, *summary.LineTracker) {
	lt := summary.NewLineTracker(r)
	cr := csv.NewReader(lt)
	cr.FieldsPerRecord = -1
	cr.LazyQuotes = true
	cr.ReuseRecord = true
	return cr, lt
}

// ReadTaskTime streams task_time_*.csv, calling fn for each row; malformed
// rows are counted, not fatal. A row with more or fewer cells than the
// header (a duplicated or cut chunk of the file, which would shift its
// cells), or whose task_time(us) is not its stop minus its start (cells of
// two rows joined into one), is malformed.
func ReadTaskTime(r io.Reader, file string, fn func(*TaskRow)) (summary.RowIssues, error) {
	var issues summary.RowIssues
	cr, lt := newCSV(r)
	header, err := cr.Read()
	if err != nil {
		return issues, fmt.Errorf("%s: expected a task_time CSV header: %w", file, err)
	}
	header = append([]string(nil), header...)
	idx := summary.ExactHeaderIndex(header, taskCols)
	if err := summary.NeedColumns(file, header, idx, taskCols, true, "name", "type", "start"); err != nil {
		return issues, err
	}
	_, haveStop := idx["stop"]
	_, haveTime := idx["time"]
	if !haveStop && !haveTime {
		return issues, fmt.Errorf("%s: %w: no task_stop(us) or task_time(us) column", file, summary.ErrUnknownHeader)
	}
	var row TaskRow
	var tabs tabStyle
	err = summary.EachRow(cr, file, &issues, func(rec []string, line int) {
		if len(rec) == 1 && strings.TrimSpace(rec[0]) == "" {
			return
		}
		if !summary.CellCountOK(rec, len(header)) {
			issues.Skip(line, "wrong number of cells")
			return
		}
		st, ok := timeparse.MicrosToNanos([]byte(cell(rec, idx, "start")))
		var dur int64
		if ok && haveStop {
			var en int64
			en, ok = timeparse.MicrosToNanos([]byte(cell(rec, idx, "stop")))
			dur = en - st
			if t, tok := timeparse.MicrosToNanos([]byte(cell(rec, idx, "time"))); ok && haveTime && tok && !durAgrees(dur, t) {
				issues.Skip(line, "task_time(us) is not task_stop(us) - task_start(us)")
				return
			}
		} else if ok {
			dur, ok = timeparse.MicrosToNanos([]byte(cell(rec, idx, "time")))
		}
		if !ok || dur < 0 {
			issues.Skip(line, "non-numeric time")
			return
		}
		if !tabs.agree(rec, idx, haveStop) {
			// the bytes before the tab cut with it: one writer ends
			// every time cell alike
			issues.Skip(line, "a task_start(us) or task_stop(us) cell ends unlike the first row's (a trailing tab)")
			return
		}
		row = TaskRow{Name: cell(rec, idx, "name"), TaskType: cell(rec, idx, "type"), Stream: -1, TaskID: -1, Start: st, Dur: dur, Line: line}
		if v, ok := timeparse.ParseInt([]byte(cell(rec, idx, "task"))); ok {
			row.TaskID = v
		}
		if s := cell(rec, idx, "stream"); s != "" {
			v, ok := timeparse.ParseInt([]byte(s))
			if !ok || v < 0 || v > math.MaxInt32 {
				issues.Skip(line, "non-numeric stream_id")
				return
			}
			row.Stream = int32(v)
		}
		fn(&row)
	})
	if err != nil {
		return issues, err
	}
	issues.CutLine = lt.CutLine()
	return issues, nil
}

// tabStyle is whether a task_time file's time cells end with a tab
// (msprof writes one after each; files of other writers or versions may
// not): set by the first row read, which every other row must match. A
// row whose cell lost its last bytes with the tab (a cut or a deletion
// that leaves a number, a few ns off) no longer does.
type tabStyle uint8 // 0 not known yet, 1 with a tab, 2 without

// agree reports whether the start (and stop) cells of rec end as the
// first row's did.
func (t *tabStyle) agree(rec []string, idx map[string]int, haveStop bool) bool {
	style := func(c string) tabStyle {
		if strings.HasSuffix(c, "\t") {
			return 1
		}
		return 2
	}
	st := style(rec[idx["start"]])
	if *t == 0 {
		*t = st
	}
	if st != *t {
		return false
	}
	return !haveStop || style(rec[idx["stop"]]) == *t
}

// durAgrees: task_time(us) is the task's stop minus its start, each cell
// written to the ns; 10 ns and a thousandth of the duration allow for any
// rounding, and a row whose cells came from two tasks (a duplicated or
// damaged chunk of the file) is far off.
func durAgrees(stopMinusStart, taskTime int64) bool {
	d := stopMinusStart - taskTime
	if d < 0 {
		d = -d
	}
	return d <= 10+taskTime/1000
}

// ReadCommStatistic reads communication_statistic_*.csv (per collective op
// type: count and total µs).
func ReadCommStatistic(r io.Reader, file string) ([]model.StatRow, summary.RowIssues, error) {
	return readStat(r, file, statCols("OP Type", "", "Total Time(us)"), "")
}

// ReadAPIStatistic reads api_statistic_*.csv (per host API: level, count,
// total µs).
func ReadAPIStatistic(r io.Reader, file string) ([]model.StatRow, summary.RowIssues, error) {
	cols := statCols("API Name", "Level", "Time(us)")
	cols["max"] = []string{"Max(us)"}
	return readStat(r, file, cols, "level")
}

// ReadOpStatistic reads op_statistic.csv / op_statistic_*.csv (per op type
// and core type: count and total µs; collectives are not in it). Level is
// the Core Type, Name the OP Type.
func ReadOpStatistic(r io.Reader, file string) ([]model.StatRow, summary.RowIssues, error) {
	cols := statCols("OP Type", "Core Type", "Total Time(us)")
	cols["device"] = []string{"Device_id"}
	return readStat(r, file, cols, "level")
}

// statCols names a statistics file's columns: name, level ("" when the
// file has none), count ("Count") and total.
func statCols(name, level, total string) map[string][]string {
	cols := map[string][]string{"name": {name}, "count": {"Count"}, "total": {total}}
	if level != "" {
		cols["level"] = []string{level}
	}
	return cols
}

// readStat reads a statistic CSV; rows it cannot read are skipped and
// counted, and a file cut inside its last line is said in the issues.
func readStat(r io.Reader, file string, cols map[string][]string, level string) ([]model.StatRow, summary.RowIssues, error) {
	var issues summary.RowIssues
	cr, lt := newCSV(r)
	header, err := cr.Read()
	if err != nil {
		return nil, issues, fmt.Errorf("%s: expected a CSV header: %w", file, err)
	}
	idx := summary.ExactHeaderIndex(header, cols)
	if err := summary.NeedColumns(file, header, idx, cols, false, "name", "count", "total"); err != nil {
		return nil, issues, err
	}
	var out []model.StatRow
	err = summary.EachRow(cr, file, &issues, func(rec []string, line int) {
		n, ok1 := timeparse.ParseInt([]byte(cell(rec, idx, "count")))
		t, ok2 := timeparse.MicrosToNanos([]byte(cell(rec, idx, "total")))
		if !ok1 || !ok2 {
			issues.Skip(line, "non-numeric count or time")
			return
		}
		row := model.StatRow{Name: cell(rec, idx, "name"), Count: int(n), Total: t}
		if m, ok := timeparse.MicrosToNanos([]byte(cell(rec, idx, "max"))); ok && m > 0 {
			row.Max = m
		}
		if level != "" {
			row.Level = cell(rec, idx, level)
		}
		row.Device = strings.TrimSpace(cell(rec, idx, "device"))
		out = append(out, row)
	})
	if err != nil {
		return out, issues, err
	}
	issues.CutLine = lt.CutLine()
	return out, issues, nil
}

// ReadCommunication reads msprof's analyze/communication.json, which is
// keyed by op directly ({"op@hash": {"Communication Time Info": ...},
// "Total Op Info": ...}), or the torch_npu shape with step and kind levels:
// streamed, in memory that grows with the ops kept, not with the file
// (summary.ReadMsprofCommunication).
func ReadCommunication(r io.Reader, file string) ([]model.CommOpInfo, error) {
	return summary.ReadMsprofCommunication(r, file)
}
