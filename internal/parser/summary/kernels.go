// Package summary reads the profiler's summary files: kernel_details.csv
// (and msprof's op_summary), step_trace_time.csv, communication.json,
// profiler_info_*.json and profiler_metadata.json. Every reader streams,
// names the file in its errors, and counts the rows it had to skip.
package summary

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/npuprof/npuprof/internal/parser/internal/intern"
	"github.com/npuprof/npuprof/internal/parser/model"
	"github.com/npuprof/npuprof/internal/parser/timeparse"
)

// KernelRow is one row of kernel_details.csv / op_summary_*.csv.
type KernelRow struct {
	StepID int // -1 when absent or empty
	// Device is the row's Device_id (torch_npu's new header, msprof's
	// op_summary), -1 when the column is absent or the cell is not a
	// device id (0 to 32767).
	Device      int
	Name        string
	Type        string // op type; "" when N/A
	Core        string // Accelerator Core / Task Type; "" when N/A
	Start       int64  // ns
	Dur         int64  // ns
	Stream      int32  // -1 when N/A
	InputShapes string // without the literal outer quotes
	Line        int    // 1-based line of the row (header is line 1)
	// NameID, TypeID and ShapesID number Name, Type and InputShapes within
	// one read, per column: equal numbers are equal strings, 0 is "", and
	// the numbers of a column are handed out 1, 2, 3... in the order its
	// strings are first met (a new string has the number one above the
	// largest seen so far). A caller can so keep what it needs about a
	// string in a slice indexed by number, with no hashing per row.
	NameID, TypeID, ShapesID uint32
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
	// Header is set when the header was not a known version and some
	// columns were identified by a looser match of their names; it says
	// which ("start: \"start_time (us)\""), for a warning.
	Header string
	// CutLine is the last line when the file ends inside it, without a
	// newline (cut short?), 0 otherwise.
	CutLine int
}

// Partial reports whether the rows read miss some of the file's: rows
// were skipped, or the file ends inside its last line.
func (ri *RowIssues) Partial() bool { return ri.Skipped > 0 || ri.CutLine > 0 }

// PartialReason says why the rows read are partial ("" when they are not).
func (ri *RowIssues) PartialReason(file string, rows int) string {
	var why []string
	if ri.CutLine > 0 {
		why = append(why, fmt.Sprintf("ends inside line %d, without a newline (cut short?)", ri.CutLine))
	}
	if ri.Skipped > 0 {
		why = append(why, fmt.Sprintf("has %d malformed row(s), skipped", ri.Skipped))
	}
	if len(why) == 0 {
		return ""
	}
	return fmt.Sprintf("%s %s; the metrics from it cover the %d rows read", file, strings.Join(why, " and "), rows)
}

// Skip counts a row skipped at line for reason, keeping the first five
// lines.
func (ri *RowIssues) Skip(line int, reason string) {
	ri.Skipped++
	if len(ri.Lines) < 5 {
		ri.Lines = append(ri.Lines, line)
	}
	if ri.Reasons == nil {
		ri.Reasons = map[string]int{}
	}
	ri.Reasons[reason]++
}

// Warnings returns the issues as model warnings: the loosely matched
// header, then the skipped rows (per-file count and first line numbers).
func (ri *RowIssues) Warnings(file string) []model.Warning {
	var out []model.Warning
	if ri.Header != "" {
		out = append(out, model.Warning{File: file, Message: "unknown header version; columns identified by name: " + ri.Header})
	}
	if w := ri.Warning(file); w != nil {
		out = append(out, *w)
	}
	if ri.CutLine > 0 {
		out = append(out, model.Warning{File: file, Message: fmt.Sprintf("the file ends inside line %d, without a newline: it may have been cut there, so its last row may be incomplete", ri.CutLine), Lines: []int{ri.CutLine}})
	}
	return out
}

// Warning turns the skipped rows into a model warning (nil when none).
func (ri *RowIssues) Warning(file string) *model.Warning {
	if ri.Skipped == 0 {
		return nil
	}
	keys := slices.Sorted(maps.Keys(ri.Reasons))
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s: %d", k, ri.Reasons[k])
	}
	return &model.Warning{File: file, Message: "skipped malformed rows (" + strings.Join(parts, ", ") + ")", Count: ri.Skipped, Lines: ri.Lines}
}

