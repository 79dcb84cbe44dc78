package summary

import (
	"encoding/csv"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/npuprof/npuprof/internal/testutil"
	"github.com/stretchr/testify/require"
)

// stdRecords reads data with encoding/csv as npuprof used to (LazyQuotes,
// any field count): the fast reader must return the same records and lines.
func stdRecords(t *testing.T, data string) ([][]string, []int) {
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

func fastRecords(t *testing.T, data string) ([][]string, []int) {
	cr := newCSVReader(strings.NewReader(data))
	var recs [][]string
	var lines []int
	for {
		rec, line, err := cr.read()
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err)
		r := make([]string, len(rec))
		for i, f := range rec {
			r[i] = string(f)
		}
		recs = append(recs, r)
		lines = append(lines, line)
	}
	return recs, lines
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
	}
	for _, c := range cases {
		wr, wl := stdRecords(t, c)
		gr, gl := fastRecords(t, c)
		require.Equal(t, wr, gr, "%q", c)
		require.Equal(t, wl, gl, "%q", c)
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
		wr, wl := stdRecords(t, string(data))
		gr, gl := fastRecords(t, string(data))
		require.Equal(t, wr, gr, f)
		require.Equal(t, wl, gl, f)
	}
}
