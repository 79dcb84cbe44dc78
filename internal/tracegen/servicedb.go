package tracegen

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
)

// ServiceDB is the profiler.db spelling: the parse output's SQLite tables
// (request, batch, kvcache, forward) as pandas' to_sql writes them, with
// the column names before the CSVs' renames (no unit suffix, durations in
// ms, times as datetime text; kvcache's cut to the millisecond).
const ServiceDB = "profiler.db"

// dbColumn is a CSV header cell's profiler.db column: the writer renames
// its table columns only for the CSV and the views.
func dbColumn(h string) string {
	if i := strings.IndexByte(h, '('); i > 0 {
		h = h[:i]
	}
	switch h {
	case "start_time":
		return "start_datetime"
	case "end_time":
		return "end_datetime"
	case "total_batch_size":
		return "batch_size"
	}
	return h
}

// splitLine splits one line of the CSVs this package writes (a cell in
// double quotes holds commas, never quotes).
func splitLine(line string) []string {
	var out []string
	for len(line) > 0 {
		if line[0] == '"' {
			j := strings.IndexByte(line[1:], '"')
			out = append(out, line[1:1+j])
			line = line[2+j:]
			line = strings.TrimPrefix(line, ",")
			continue
		}
		j := strings.IndexByte(line, ',')
		if j < 0 {
			out = append(out, line)
			break
		}
		out = append(out, line[:j])
		line = line[j+1:]
	}
	return out
}

// dbValue is a cell as pandas would store it: INTEGER, REAL or TEXT.
func dbValue(s string) any {
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return n
	}
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		return f
	}
	return s
}

// writeServiceDB writes the datetime spelling's tables into profiler.db.
func writeServiceDB(dir string, tables map[string]string) error {
	var schema []string
	type ins struct {
		table string
		cols  int
		rows  [][]string
	}
	var all []ins
	for _, name := range []string{"request", "batch", "kvcache", "forward"} {
		body, ok := tables[name+".csv"]
		if !ok {
			continue
		}
		lines := strings.Split(strings.TrimSuffix(body, "\n"), "\n")
		head := splitLine(lines[0])
		cols := make([]string, len(head))
		for i, h := range head {
			cols[i] = `"` + dbColumn(h) + `"`
		}
		schema = append(schema, fmt.Sprintf("CREATE TABLE %s (%s)", name, strings.Join(cols, ", ")))
		in := ins{table: name, cols: len(cols)}
		for _, l := range lines[1:] {
			cells := splitLine(l)
			if name == "kvcache" {
				// the writer cuts kvcache's datetime to the millisecond
				for i, h := range head {
					if dbColumn(h) == "start_datetime" {
						cells[i] = cells[i][:len(cells[i])-3]
					}
				}
			}
			in.rows = append(in.rows, cells)
		}
		all = append(all, in)
	}
	db, tx, err := createDB(filepath.Join(dir, ServiceDB), schema)
	if err != nil {
		return err
	}
	defer db.Close()
	for _, in := range all {
		q := "INSERT INTO " + in.table + " VALUES (" + strings.TrimSuffix(strings.Repeat("?,", in.cols), ",") + ")"
		for _, r := range in.rows {
			args := make([]any, len(r))
			for i, c := range r {
				args[i] = dbValue(c)
			}
			if _, err := tx.Exec(q, args...); err != nil {
				tx.Rollback()
				return fmt.Errorf("tracegen: %s: %w", in.table, err)
			}
		}
	}
	return tx.Commit()
}
