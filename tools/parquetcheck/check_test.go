package parquetcheck

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	_ "github.com/duckdb/duckdb-go/v2"
	"github.com/stretchr/testify/require"

	"github.com/npuprof/npuprof/internal/tracegen"
)

// npuprof returns the npuprof binary: $NPUPROF_BIN, or one built from this
// checkout.
func npuprof(t *testing.T) string {
	if b := os.Getenv("NPUPROF_BIN"); b != "" {
		abs, err := filepath.Abs(b)
		require.NoError(t, err)
		return abs
	}
	bin := filepath.Join(t.TempDir(), "npuprof")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/npuprof")
	cmd.Dir = filepath.Join("..", "..")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	return bin
}

func runNpuprof(t *testing.T, bin string, args ...string) []byte {
	t.Helper()
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Run(), "npuprof %s: %s", strings.Join(args, " "), stderr.String())
	return stdout.Bytes()
}

// document is the part of npuprof.analysis/v1 the check compares.
type document struct {
	Ranks []struct {
		Rank        int                `json:"rank"`
		Metrics     map[string]float64 `json:"metrics"`
		Unavailable map[string]string  `json:"unavailable"`
		Steps       []struct {
			Step        int     `json:"step"`
			ComputingUs float64 `json:"computing_us"`
			Tasks       int     `json:"tasks"`
		} `json:"steps"`
	} `json:"ranks"`
}

// queries are the SQL of docs/parquet.md, with OUT standing for the export
// folder. A test below checks that the document holds exactly these.
var queries = map[string]string{
	"hccl-by-type": `SELECT rank, type, sum(dur_ns) / 1e3 AS time_us, count(*) AS count
FROM read_parquet('OUT/hccl_ops/*/*.parquet', hive_partitioning = true)
GROUP BY rank, type
ORDER BY rank, type;`,
	"slow-rank": `WITH per_rank AS (
  SELECT rank, sum(dur_ns) / 1e3 AS compute_us
  FROM read_parquet('OUT/device_tasks/*/*.parquet', hive_partitioning = true)
  WHERE class = 'compute'
  GROUP BY rank
)
SELECT rank, compute_us,
       compute_us / median(compute_us) OVER () AS vs_median
FROM per_rank
ORDER BY compute_us DESC;`,
	"metrics": `SELECT rank, name, value, unavailable
FROM read_parquet('OUT/metrics/*/*.parquet', hive_partitioning = true)
ORDER BY rank, name;`,
	"steps": `SELECT rank, step, computing_ns / 1e3 AS computing_us, tasks
FROM read_parquet('OUT/steps/*/*.parquet', hive_partitioning = true)
ORDER BY rank, step;`,
}

func query(t *testing.T, db *sql.DB, out, name string) *sql.Rows {
	t.Helper()
	q := strings.ReplaceAll(queries[name], "OUT", filepath.ToSlash(out))
	rows, err := db.Query(q)
	require.NoError(t, err, q)
	return rows
}

