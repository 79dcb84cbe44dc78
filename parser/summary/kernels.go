// Package summary reads the profiler's summary files: kernel_details.csv
// (and msprof's op_summary), step_trace_time.csv, communication.json,
// profiler_info_*.json and profiler_metadata.json. Every reader streams,
// names the file in its errors, and counts the rows it had to skip.
package summary

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/npuprof/npuprof/parser/model"
	"github.com/npuprof/npuprof/parser/timeparse"
)

// KernelRow is one row of kernel_details.csv / op_summary_*.csv.
type KernelRow struct {
	StepID      int // -1 when absent or empty
	Name        string
	Type        string // op type; "" when N/A
	Core        string // Accelerator Core / Task Type; "" when N/A
	Start       int64  // ns
	Dur         int64  // ns
	Stream      int32  // -1 when N/A
	InputShapes string // without the literal outer quotes
	Line        int    // 1-based line of the row (header is line 1)
}

// IsCollective reports whether the row is an HCCL big op.
func (k *KernelRow) IsCollective() bool {
	return k.Core == "HCCL" || k.Core == "COMMUNICATION" || strings.HasPrefix(k.Type, "hcom_") || strings.HasPrefix(k.Name, "hcom_")
}

// RowIssues counts rows a reader skipped, with the first few line numbers.
type RowIssues struct {
	Skipped int
	Lines   []int
	Reasons map[string]int
}

func (ri *RowIssues) add(line int, reason string) {
	ri.Skipped++
	if len(ri.Lines) < 5 {
		ri.Lines = append(ri.Lines, line)
	}
	if ri.Reasons == nil {
		ri.Reasons = map[string]int{}
	}
	ri.Reasons[reason]++
}

// Warning turns the issues into a model warning (nil when none).
func (ri *RowIssues) Warning(file string) *model.Warning {
	if ri.Skipped == 0 {
		return nil
	}
	keys := make([]string, 0, len(ri.Reasons))
	for k := range ri.Reasons {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s: %d", k, ri.Reasons[k])
	}
	return &model.Warning{File: file, Message: "skipped malformed rows (" + strings.Join(parts, ", ") + ")", Count: ri.Skipped, Lines: ri.Lines}
}

// column name aliases across versions (FORMATS.md §4).
var kernelCols = map[string][]string{
	"step":   {"Step Id", "Step ID"},
	"name":   {"Name", "Op Name"},
	"type":   {"Type", "OP Type"},
	"core":   {"Accelerator Core", "Task Type"},
	"start":  {"Start Time(us)", "Task Start Time(us)"},
	"dur":    {"Duration(us)", "Task Duration(us)"},
	"stream": {"Stream ID", "Stream Id"},
	"shapes": {"Input Shapes"},
}

func headerIndex(header []string, aliases map[string][]string) map[string]int {
	idx := map[string]int{}
	for i, h := range header {
		h = strings.TrimSpace(strings.TrimPrefix(h, "\ufeff"))
		for k, names := range aliases {
			for _, n := range names {
				if h == n {
					if _, dup := idx[k]; !dup {
						idx[k] = i
					}
				}
			}
		}
	}
	return idx
}

// ErrUnknownHeader is returned when a CSV lacks the columns npuprof needs.
var ErrUnknownHeader = errors.New("unknown header")

func cell(rec []string, idx map[string]int, k string) string {
	i, ok := idx[k]
	if !ok || i >= len(rec) {
		return ""
	}
	return strings.TrimSpace(rec[i])
}

func na(s string) string {
	if s == "N/A" || s == "NA" {
		return ""
	}
	return s
}

// ReadKernelDetails streams kernel_details.csv (every header version:
// Level0 8 columns, Level1, 2023-era, new with Device_id) or op_summary,
// calling fn for each valid row. Rows with missing cells or non-numeric
// times are skipped and counted.
func ReadKernelDetails(r io.Reader, file string, fn func(*KernelRow)) (RowIssues, error) {
	var issues RowIssues
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	cr.LazyQuotes = true
	cr.ReuseRecord = true
	header, err := cr.Read()
	if err != nil {
		if err == io.EOF {
			return issues, fmt.Errorf("%s: empty file, expected a kernel_details.csv header", file)
		}
		return issues, fmt.Errorf("%s: reading header: %w", file, err)
	}
	header = append([]string(nil), header...)
	idx := headerIndex(header, kernelCols)
	for _, need := range []string{"name", "start", "dur"} {
		if _, ok := idx[need]; !ok {
			return issues, fmt.Errorf("%s: %w: no %q column (found %s)", file, ErrUnknownHeader, kernelCols[need][0], strings.Join(header, ","))
		}
	}
	var row KernelRow
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		line, _ := cr.FieldPos(0)
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				issues.add(pe.Line, "unparsable CSV")
				continue
			}
			return issues, fmt.Errorf("%s: %w", file, err)
		}
		if len(rec) == 1 && strings.TrimSpace(rec[0]) == "" {
			continue
		}
		if !cellCountOK(rec, len(header)) {
			issues.add(line, "wrong number of cells")
			continue
		}
		row = KernelRow{StepID: -1, Stream: -1, Line: line}
		row.Name = cell(rec, idx, "name")
		st, ok1 := timeparse.MicrosToNanos([]byte(cell(rec, idx, "start")))
		du, ok2 := timeparse.MicrosToNanos([]byte(cell(rec, idx, "dur")))
		if !ok1 || !ok2 || du < 0 {
			issues.add(line, "non-numeric time")
			continue
		}
		row.Start, row.Dur = st, du
		row.Type = na(cell(rec, idx, "type"))
		row.Core = na(cell(rec, idx, "core"))
		if s := cell(rec, idx, "step"); s != "" {
			if v, ok := timeparse.ParseInt([]byte(s)); ok {
				row.StepID = int(v)
			}
		}
		if s := na(cell(rec, idx, "stream")); s != "" {
			if v, ok := timeparse.ParseInt([]byte(s)); ok {
				row.Stream = int32(v)
			}
		}
		row.InputShapes = strings.Trim(na(cell(rec, idx, "shapes")), `"`)
		fn(&row)
	}
	return issues, nil
}

// cellCountOK accepts a row with exactly as many cells as the header, or
// with extra cells that are all empty (a trailing comma).
func cellCountOK(rec []string, n int) bool {
	if len(rec) < n {
		return false
	}
	for _, c := range rec[n:] {
		if strings.TrimSpace(c) != "" {
			return false
		}
	}
	return true
}
