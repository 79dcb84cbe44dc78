// Package service reads MS Service Profiler's parse output
// (`python -m ms_service_profiler.parse`, docs/formats.md#service-profiles):
// request.csv, batch.csv, kvcache.csv and forward.csv, or the same tables
// of profiler.db when a CSV is absent, in every version's column spelling,
// into model.ServiceProfile.
//
// Rows are read one at a time into the model's columns, sized once from
// the file's line count. A row whose cell does not parse is skipped and
// counted; a file that ends inside a row is cut: its complete rows are
// read and ServiceProfile.Issues names the file (partial, never silent).
package service

import (
	"cmp"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/npuprof/npuprof/internal/infile"
	"github.com/npuprof/npuprof/internal/parser/model"
	"github.com/npuprof/npuprof/internal/parser/sqlitedb"
)

// Table files of the parse output, in the order read.
const (
	RequestCSV = "request.csv"
	BatchCSV   = "batch.csv"
	KVCacheCSV = "kvcache.csv"
	ForwardCSV = "forward.csv"
	ProfilerDB = "profiler.db"
)

// tables pairs each CSV with its profiler.db table.
var tables = []struct{ csv, table string }{
	{RequestCSV, "request"}, {BatchCSV, "batch"}, {KVCacheCSV, "kvcache"}, {ForwardCSV, "forward"},
}

// Is reports whether dir holds a service profile: request.csv or
// batch.csv, or profiler.db beside a chrome_tracing.json.
func Is(dir string) bool {
	for _, n := range []string{RequestCSV, BatchCSV} {
		if st, err := os.Stat(filepath.Join(dir, n)); err == nil && st.Mode().IsRegular() {
			return true
		}
	}
	_, e1 := os.Stat(filepath.Join(dir, ProfilerDB))
	_, e2 := os.Stat(filepath.Join(dir, "chrome_tracing.json"))
	return e1 == nil && e2 == nil
}

// ErrNoService: the folder holds none of the service tables.
var ErrNoService = errors.New("no service profile (request.csv, batch.csv, kvcache.csv, forward.csv or profiler.db)")

// Read reads the service profile in dir.
func Read(dir string) (*model.ServiceProfile, error) {
	p := &model.ServiceProfile{Source: dir, Spellings: map[string]string{}}
	if st, err := os.Stat(dir); err == nil && !st.IsDir() {
		what := "a file"
		if !st.Mode().IsRegular() {
			what = infile.What(st.Mode())
		}
		return nil, fmt.Errorf("%s is %s, not a folder: a service profile is a folder of request.csv, batch.csv, ... or profiler.db", dir, what)
	}
	var fromDB []int
	for i, t := range tables {
		path := filepath.Join(dir, t.csv)
		if err := infile.Check(path, infile.Opts{Root: dir}); err != nil {
			switch {
			case errors.Is(err, fs.ErrNotExist):
			case linkedOut(path, dir):
				// a link out of the folder: not read, nothing of it quoted
				p.Issues = append(p.Issues, model.ServiceFileIssue{File: t.csv, Unread: err.Error()})
			default:
				// a FIFO, a device, a socket, a folder, permission denied:
				// refused with the path (exit 2), never opened
				return nil, err
			}
			fromDB = append(fromDB, i)
			continue
		}
		s := newSink(p, i)
		is, err := readCSV(path, t.csv, s)
		if err != nil {
			if is.cut || errors.Is(err, errNoHeader) {
				// an empty or headless file: nothing of it is read
				p.Issues = append(p.Issues, model.ServiceFileIssue{File: t.csv, Cut: is.cut, Unread: err.Error()})
				continue
			}
			return nil, err
		}
		p.Files = append(p.Files, t.csv)
		p.Spellings[t.csv] = spellingOf(s)
		if is.cut || is.bad > 0 {
			p.Issues = append(p.Issues, model.ServiceFileIssue{File: t.csv, Cut: is.cut, BadRows: is.bad, FirstBadLine: is.firstBadLine})
		}
	}
	if len(fromDB) > 0 {
		if err := readDB(p, dir, fromDB); err != nil {
			return nil, err
		}
	}
	if len(p.Files) == 0 {
		if len(p.Issues) > 0 {
			is := p.Issues[0]
			return nil, fmt.Errorf("%s: %w: %s: %s", dir, ErrNoService, is.File, cmp.Or(is.Unread, "no complete row"))
		}
		return nil, fmt.Errorf("%s: %w", dir, ErrNoService)
	}
	return p, nil
}

func newSink(p *model.ServiceProfile, table int) sink {
	switch table {
	case 0:
		return &requestSink{r: &p.Requests}
	case 1:
		return &batchSink{b: &p.Batches}
	case 2:
		return &kvSink{k: &p.KV}
	}
	return &forwardSink{f: &p.Forwards}
}

// spellingOf names a CSV's spelling from the unit of its time column.
func spellingOf(s sink) string {
	var f field
	switch s := s.(type) {
	case *requestSink:
		f = s.start
		if f.i < 0 {
			f = s.e2e
		}
	case *batchSink:
		f = s.start
	case *kvSink:
		f = s.time
	case *forwardSink:
		f = s.start
	}
	switch f.unit {
	case unitMicros:
		return model.ServiceSpellingMicros
	case unitMillis:
		return model.ServiceSpellingMillis
	}
	return model.ServiceSpellingDatetime
}

