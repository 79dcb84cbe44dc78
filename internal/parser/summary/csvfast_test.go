package summary

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/npuprof/npuprof/internal/parser/timeparse"
	"github.com/npuprof/npuprof/internal/testutil"
	"github.com/stretchr/testify/require"
)

// stdRecords reads data with encoding/csv as npuprof used to (LazyQuotes,
// any field count): the fast reader must return the same records and lines.
func stdRecords(t testing.TB, data string) ([][]string, []int) {
	cr := csv.NewReader(strings.NewReader(data))
	cr.FieldsPerRecord = -1
	cr.LazyQuotes = true
	var recs [][]string
	var lines []int
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		l, _ := cr.FieldPos(0)
		recs = append(recs, rec)
		lines = append(lines, l)
	}
	return recs, lines
}

// fastRecords reads data with the scanner, from blocks of the given size
// (0: the default), through r when set.
func fastRecords(t testing.TB, data string, block int, oneByte bool) ([][]string, []int, error) {
	if block > 0 {
		defer func(v int) { csvBlock = v }(csvBlock)
		csvBlock = block
	}
	var r io.Reader = strings.NewReader(data)
	if oneByte {
		r = iotest.OneByteReader(r)
	}
	cr := newCSVScanner(r)
	var recs [][]string
	var lines []int
	for {
		rec, line, err := cr.read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return recs, lines, err
		}
		r := make([]string, len(rec))
		for i, f := range rec {
			r[i] = string(f)
		}
		recs = append(recs, r)
		lines = append(lines, line)
	}
	return recs, lines, nil
}

// sameRecords checks the scanner against encoding/csv, reading in blocks
// of several sizes (records straddle blocks, the buffer grows) and one
// byte at a time.
func sameRecords(t testing.TB, data, name string) {
	t.Helper()
	wr, wl := stdRecords(t, data)
	for _, b := range []struct {
		block   int
		oneByte bool
	}{{0, false}, {7, false}, {64, false}, {16, true}} {
		gr, gl, err := fastRecords(t, data, b.block, b.oneByte)
		if err != nil {
			t.Fatalf("%s (block %d): %v", name, b.block, err)
		}
		if !reflect.DeepEqual(wr, gr) || !reflect.DeepEqual(wl, gl) {
			t.Fatalf("%s (block %d, one byte %v): records differ from encoding/csv:\n%q %v\n%q %v", name, b.block, b.oneByte, wr, wl, gr, gl)
		}
	}
}

func TestCSVReaderMatchesEncodingCSV(t *testing.T) {
	cases := []string{
		"a,b,c\n1,2,3\n",
		"a,b\r\n1,\"\"\"25,4096;25,8\"\"\"\t\r\n",
		"a,b\n\n\n1,2\n   \nx,\"multi\nline\r\nfield\",y\n",
		"h\n\"unterminated,\nstill",
		"h,i\n\"a\"b,c\"d\n\"q\"\"\",\n",
		"no newline at end,x",
		"trailing,comma,\n,,\n",
		"\"a\" ,b\n",
		"\"\",\"\"\n",
		"x\r\ny\r\n\r\nz",
		"a,\"b\r\nc\"\r\nd,\"e\"\"\r",
		"a,\"b\r",
		"a,\"b\"\r",
		"\"\"\"x,y\"\"\",\"q\"\"\"\r\n\r\r\n\r",
		"\"a\"\rb,c\n\"\"\"\n",
		"1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20\n,,,,,,,,,,,,,,,,,,,,,,,,,,,,\n",
		"\"multi\nline\",\"more\nlines\nhere\",x\ny\n",
		"a\"b,\"c\",d\"\"e,\"\"\n",
	}
	for _, c := range cases {
		sameRecords(t, c, fmt.Sprintf("%q", c))
	}
}

