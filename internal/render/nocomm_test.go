package render

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/npuprof/npuprof/internal/analysis"
	"github.com/npuprof/npuprof/internal/pipeline"
	"github.com/npuprof/npuprof/internal/results"
	"github.com/npuprof/npuprof/internal/results/assemble"
	"github.com/npuprof/npuprof/internal/testutil"
)

// noCommResult analyzes testutil.NoCommCapture: ranks 0 and 1 complete,
// rank 2 without collective data. With only, just that rank's folder.
func noCommResult(t *testing.T, only bool) (*analysis.Result, string) {
	t.Helper()
	dir, truth, _ := testutil.NoCommCapture(t, 3)
	path := dir
	if only {
		path = filepath.Join(dir, truth.Ranks[2].Dir)
	}
	res, err := pipeline.Analyze(context.Background(), path, pipeline.Options{TimelineSample: true})
	require.NoError(t, err)
	why := res.Ranks[len(res.Ranks)-1].Unavailable["steps.communication_us"]
	require.Contains(t, why, "no collective data: ")
	return res, why
}

// TestJSONStepsWithoutCollectives: the rank without collective data has
// null communication, overlap and free in every step (the key is there,
// the value is not 0), the reasons in its unavailable map, and reading the
// document back keeps them null; the other ranks keep their numbers.
func TestJSONStepsWithoutCollectives(t *testing.T) {
	res, why := noCommResult(t, false)
	doc := assemble.Doc(res, nil)
	var b bytes.Buffer
	require.NoError(t, WriteJSON(&b, doc))

	var raw struct {
		Ranks []struct {
			Rank        int                          `json:"rank"`
			Unavailable map[string]string            `json:"unavailable"`
			Steps       []map[string]json.RawMessage `json:"steps"`
		} `json:"ranks"`
	}
	require.NoError(t, json.Unmarshal(b.Bytes(), &raw))
	require.Len(t, raw.Ranks, 3)
	nulls := []string{"communication_us", "communication_not_overlapped_us", "overlapped_us", "free_us"}
	for _, rk := range raw.Ranks {
		if rk.Rank == 2 {
			// the cut rank's last step is left out (steps.cut)
			require.Len(t, rk.Steps, 2)
			require.Contains(t, rk.Unavailable["steps.cut"], "ProfilerStep#4 left out")
		} else {
			require.Len(t, rk.Steps, 3)
		}
		for _, s := range rk.Steps {
			for _, k := range []string{"window_us", "computing_us", "preparing_us", "tasks"} {
				require.NotEqual(t, "null", string(s[k]), "rank %d %s", rk.Rank, k)
			}
			require.NotEqual(t, "0", string(s["computing_us"]))
			for _, k := range nulls {
				v, ok := s[k]
				require.True(t, ok, "rank %d: %s is kept (as null when not measured)", rk.Rank, k)
				if rk.Rank == 2 {
					require.Equal(t, "null", string(v), "rank 2 %s", k)
				} else {
					require.NotEqual(t, "null", string(v), "rank %d %s", rk.Rank, k)
				}
			}
		}
		for _, k := range nulls {
			if rk.Rank == 2 {
				require.Contains(t, rk.Unavailable["steps."+k], why, k)
			} else {
				require.NotContains(t, rk.Unavailable, "steps."+k)
			}
		}
	}
	require.Equal(t, why, raw.Ranks[2].Unavailable["steps.communication_us"])
	require.Equal(t, "needs both compute kernels and collectives; "+why, raw.Ranks[2].Unavailable["steps.free_us"])

	back, err := results.Read(bytes.NewReader(b.Bytes()), "doc.json")
	require.NoError(t, err)
	for i, rd := range back.Ranks {
		for j, s := range rd.Steps {
			require.Equal(t, i == 2, s.CommunicationUs == nil, "rank %d step %d", rd.Rank, j)
			require.Equal(t, i == 2, s.FreeUs == nil, "rank %d step %d", rd.Rank, j)
			require.Equal(t, doc.Ranks[i].Steps[j], s)
		}
	}
	var again bytes.Buffer
	require.NoError(t, WriteJSON(&again, back))
	require.Equal(t, b.String(), again.String(), "read back and written again: the same bytes")
}