// linkedOut: path is a regular file reached through a symbolic link that
// leads outside dir (not read; a link to a device is refused as one).
func linkedOut(path, dir string) bool {
	st, err := os.Stat(path)
	return err == nil && st.Mode().IsRegular() && infile.Outside(path, dir)
}

// readDB reads the listed tables from profiler.db, when there is one.
func readDB(p *model.ServiceProfile, dir string, which []int) error {
	path := filepath.Join(dir, ProfilerDB)
	if err := infile.Check(path, infile.Opts{Root: dir}); err != nil {
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return nil
		case linkedOut(path, dir):
			p.Issues = append(p.Issues, model.ServiceFileIssue{File: ProfilerDB, Unread: err.Error()})
			return nil
		}
		// a FIFO or device would block SQLite or never end: refused
		return err
	}
	db, err := sqlitedb.Open(path)
	if err != nil {
		p.Issues = append(p.Issues, model.ServiceFileIssue{File: ProfilerDB, Unread: err.Error()})
		return nil
	}
	defer db.Close()
	have := map[string]bool{}
	rows, err := db.Query(`SELECT name FROM sqlite_master WHERE type IN ('table', 'view')`)
	if err != nil {
		p.Issues = append(p.Issues, model.ServiceFileIssue{File: ProfilerDB, Unread: err.Error()})
		return nil
	}
	for rows.Next() {
		var n string
		if rows.Scan(&n) == nil {
			have[n] = true
		}
	}
	rows.Close()
	for _, i := range which {
		t := tables[i]
		if !have[t.table] {
			continue
		}
		is, err := readTable(db, t.table, newSink(p, i))
		name := ProfilerDB + ":" + t.table
		if err != nil {
			p.Issues = append(p.Issues, model.ServiceFileIssue{File: name, BadRows: is.bad, FirstBadLine: is.firstBadLine, Unread: err.Error()})
			continue
		}
		p.Files = append(p.Files, name)
		p.Spellings[name] = model.ServiceSpellingDB
		if is.bad > 0 {
			p.Issues = append(p.Issues, model.ServiceFileIssue{File: name, BadRows: is.bad, FirstBadLine: is.firstBadLine})
		}
	}
	return nil
}

// readTable reads one table of the database through s, each value as the
// text a CSV would hold.
func readTable(db *sql.DB, table string, s sink) (issue, error) {
	var is issue
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM "` + table + `"`).Scan(&n); err == nil {
		s.grow(n)
	}
	rows, err := db.Query(`SELECT * FROM "` + table + `"`)
	if err != nil {
		return is, err
	}
	defer rows.Close()
	names, err := rows.Columns()
	if err != nil {
		return is, err
	}
	cols := make([]column, len(names))
	for i, n := range names {
		cols[i] = parseHeader(n)
	}
	if err := s.header(cols); err != nil {
		return is, err
	}
	vals := make([]any, len(names))
	ptrs := make([]any, len(names))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	cells := make([][]byte, len(names))
	var buf []byte
	line := 1
	for rows.Next() {
		line++
		if err := rows.Scan(ptrs...); err != nil {
			is.badRow(line)
			continue
		}
		buf = buf[:0]
		offs := make([]int, 0, len(vals)+1)
		for _, v := range vals {
			offs = append(offs, len(buf))
			buf = appendText(buf, v)
		}
		offs = append(offs, len(buf))
		for i := range cells {
			cells[i] = buf[offs[i]:offs[i+1]]
		}
		if !s.row(cells) {
			is.badRow(line)
		}
	}
	return is, rows.Err()
}

// appendText appends a database value as CSV-like text (NULL: empty).
func appendText(b []byte, v any) []byte {
	switch x := v.(type) {
	case nil:
		return b
	case int64:
		return strconv.AppendInt(b, x, 10)
	case float64:
		if math.IsNaN(x) {
			return b
		}
		return strconv.AppendFloat(b, x, 'f', -1, 64)
	case string:
		return append(b, x...)
	case []byte:
		return append(b, x...)
	case bool:
		if x {
			return append(b, '1')
		}
		return append(b, '0')
	}
	return append(b, fmt.Sprint(v)...)
}

// Find returns the service profile folder at or below root (root itself,
// else its subfolders up to two levels down, the first in name order), as
// it sits beside the torch_npu rank folders of one run; ok is false when
// there is none. Folders of rank captures (*_ascend_pt, *_ascend_ms,
// PROF_*) are not entered.
func Find(root string) (dir string, ok bool) {
	if Is(root) {
		return root, true
	}
	level := []string{root}
	for depth := 0; depth < 2; depth++ {
		var next []string
		for _, d := range level {
			entries, err := os.ReadDir(d)
			if err != nil {
				continue
			}
			for _, e := range entries {
				n := e.Name()
				if !e.IsDir() || strings.HasSuffix(n, "_ascend_pt") || strings.HasSuffix(n, "_ascend_ms") || strings.HasPrefix(n, "PROF_") {
					continue
				}
				sub := filepath.Join(d, n)
				if Is(sub) {
					return sub, true
				}
				next = append(next, sub)
			}
		}
		level = next
	}
	return "", false
}