func TestCSVReaderSamples(t *testing.T) {
	d := testutil.SamplesDir(t)
	var files []string
	filepath.WalkDir(d, func(p string, e os.DirEntry, err error) error {
		if err == nil && !e.IsDir() && (e.Name() == "kernel_details.csv" || e.Name() == "step_trace_time.csv" || strings.HasPrefix(e.Name(), "op_summary")) {
			files = append(files, p)
		}
		return nil
	})
	require.NotEmpty(t, files)
	for _, f := range files {
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		sameRecords(t, string(data), f)
	}
}

// FuzzCSVScanner checks the scanner against encoding/csv (LazyQuotes, any
// field count) on any input, reading in several block sizes.
func FuzzCSVScanner(f *testing.F) {
	for _, c := range []string{"a,b,c\n1,2,3\n", "a,\"b\r\nc\"\r\nd,\"e\"\"\r", "\"\"\"x\"\"\",y\r\n\r\n,,\n", "\"a\"b,c\"d\n\"q\"\"\","} {
		f.Add([]byte(c))
	}
	testutil.AddGeneratedSeeds(f, "kernel_details.csv")
	f.Fuzz(func(t *testing.T, data []byte) {
		defer testutil.Watchdog(data)()
		sameRecords(t, string(data), "input")
	})
}

// refKernelDetails is ReadKernelDetails as it was written on encoding/csv
// (a string per cell, every cell trimmed and parsed by timeparse): the
// reader must give the same rows and issues.
func refKernelDetails(t testing.TB, data []byte) ([]KernelRow, RowIssues, bool) {
	var issues RowIssues
	cr := csv.NewReader(bytes.NewReader(data))
	cr.FieldsPerRecord = -1
	cr.LazyQuotes = true
	header, err := cr.Read()
	if err != nil {
		return nil, issues, false
	}
	if cr.InputOffset() >= int64(len(data)) && data[len(data)-1] != '\n' {
		// the file ends inside its header line: refused
		return nil, issues, false
	}
	idx, loose := headerIndex(header, kernelCols)
	for _, need := range []string{"name", "start", "dur"} {
		if _, ok := idx[need]; !ok {
			return nil, issues, false
		}
	}
	issues.Header = loose
	var rows []KernelRow
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("encoding/csv: %v", err)
		}
		line, _ := cr.FieldPos(0)
		if len(rec) == 1 && strings.TrimSpace(rec[0]) == "" {
			continue
		}
		if !CellCountOK(rec, len(header)) {
			issues.Skip(line, "wrong number of cells")
			continue
		}
		row := KernelRow{StepID: -1, Stream: -1, Device: -1, Line: line}
		stText, duText := cell(rec, idx, "start"), cell(rec, idx, "dur")
		st, ok1 := timeparse.MicrosStringToNanos(stText)
		du, ok2 := timeparse.MicrosStringToNanos(duText)
		if !ok1 || !ok2 || du < 0 {
			if (ok1 || timeparse.LooksNumeric([]byte(stText))) && (ok2 || timeparse.LooksNumeric([]byte(duText))) && du >= 0 {
				issues.Skip(line, "time out of range")
			} else {
				issues.Skip(line, "non-numeric time")
			}
			continue
		}
		if st > 0 && du > math.MaxInt64-st {
			issues.Skip(line, "time out of range")
			continue
		}
		row.Start, row.Dur = st, du
		row.Name = cell(rec, idx, "name")
		row.Type = na(cell(rec, idx, "type"))
		row.Core = na(cell(rec, idx, "core"))
		if s := cell(rec, idx, "step"); s != "" {
			if v, ok := timeparse.ParseInt([]byte(s)); ok && v >= 0 && v <= math.MaxInt32 {
				row.StepID = int(v)
			}
		}
		if s := na(cell(rec, idx, "stream")); s != "" {
			if v, ok := timeparse.ParseInt([]byte(s)); ok && v >= 0 && v <= math.MaxInt32 {
				row.Stream = int32(v)
			}
		}
		if s := na(cell(rec, idx, "device")); s != "" {
			if v, ok := timeparse.ParseInt([]byte(s)); ok && v >= 0 && v < 1<<15 {
				row.Device = int(v)
			}
		}
		row.InputShapes = strings.Trim(na(cell(rec, idx, "shapes")), `"`)
		rows = append(rows, row)
	}
	if len(data) > 0 && data[len(data)-1] != '\n' {
		// the file ends inside its last line
		issues.CutLine = bytes.Count(data, []byte{'\n'}) + 1
	}
	return rows, issues, true
}