// column name aliases across versions (docs/formats.md#kernel-details-and-op-summary-columns).
var kernelCols = map[string][]string{
	"step":   {"Step Id", "Step ID"},
	"name":   {"Name", "Op Name"},
	"type":   {"Type", "OP Type"},
	"core":   {"Accelerator Core", "Task Type"},
	"start":  {"Start Time(us)", "Task Start Time(us)"},
	"dur":    {"Duration(us)", "Task Duration(us)"},
	"stream": {"Stream ID", "Stream Id"},
	"shapes": {"Input Shapes"},
	"device": {"Device_id"},
}

// ExactHeaderIndex maps each alias key to the first column whose name
// (trimmed, without a BOM) is one of the key's aliases exactly.
func ExactHeaderIndex(header []string, aliases map[string][]string) map[string]int {
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

// headerIndex maps each alias key to its column. Exact names (any known
// header version) win; a key still missing is then looked up by its name
// normalized (lower case, letters and digits only: "start_time (us)"
// matches "Start Time(us)"), and, for keys with a loose rule, by that rule
// ("a column whose name has 'duration' and is in us"). A loose match is
// used only when exactly one column fits; loose says what was matched.
func headerIndex(header []string, aliases map[string][]string) (idx map[string]int, loose string) {
	idx = ExactHeaderIndex(header, aliases)
	if len(idx) == len(aliases) {
		return idx, ""
	}
	norm := make([]string, len(header))
	for i, h := range header {
		norm[i] = normalize(h)
	}
	var notes []string
	for _, k := range slices.Sorted(maps.Keys(aliases)) {
		if _, ok := idx[k]; ok {
			continue
		}
		match := func(pred func(string) bool) int {
			found := -1
			for i, h := range norm {
				if pred(h) {
					if found >= 0 {
						return -1 // ambiguous: two columns fit
					}
					found = i
				}
			}
			return found
		}
		names := make([]string, len(aliases[k]))
		for j, n := range aliases[k] {
			names[j] = normalize(n)
		}
		i := match(func(h string) bool { return slices.Contains(names, h) })
		if i < 0 && looseRules[k] != nil {
			i = match(looseRules[k])
		}
		if i >= 0 && !taken(idx, i) {
			idx[k] = i
			notes = append(notes, fmt.Sprintf("%s: %q", k, clip(header[i], 60)))
		}
	}
	return idx, strings.Join(notes, ", ")
}

func taken(idx map[string]int, col int) bool {
	for _, c := range idx {
		if c == col {
			return true
		}
	}
	return false
}

// normalize lower-cases a column name and keeps only letters and digits.
func normalize(h string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(h) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// looseRules identify a column by what its normalized name contains, for
// header versions npuprof does not know. Times must say they are in µs.
var looseRules = map[string]func(string) bool{
	"name": func(h string) bool { return h == "name" || h == "opname" || h == "kernelname" || h == "taskname" },
	"start": func(h string) bool {
		return strings.Contains(h, "start") && strings.HasSuffix(h, "us")
	},
	"dur": func(h string) bool {
		return (strings.Contains(h, "duration") || strings.HasSuffix(h, "durus")) && strings.HasSuffix(h, "us")
	},
}

// clip shortens text taken from an input file for a message.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

// HeaderFound says what a header held, for an error message: its columns,
// capped, when known of them (columns npuprof identified) are one or more:
// a profile file of an unknown version. With none it quotes nothing: the
// file may not be a profile file at all (a symlink to /etc/passwd), and
// its first line is not npuprof's to repeat.
func HeaderFound(header []string, known int) string {
	if known == 0 {
		n := 0
		for _, h := range header {
			n += len(h) + 1
		}
		return fmt.Sprintf("found %d column(s), %d byte(s), none of them one npuprof knows; the line is not quoted: this may not be a profile file", len(header), max(n-1, 0))
	}
	return "found " + clip(strings.Join(header, ","), 300)
}

func cell(rec []string, idx map[string]int, k string) string {
	i, ok := idx[k]
	if !ok || i >= len(rec) {
		return ""
	}
	return strings.TrimSpace(rec[i])
}

// ReadKernelDetails streams kernel_details.csv (every header version:
// Level0 8 columns, Level1, 2023-era, new with Device_id) or op_summary,
// calling fn for each valid row. Rows with missing cells or non-numeric
// times are skipped and counted.
//
// The row loop is the reader's hot path, kept in one function (the column
// indexes stay in registers). In order: blank and short records skipped;
// the cells located, as slices of the buffer when all are (no call per
// cell; quoted ones are decoded by cell); the times (micros, the slow forms
// out of line in slowTimes); the names trimmed (trimSpace's test inline:
// as a function it is not inlined) and interned, one copy each of the
// names, types, cores and shapes that repeat on almost every row, with
// collectives' names (mostly unique: hcom_allGather__115_175_1) in a
// table of their own so the kernels' small one stays in cache (the two
// number their names in one sequence); step and stream; the shapes.
func ReadKernelDetails(r io.Reader, file string, fn func(*KernelRow)) (RowIssues, error) {
	var issues RowIssues
	cr := newCSVScanner(r)
	defer cr.release()
	h, err := readKernelHeader(cr, file)
	if err != nil {
		return issues, err
	}
	issues.Header = h.loose
	cName, cStart, cDur, cType, cCore, cStep, cStream, cShapes, cDev := h.cols[0], h.cols[1], h.cols[2], h.cols[3], h.cols[4], h.cols[5], h.cols[6], h.cols[7], h.cols[8]
	var names, types, cores, shapes, hcomNames intern.Strings
	var nameCount uint32
	names.Count, hcomNames.Count = &nameCount, &nameCount
	var row KernelRow
	for {
		err := cr.next(h.upto)
		if err == io.EOF {
			break
		}
		if err != nil {
			return issues, fmt.Errorf("%s: %w", file, err)
		}
		line := cr.recLine
		if cr.nf == 1 && len(bytes.TrimSpace(cr.cell(0))) == 0 {
			continue
		}
		if cr.nf != h.ncols && !cr.extraCellsBlank(h.ncols) {
			issues.Skip(line, "wrong number of cells")
			continue
		}
		stB, ok1 := cr.rawCell(cStart)
		duB, ok2 := cr.rawCell(cDur)
		nameB, ok3 := cr.rawCell(cName)
		typeB, ok4 := cr.rawCell(cType)
		coreB, ok5 := cr.rawCell(cCore)
		if !ok1 || !ok2 || !ok3 || !ok4 || !ok5 {
			stB, duB, nameB, typeB, coreB = cr.cell(cStart), cr.cell(cDur), cr.cell(cName), cr.cell(cType), cr.cell(cCore)
		}
		row = KernelRow{StepID: -1, Stream: -1, Device: -1, Line: line}
		st, ok1 := micros(stB)
		du, ok2 := micros(duB)
		if !ok1 || !ok2 || du < 0 {
			var why string
			if st, du, why = slowTimes(trimSpace(cr.cell(cStart)), trimSpace(cr.cell(cDur))); why != "" {
				issues.Skip(line, why)
				continue
			}
		}
		if st > 0 && du > math.MaxInt64-st {
			issues.Skip(line, "time out of range")
			continue
		}
		row.Start, row.Dur = st, du
		if !untrimmed(nameB) || !untrimmed(typeB) || !untrimmed(coreB) {
			nameB, typeB, coreB = bytes.TrimSpace(nameB), bytes.TrimSpace(typeB), bytes.TrimSpace(coreB)
		}
		if name := nameB; bytes.HasPrefix(name, []byte("hcom_")) {
			row.Name, row.NameID = hcomNames.InternID(name)
		} else {
			row.Name, row.NameID = names.InternID(name)
		}
		row.Type, row.TypeID = types.InternID(naBytes(typeB))
		row.Core = cores.Intern(naBytes(coreB))
		if cStep >= 0 {
			b, ok := cr.rawCell(cStep)
			if !ok {
				b = cr.cell(cStep)
			}
			if v, ok := smallInt(b); ok {
				row.StepID = v
			} else if v, ok := slowInt(cr.cell(cStep)); ok {
				row.StepID = v
			}
		}
		if cStream >= 0 {
			b, ok := cr.rawCell(cStream)
			if !ok {
				b = cr.cell(cStream)
			}
			if v, ok := smallInt(b); ok {
				row.Stream = int32(v)
			} else if v, ok := slowInt(cr.cell(cStream)); ok {
				row.Stream = int32(v)
			}
		}
		if cDev >= 0 {
			b, ok := cr.rawCell(cDev)
			if !ok {
				b = cr.cell(cDev)
			}
			v, ok := smallInt(b)
			if !ok {
				v, ok = slowInt(cr.cell(cDev))
			}
			if ok && v < 1<<15 {
				row.Device = v
			}
		}
		if sh, ok := cr.tripleQuoted(cShapes); ok {
			row.InputShapes, row.ShapesID = shapes.InternID(sh)
		} else {
			row.InputShapes, row.ShapesID = shapes.InternID(bytes.Trim(naBytes(trimSpace(cr.cell(cShapes))), `"`))
		}
		fn(&row)
	}
	if cr.unterminated {
		issues.CutLine = cr.line
	}
	return issues, nil
}

// kernelHeader is what a kernel_details.csv header says: its number of
// cells, the columns read (name, start, dur, type, core, step, stream,
// shapes, device; -1 when absent), how many cells of a row to locate (up to the
// last column read; the rest is only counted) and what was matched
// loosely.
type kernelHeader struct {
	ncols, upto int
	cols        [9]int
	loose       string
}

// readKernelHeader reads the header and finds the columns.
func readKernelHeader(cr *csvScanner, file string) (kernelHeader, error) {
	h := kernelHeader{upto: 1}
	hdr, _, err := cr.read()
	if err != nil {
		if err == io.EOF {
			return h, fmt.Errorf("%s: empty file, expected a kernel_details.csv header", file)
		}
		return h, fmt.Errorf("%s: reading header: %w", file, err)
	}
	if cr.unterminated {
		// a writer ends every line: the file was cut inside its header
		return h, fmt.Errorf("%s: the file ends inside its header line, without a newline (cut short?): it has no rows", file)
	}
	header := make([]string, len(hdr))
	for i, c := range hdr {
		header[i] = string(c)
	}
	idx, loose := headerIndex(header, kernelCols)
	if err := NeedColumns(file, header, idx, kernelCols, true, "name", "start", "dur"); err != nil {
		return h, err
	}
	h.ncols, h.loose = len(header), loose
	for k, key := range [9]string{"name", "start", "dur", "type", "core", "step", "stream", "shapes", "device"} {
		h.cols[k] = -1
		if i, ok := idx[key]; ok {
			h.upto = max(h.upto, i+1)
			h.cols[k] = i
		}
	}
	return h, nil
}

// slowTimes parses a start and a duration micros did not take (trimmed
// cells); why is the reason the row is skipped, "" when both parsed.
func slowTimes(stText, duText []byte) (st, du int64, why string) {
	st, ok1 := timeparse.MicrosToNanos(stText)
	du, ok2 := timeparse.MicrosToNanos(duText)
	if ok1 && ok2 && du >= 0 {
		return st, du, ""
	}
	if (ok1 || timeparse.LooksNumeric(stText)) && (ok2 || timeparse.LooksNumeric(duText)) && du >= 0 {
		return 0, 0, "time out of range"
	}
	return 0, 0, "non-numeric time"
}

// slowInt parses a step or stream cell smallInt did not take: a
// non-negative int32, else false ("" and N/A are false).
func slowInt(cell []byte) (int, bool) {
	s := naBytes(trimSpace(cell))
	if len(s) == 0 {
		return 0, false
	}
	if v, ok := timeparse.ParseInt(s); ok && v >= 0 && v <= math.MaxInt32 {
		return int(v), true
	}
	return 0, false
}

// micros is timeparse.MicrosToNanos's common case, inline: up to 16
// digits (within the same bound), optionally '.' and up to 3 more,
// optionally followed by TABs or spaces (the profiler writes
// "1736410582431935.024\t"). ok is false for anything else, which then
// goes to timeparse.
func micros(b []byte) (ns int64, ok bool) {
	n := len(b)
	for n > 0 && (b[n-1] == '\t' || b[n-1] == ' ') {
		n--
	}
	b = b[:n]
	// kept: the 16-digit conversion of traceview's usToNs; as a call it costs 4% of a ts
	if len(b) == 20 && b[16] == '.' {
		// how the profiler writes a start: 16 digits, '.', 3 decimals,
		// as two words of 8 digits checked and converted side by side
		const hiNib, zeros, sixes = 0xf0f0f0f0f0f0f0f0, 0x3030303030303030, 0x0606060606060606
		x, y := binary.LittleEndian.Uint64(b[0:8]), binary.LittleEndian.Uint64(b[8:16])
		d0, d1, d2 := b[17]-'0', b[18]-'0', b[19]-'0'
		if (x&hiNib^zeros)|(y&hiNib^zeros)|((x+sixes)&hiNib^zeros)|((y+sixes)&hiNib^zeros) == 0 && d0 <= 9 && d1 <= 9 && d2 <= 9 {
			x, y = x-zeros, y-zeros
			x, y = x*10+x>>8, y*10+y>>8
			x = ((x&0x000000ff000000ff)*(100+1000000<<32) + (x>>16&0x000000ff000000ff)*(1+10000<<32)) >> 32
			y = ((y&0x000000ff000000ff)*(100+1000000<<32) + (y>>16&0x000000ff000000ff)*(1+10000<<32)) >> 32
			// timeparse's bound: ip*1000+999 must fit in int64
			if ip := x*100000000 + y; ip <= 9223372036854769 {
				return int64(ip)*1000 + int64(d0)*100 + int64(d1)*10 + int64(d2), true
			}
			return 0, false
		}
	}
	var ip int64
	i := 0
	for ; i < len(b) && i < 17; i++ {
		c := b[i] - '0'
		if c > 9 {
			break
		}
		ip = ip*10 + int64(c)
	}
	// timeparse's bound: ip*1000+999 must fit in int64
	if i == 0 || i > 16 || ip > 9223372036854769 {
		return 0, false
	}
	var frac int64
	fd := 0
	if i < len(b) {
		if b[i] != '.' {
			return 0, false
		}
		for i++; i < len(b); i++ {
			c := b[i] - '0'
			if c > 9 || fd == 3 {
				return 0, false
			}
			frac = frac*10 + int64(c)
			fd++
		}
	}
	for ; fd < 3; fd++ {
		frac *= 10
	}
	return ip*1000 + frac, true
}

// trimSpace is bytes.TrimSpace, with the common case (nothing to trim)
// inline.
func trimSpace(b []byte) []byte {
	if untrimmed(b) {
		return b
	}
	return bytes.TrimSpace(b)
}

// untrimmed reports that bytes.TrimSpace would return b as it is (its
// first and last bytes are ASCII and not space; false may be wrong).
func untrimmed(b []byte) bool {
	// b[k] in ['!', 0x7f]: (b[k] > ' ' && b[k] < 0x80), one compare
	n := len(b)
	return n > 0 && b[0]-'!' < 0x80-'!' && b[n-1]-'!' < 0x80-'!'
}

// tripleQuoted returns X for the i-th cell written `"""X"""` with no quote or
// newline in X: how the profiler writes shapes ("\"4,4096;4096\"", quoted
// again for CSV). Decoded, trimmed and stripped of its quotes, as
// ReadKernelDetails does with any cell, that is X, without a copy.
func (c *csvScanner) tripleQuoted(i int) ([]byte, bool) {
	if i < 0 || i >= len(c.fields) {
		return nil, false
	}
	if f := c.fields[i]; f.kind == cellTriple {
		// the scanner has checked the shape
		return c.buf[f.start+2 : f.end-2], true
	}
	if c.fields[i].kind != cellQuotes {
		return nil, false
	}
	raw := c.buf[c.fields[i].start:c.fields[i].end]
	if len(raw) < 4 || raw[0] != '"' || raw[1] != '"' || raw[len(raw)-1] != '"' || raw[len(raw)-2] != '"' {
		return nil, false
	}
	x := raw[2 : len(raw)-2]
	if bytes.IndexByte(x, '"') >= 0 {
		return nil, false
	}
	return x, true
}

// smallInt reads 1 to 9 digits; ok is false for anything else (which then
// goes to timeparse.ParseInt).
func smallInt(b []byte) (int, bool) {
	if len(b) == 0 || len(b) > 9 {
		return 0, false
	}
	v := 0
	for _, c := range b {
		c -= '0'
		if c > 9 {
			return 0, false
		}
		v = v*10 + int(c)
	}
	return v, true
}

// extraCellsBlank reports whether a record with nf != n cells is still a
// row: more cells than the header, the extra ones empty (a trailing
// comma). It locates every cell of the record.
func (c *csvScanner) extraCellsBlank(n int) bool {
	if c.nf < n {
		return false
	}
	if len(c.fields) < c.nf {
		// locate the cells beyond what was asked for: the record is
		// still in the buffer
		c.pos, c.line = c.recPos, c.recLine-1
		if c.scan(math.MaxInt) != scanOK {
			return false // cannot happen: the record was complete
		}
	}
	for i := n; i < c.nf; i++ {
		if len(bytes.TrimSpace(c.cell(i))) != 0 {
			return false
		}
	}
	return true
}

func naBytes(b []byte) []byte {
	if string(b) == "N/A" || string(b) == "NA" {
		return nil
	}
	return b
}