// TestTextStepsWithoutCollectives: the per-step table prints n/a for what
// was not measured (never 0), once the reason, and leaves the rank out of
// the means of the others.
func TestTextStepsWithoutCollectives(t *testing.T) {
	res, why := noCommResult(t, true)
	require.Len(t, res.Ranks, 1)
	var b bytes.Buffer
	require.NoError(t, WriteText(&b, withTables(assemble.Doc(res, nil))))
	out := b.String()
	_, table, ok := strings.Cut(out, "Per step (mean over ranks)\n")
	require.True(t, ok, out)
	table, _, _ = strings.Cut(table, "\n\n")
	lines := strings.Split(strings.TrimRight(table, "\n"), "\n")
	// rank 2's last step is left out: its trace is cut before that step's
	// device work is known to be complete (steps.cut)
	require.Len(t, analysis.StepsOf(res.Ranks[0]), 2)
	require.Contains(t, res.Ranks[0].Unavailable["steps.cut"], "ProfilerStep#4 left out")
	require.GreaterOrEqual(t, len(lines), 1+2+1, table)
	for _, l := range lines[1:3] {
		f := strings.Fields(l)
		require.Len(t, f, 9, l)
		require.Equal(t, []string{"n/a", "n/a", "n/a"}, f[4:7], l)
		require.NotContains(t, l, "0.0µs", l)
	}
	// the note may wrap at TextWidth columns
	require.Equal(t, squash("  comm, not overlapped, free: not measured on rank 2 (left out of the means): "+Safe(why, 300)), squash(strings.Join(lines[3:], "\n")))
	require.Equal(t, 1, strings.Count(out, "not measured on rank 2"), "the reason once")
	// the whole-rank table too
	require.Regexp(t, `\n\s+2\s+\S+\s+\S+\s+n/a\s+n/a\s+n/a\s+n/a\n`, out)

	// three ranks: the means are over the two that measured
	res, _ = noCommResult(t, false)
	b.Reset()
	require.NoError(t, WriteText(&b, withTables(assemble.Doc(res, nil))))
	_, table, _ = strings.Cut(b.String(), "Per step (mean over ranks)\n")
	table, _, _ = strings.Cut(table, "\n\n")
	lines = strings.Split(strings.TrimRight(table, "\n"), "\n")
	require.GreaterOrEqual(t, len(lines), 5, table) // the note may wrap
	for k, l := range lines[1:4] {
		f := strings.Fields(l)
		id := analysis.StepsOf(res.Ranks[0])[k].Step
		var comm int64
		for _, rr := range res.Ranks[:2] {
			comm += analysis.StepsOf(rr)[k].Communication
		}
		require.Equal(t, fmt.Sprint(id), f[0])
		// rank 2 has no step 4 (left out: its trace is cut)
		require.Equal(t, map[bool]string{true: "2", false: "3"}[k == 2], f[1], l)
		require.Equal(t, Dur(us(comm)/2), f[4], l)
	}
	require.Contains(t, lines[4], "not measured on rank 2 (left out of the means)")
}

// TestHTMLStepsWithoutCollectives: the step table shows "unavailable" with
// the reason for what was not measured (no number cell for it), says once
// above the table why, and the step chart has gaps (null), not 0.
func TestHTMLStepsWithoutCollectives(t *testing.T) {
	res, why := noCommResult(t, false)
	page := renderHTML(t, htmlInput{Doc: assemble.Doc(res, nil), Version: "test"})
	doc := assemble.Doc(res, nil)
	require.Greater(t, checkNumbers(t, page, doc), 0)
	for _, s := range analysis.StepsOf(res.Ranks[2]) {
		for _, k := range []string{"window_us", "computing_us"} {
			present(t, page, fmt.Sprintf(`data-rank="2" data-metric="step.%d.%s"`, s.Step, k))
		}
		for _, k := range []string{"communication_us", "communication_not_overlapped_us", "overlapped_us", "free_us"} {
			absent(t, page, fmt.Sprintf(`data-rank="2" data-metric="step.%d.%s"`, s.Step, k))
			present(t, page, fmt.Sprintf(`data-rank="1" data-metric="step.%d.%s"`, s.Step, k))
		}
	}
	present(t, page, "<b>rank 2</b> unavailable: per-step communication, overlapped, not overlapped and free: "+cleanText(why, 0))
	present(t, page, `<span class="na-label">unavailable</span><span class="na-why">`+cleanText(why, 0)+`</span>`)

	charts := chartOptions(t, page)
	p := charts["chart-steps"]
	variants, _ := p["variants"].([]any)
	require.Len(t, variants, 3)
	series := variants[2].(map[string]any)["series"].([]any)
	require.Len(t, series, 4)
	for i, s := range series {
		data := s.(map[string]any)["data"].([]any)
		require.Len(t, data, len(analysis.StepsOf(res.Ranks[2])))
		for k, v := range data {
			if i == 0 {
				require.InDelta(t, us(analysis.StepsOf(res.Ranks[2])[k].Computing), v, 1e-9)
			} else {
				require.Nil(t, v, "series %d step %d: a gap, not 0", i, k)
			}
		}
	}
}

// A float fact prints as people write it: the mean KV-cache usage of a
// vLLM log (a float sum) was shown as 0.14675000000000002.
func TestFactTextFloat(t *testing.T) {
	for v, want := range map[float64]string{0.14675000000000002: "0.14675", 1499.4: "1499.4", 90: "90", 2.9988: "2.9988", 123456789012: "123456789012", 0.1 + 0.2: "0.3"} {
		if got := FactText(v); got != want {
			t.Errorf("FactText(%v) = %q, want %q", v, got, want)
		}
	}
	if got := FactText([]int{1, 2}); got != "[1,2]" {
		t.Errorf("ints: %q", got)
	}
}