// sameKernelRows checks ReadKernelDetails against refKernelDetails, with
// blocks of several sizes.
func sameKernelRows(t testing.TB, data []byte, name string) {
	t.Helper()
	want, wantIssues, ok := refKernelDetails(t, data)
	for _, block := range []int{0, 13, 200} {
		func() {
			if block > 0 {
				defer func(v int) { csvBlock = v }(csvBlock)
				csvBlock = block
			}
			var got []KernelRow
			issues, err := ReadKernelDetails(bytes.NewReader(data), name, func(k *KernelRow) { got = append(got, *k) })
			if !ok {
				if err == nil {
					t.Fatalf("%s: read, but encoding/csv finds no usable header", name)
				}
				return
			}
			if err != nil {
				t.Fatalf("%s (block %d): %v", name, block, err)
			}
			checkRowIDs(t, got, name)
			if !reflect.DeepEqual(want, got) {
				for i := range min(len(want), len(got)) {
					if want[i] != got[i] {
						t.Fatalf("%s (block %d): row %d differs:\n%+v\n%+v", name, block, i, want[i], got[i])
					}
				}
				t.Fatalf("%s (block %d): %d rows, want %d", name, block, len(got), len(want))
			}
			if !reflect.DeepEqual(wantIssues, issues) {
				t.Fatalf("%s (block %d): issues %+v, want %+v", name, block, issues, wantIssues)
			}
		}()
	}
}

// checkRowIDs checks KernelRow's numbering of names, types and shapes
// (equal numbers are equal strings, 0 is "", a new string has the next
// number, names of both tables in one sequence) and clears it, so the rows
// compare with refKernelDetails'.
func checkRowIDs(t testing.TB, rows []KernelRow, name string) {
	t.Helper()
	cols := []struct {
		what string
		get  func(*KernelRow) (string, *uint32)
	}{
		{"name", func(k *KernelRow) (string, *uint32) { return k.Name, &k.NameID }},
		{"type", func(k *KernelRow) (string, *uint32) { return k.Type, &k.TypeID }},
		{"shapes", func(k *KernelRow) (string, *uint32) { return k.InputShapes, &k.ShapesID }},
	}
	for _, c := range cols {
		var strs []string // by number - 1
		for i := range rows {
			s, id := c.get(&rows[i])
			switch {
			case s == "":
				if *id != 0 {
					t.Fatalf("%s: row %d: empty %s numbered %d", name, i, c.what, *id)
				}
			case int(*id) == len(strs)+1:
				if slices.Contains(strs, s) {
					t.Fatalf("%s: row %d: %s %q numbered again (%d)", name, i, c.what, s, *id)
				}
				strs = append(strs, s)
			case *id == 0 || int(*id) > len(strs) || strs[*id-1] != s:
				t.Fatalf("%s: row %d: %s %q numbered %d (%d numbers so far)", name, i, c.what, s, *id, len(strs))
			}
			*id = 0
		}
	}
}