// TestDuckDBReadsTheExport exports a generated 8-rank capture with a slow
// rank, reads it with DuckDB, and checks that the documented SQL reproduces
// npuprof's own metrics exactly and finds the slow rank.
func TestDuckDBReadsTheExport(t *testing.T) {
	bin := npuprof(t)
	s, ok := tracegen.Lookup("hot-rank")
	require.True(t, ok)
	s.CommJSON, s.ProfilerSteps = true, true
	in := filepath.Join(t.TempDir(), "capture")
	_, err := tracegen.Generate(in, s)
	require.NoError(t, err)
	out := filepath.Join(t.TempDir(), "pq")
	runNpuprof(t, bin, "export", in, "-o", out)
	var doc document
	require.NoError(t, json.Unmarshal(runNpuprof(t, bin, "analyze", in, "--format", "json"), &doc))
	require.Len(t, doc.Ranks, s.Ranks)

	db, err := sql.Open("duckdb", "")
	require.NoError(t, err)
	defer db.Close()

	// hccl.<type>.time_us and .count per rank
	got := map[string]float64{}
	rows := query(t, db, out, "hccl-by-type")
	for rows.Next() {
		var rank int
		var typ string
		var us float64
		var n int64
		require.NoError(t, rows.Scan(&rank, &typ, &us, &n))
		got[fmt.Sprintf("%d hccl.%s.time_us", rank, typ)] = us
		got[fmt.Sprintf("%d hccl.%s.count", rank, typ)] = float64(n)
	}
	require.NoError(t, rows.Err())
	want := map[string]float64{}
	for _, r := range doc.Ranks {
		for name, v := range r.Metrics {
			// hccl.<type>.time_us and .count: three parts, and not one of
			// the other hccl.* families (total, per group, per MoE layer)
			parts := strings.Split(name, ".")
			if len(parts) == 3 && parts[0] == "hccl" && (parts[2] == "time_us" || parts[2] == "count") &&
				parts[1] != "total" && parts[1] != "per_layer" {
				want[fmt.Sprintf("%d %s", r.Rank, name)] = v
			}
		}
	}
	require.NotEmpty(t, want)
	require.Equal(t, want, got, "DuckDB's per-rank HCCL time and count by type must equal npuprof's hccl.<type>.* metrics")

	// the slow rank
	rows = query(t, db, out, "slow-rank")
	var order []int
	var top float64
	computeUs := map[int]float64{}
	for rows.Next() {
		var rank int
		var us, ratio float64
		require.NoError(t, rows.Scan(&rank, &us, &ratio))
		if len(order) == 0 {
			top = ratio
		}
		order = append(order, rank)
		computeUs[rank] = us
	}
	require.NoError(t, rows.Err())
	require.Equal(t, s.HotRank, order[0], "the slow-rank query puts tracegen's hot rank first")
	require.Greater(t, top, 1.05)
	for _, r := range doc.Ranks {
		require.Equal(t, r.Metrics["kernel.compute.time_us"], computeUs[r.Rank], "rank %d compute time", r.Rank)
	}

	// every metric of the document, value for value, and every unavailable one
	rows = query(t, db, out, "metrics")
	gotM := map[string]float64{}
	gotU := map[string]string{}
	for rows.Next() {
		var rank int
		var name string
		var v sql.NullFloat64
		var why sql.NullString
		require.NoError(t, rows.Scan(&rank, &name, &v, &why))
		if v.Valid {
			gotM[fmt.Sprintf("%d %s", rank, name)] = v.Float64
		} else {
			gotU[fmt.Sprintf("%d %s", rank, name)] = why.String
		}
	}
	require.NoError(t, rows.Err())
	wantM, wantU := map[string]float64{}, map[string]string{}
	for _, r := range doc.Ranks {
		for name, v := range r.Metrics {
			wantM[fmt.Sprintf("%d %s", r.Rank, name)] = v
		}
		for name, why := range r.Unavailable {
			wantU[fmt.Sprintf("%d %s", r.Rank, name)] = why
		}
	}
	require.Equal(t, wantM, gotM)
	require.Equal(t, wantU, gotU)

	// per-step computing time and task count
	rows = query(t, db, out, "steps")
	n := 0
	stepsOf := map[int]map[int][2]float64{}
	for rows.Next() {
		var rank, step int
		var us sql.NullFloat64
		var tasks sql.NullInt64
		require.NoError(t, rows.Scan(&rank, &step, &us, &tasks))
		if stepsOf[rank] == nil {
			stepsOf[rank] = map[int][2]float64{}
		}
		stepsOf[rank][step] = [2]float64{us.Float64, float64(tasks.Int64)}
		n++
	}
	require.NoError(t, rows.Err())
	m := 0
	for _, r := range doc.Ranks {
		for _, st := range r.Steps {
			require.Equal(t, [2]float64{st.ComputingUs, float64(st.Tasks)}, stepsOf[r.Rank][st.Step], "rank %d step %d", r.Rank, st.Step)
			m++
		}
	}
	require.Equal(t, m, n)
	require.Positive(t, n)
	require.False(t, math.IsNaN(top))
}

// TestDocumentedSQL checks that docs/parquet.md holds the queries this
// module runs, verbatim, so the documentation cannot drift from what CI
// proves.
func TestDocumentedSQL(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "parquet.md"))
	require.NoError(t, err)
	names := make([]string, 0, len(queries))
	for k := range queries {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		require.Contains(t, string(b), queries[k], "docs/parquet.md must contain the %q query verbatim", k)
	}
}
