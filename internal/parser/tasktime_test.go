package parser

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/npuprof/npuprof/internal/testutil"
	"github.com/npuprof/npuprof/internal/tracegen"
	"github.com/stretchr/testify/require"
)

// msprof's task_time_*.csv read as the timeline (no msprof_*.json): each
// kind of damage the mutation test found silent (issue 31) is a warning
// or a partial rank, never a changed count without a word.
func TestTaskTimeDamageIsNamed(t *testing.T) {
	s := testutil.Tiny()
	s.Ranks = 1
	dir, _ := testutil.GenerateLayout(t, s, tracegen.LayoutMsprofText)
	jsons, _ := filepath.Glob(filepath.Join(dir, "PROF_*", "mindstudio_profiler_output", "msprof_*.json"))
	require.Len(t, jsons, 1)
	require.NoError(t, os.Remove(jsons[0]))
	tts, _ := filepath.Glob(filepath.Join(dir, "PROF_*", "mindstudio_profiler_output", "task_time_*.csv"))
	require.Len(t, tts, 1)
	tt := tts[0]
	data, err := os.ReadFile(tt)
	require.NoError(t, err)
	orig := string(data)
	whole := loadOne(t, dir)
	require.False(t, whole.Partial)
	require.Empty(t, warningsText(whole))
	lines := strings.SplitAfter(orig, "\n")
	// the first two rows of one compute kernel after the header, and a
	// row of it (index into lines)
	kernel := 0
	for i, l := range lines[1:] {
		if strings.Contains(l, ",AI_CORE,") {
			kernel = i + 1
			break
		}
	}
	require.NotZero(t, kernel)
	a, b := lines[kernel], lines[kernel+1]
	cellsA, cellsB := strings.Split(a, ","), strings.Split(b, ",")
	join := func(i []string, j []string) string { return strings.Join(i, ",") + "," + strings.Join(j, ",") }
	with := func(repl string) string {
		return strings.Join(lines[:kernel], "") + repl + strings.Join(lines[kernel+1:], "")
	}
	for _, c := range []struct {
		name, body, warning string
		partial             bool
	}{
		// a duplicated chunk from the middle of row A to the middle of
		// row B: the line holds A's first cells, then B's tail, A's tail
		{"joined rows, extra cells", with(a + join(cellsA[:3], cellsA[2:])), "skipped malformed rows (wrong number of cells: 1)", true},
		// the same with as many cells as the header: B's name and type
		// on A's times; task_time(us) is B's, not stop - start
		{"joined rows, eight cells", with(a + join(cellsB[:5], append([]string{cellsB[5]}, cellsA[6:]...)) + b),
			"skipped malformed rows (task_time(us) is not task_stop(us) - task_start(us): 1)", true},
		{"damaged kernel_type", with(strings.Replace(a, ",AI_CORE,", ",Ai_CORE,", 1)),
			`1 row(s) with a kernel_type npuprof does not know (first: "Ai_CORE"), expected a device task type`, false},
		// the last digit of task_stop(us) deleted with its tab: a
		// number still, a few ns off, within what task_time(us) allows
		{"stop cut with its tab", with(a[:len(a)-3] + "\n"), "skipped malformed rows (a task_start(us) or task_stop(us) cell ends unlike the first row's (a trailing tab): 1)", true},
		{"non-numeric stream_id", with(join(cellsA[:3], append([]string{cellsA[3] + "\t.}"}, cellsA[4:]...))), "skipped malformed rows (non-numeric stream_id: 1)", true},
		// another row's name on A's stream, task id and times
		{"repeated task", with(a + join(cellsB[:3], cellsA[3:])), "1 row(s) repeat the stream_id, task_id and task_start(us) of another row with other cells", false},
		// a duplicated chunk from A's task_id to B's stream: B's name and
		// type, another task id, A's times
		{"joined rows, another task id", with(a + join(cellsB[:4], append([]string{cellsA[4] + "6"}, cellsA[5:]...))),
			"1 row(s) repeat the stream_id, task_start(us) and task_stop(us) of another row with another task_id, where a stream runs one task at a time", false},
		// cut at a line boundary: no cell shows it, the missing
		// PROFILING_DISABLE row does
		{"cut between rows", strings.Join(lines[:len(lines)-2], ""), "holds 1 PROFILING_ENABLE row(s) but 0 PROFILING_DISABLE row(s), which msprof writes last", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			require.NoError(t, os.WriteFile(tt, []byte(c.body), 0o644))
			r := loadOne(t, dir)
			require.Contains(t, warningsText(r), tt+": "+c.warning)
			require.Equal(t, c.partial, r.Partial, r.PartialReason)
		})
	}
	require.NoError(t, os.WriteFile(tt, data, 0o644))
}