func TestKernelDetailsMatchesEncodingCSV(t *testing.T) {
	cases := []string{
		"Name,Type,Accelerator Core,Start Time(us),Duration(us)\r\na,A,AI_CORE,100.5\t,2\r\nb,B,AI_CORE,N/A,2\r\nc,C,AI_CORE,101\r\n",
		"Step Id,Model ID,Task ID,Stream ID,Name,Type,OP State,Accelerator Core,Start Time(us),Duration(us),Wait Time(us),Block Dim,Mix Block Dim,HF32 Eligible,Input Shapes,Output Shapes\n" +
			"50,4294967295,1,2,\"a,b\",T,N/A,AI_CORE,\"1736408883704643.212\t\",53.741,0,1,0,NO,\"\"\"32,3;1\"\"\",\"\"\"1\"\"\"\n" +
			"007,1,1,0002, x ,N/A,N/A,NA,9223372036854769.999,0.0005,0,1,0,NO,\"\"\"\"\"\",\"a\nb\"\n" +
			"1,1,1,1,y,T,N/A,C,9223372036854770,1,0,1,0,NO,\"\"\"a\"\"b\"\"\",,,\n" +
			"1,1,1,1,y,T,N/A,C,1.5,+1,0,1,0,NO,\"\"\"a\"\"b\"\"\",,x\n" +
			"1,1,1,1,y,T,N/A,C,1e3,1.,0,1,0,NO,  \"\"\"s\"\"\" ,\n" +
			"12345678901,1,1,-1,z,T,N/A,C,\" 12 \",.5,0,1,0,NO,\"\"\"s\"\"\"\r\n   \n\n",
		"op name,start_time (us),task duration(us)\nx,1,2\n",
		// a header alone is a file with no rows; one cut inside is refused
		"Name,Type,Accelerator Core,Start Time(us),Duration(us)\r\n",
		"Name,Type,Accelerator Core,Start Time(us),Duration(us),aiv_mt",
	}
	for i, c := range cases {
		sameKernelRows(t, []byte(c), fmt.Sprintf("case %d", i))
	}
	_, err := ReadKernelDetails(strings.NewReader(cases[len(cases)-1]), "k.csv", func(*KernelRow) {})
	require.EqualError(t, err, "k.csv: the file ends inside its header line, without a newline (cut short?): it has no rows")
	d := testutil.SamplesDir(t)
	n := 0
	filepath.WalkDir(d, func(p string, e os.DirEntry, err error) error {
		if err == nil && !e.IsDir() && (e.Name() == "kernel_details.csv" || strings.HasPrefix(e.Name(), "op_summary")) {
			data, err := os.ReadFile(p)
			require.NoError(t, err)
			sameKernelRows(t, data, p)
			n++
		}
		return nil
	})
	require.NotZero(t, n)
}

// A record over several lines is bounded by MaxLineBytes too, and a read
// error stops the read after the complete rows before it.
func TestCSVRecordLimitAndReadError(t *testing.T) {
	defer func(v int) { MaxLineBytes = v }(MaxLineBytes)
	MaxLineBytes = 1 << 10
	in := "Name,Start Time(us),Duration(us)\na,1,1\n\"" + strings.Repeat("xxxxxxxxx\n", 200) + "\",2,1\nc,3,1\n"
	var rows []KernelRow
	_, err := ReadKernelDetails(strings.NewReader(in), "k.csv", func(k *KernelRow) { rows = append(rows, *k) })
	require.ErrorContains(t, err, "k.csv: line too long: the record starting at line 3 is longer than")
	require.Len(t, rows, 1)
	MaxLineBytes = 16 << 20

	errDisk := errors.New("disk on fire")
	for _, block := range []int{0, 5} {
		func() {
			if block > 0 {
				defer func(v int) { csvBlock = v }(csvBlock)
				csvBlock = block
			}
			r := io.MultiReader(strings.NewReader("Name,Start Time(us),Duration(us)\na,1,1\nb,2,1\nc,3"), iotest.ErrReader(errDisk))
			rows = rows[:0]
			_, err = ReadKernelDetails(r, "k.csv", func(k *KernelRow) { rows = append(rows, *k) })
			require.ErrorIs(t, err, errDisk)
			require.Len(t, rows, 2, "block %d", block)
		}()
	}
}

// na reads the profiler's "N/A" / "NA" cell as empty, as the reader does.
func na(s string) string {
	if s == "N/A" || s == "NA" {
		return ""
	}
	return s
}
