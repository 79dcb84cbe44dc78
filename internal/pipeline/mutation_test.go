package pipeline

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/npuprof/npuprof/internal/analysis"
	"github.com/npuprof/npuprof/internal/testutil"
	"github.com/npuprof/npuprof/internal/tracegen"
	"github.com/stretchr/testify/require"
)

// The mutation test (issue 31): over each file kind of a generated capture,
// random byte flips, cuts, duplications, insertions and deletions. Every
// mutation that changes a metric must also flag the rank (partial), add a
// warning or mark the metric unavailable; one that does not is silent.
// The silent rate is printed, and held at zero for communication.json
// (torch_npu's and msprof's analyze/communication.json, each read in a
// layout where it gives the rank's collectives) and for msprof's
// task_time_*.csv where it is the timeline (no msprof_*.json: duplicated
// chunks joining the cells of two rows, damaged task types, rows cut at a
// line boundary), and at most 0.5% overall.
//
// A mutation that leaves the file well-formed and only turns a digit of a
// number into another digit is a different, valid measurement: no reader
// can tell it from the real one. It is counted apart ("value edits") and
// left out of the rate (docs/robustness.md says so).
//
// NPUPROF_MUTATIONS sets the mutations per file kind and variant (default
// 12: a few seconds in `make test`; `make fuzz` runs 400).
func TestMutationSilentRate(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	per := 12
	if v := os.Getenv("NPUPROF_MUTATIONS"); v != "" {
		n, err := strconv.Atoi(v)
		require.NoError(t, err)
		per = n
	}
	seed := uint64(31)
	if v := os.Getenv("NPUPROF_MUTATION_SEED"); v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		require.NoError(t, err)
		seed = n
	}
	rng := rand.New(rand.NewPCG(seed, 1))
	s := testutil.Tiny()
	s.Ranks, s.CommJSON = 1, true
	total := map[string]*mutStats{}
	for _, variant := range []string{"full", "summaries-only", "communication-only", "msprof", "msprof-communication-only", "msprof-task-time"} {
		lay := tracegen.LayoutTorchNPUText
		if strings.HasPrefix(variant, "msprof") {
			lay = tracegen.LayoutMsprofText
		}
		dir, _ := testutil.GenerateLayout(t, s, lay)
		rank := onlyRank(t, dir)
		out := filepath.Join(rank, tracegen.OutputDir)
		if variant == "summaries-only" || variant == "communication-only" {
			require.NoError(t, os.Remove(filepath.Join(out, "trace_view.json")))
		}
		if variant == "communication-only" {
			// the collectives then come from communication.json alone
			require.NoError(t, os.Remove(filepath.Join(out, "kernel_details.csv")))
		}
		if variant == "msprof-communication-only" {
			// no msprof_*.json and no op_summary: the collectives come
			// from analyze/communication.json alone
			for _, pat := range []string{"msprof_*.json", "op_summary_*.csv"} {
				m, _ := filepath.Glob(filepath.Join(rank, "mindstudio_profiler_output", pat))
				require.NotEmpty(t, m, pat)
				for _, p := range m {
					require.NoError(t, os.Remove(p))
				}
			}
		}
		if variant == "msprof-task-time" {
			// no msprof_*.json: task_time_*.csv is the timeline (only
			// it is damaged; the msprof variant damages it beside the
			// json)
			m, _ := filepath.Glob(filepath.Join(rank, "mindstudio_profiler_output", "msprof_*.json"))
			require.NotEmpty(t, m)
			for _, p := range m {
				require.NoError(t, os.Remove(p))
			}
		}
		base := analyzeOne(t, rank)
		require.False(t, base.Partial, "%s: the generated capture is whole", variant)
		for _, f := range mutableFiles(t, rank) {
			if variant == "msprof-task-time" && !strings.HasPrefix(filepath.Base(f), "task_time_") {
				continue
			}
			if variant == "msprof-communication-only" && filepath.Base(f) != "communication.json" {
				// the other files were mutated in the msprof variant
				continue
			}
			kind := fileKind(f)
			if variant == "msprof-task-time" {
				kind += " (timeline)"
			}
			orig, err := os.ReadFile(f)
			require.NoError(t, err)
			st := total[kind]
			if st == nil {
				st = &mutStats{}
				total[kind] = st
			}
			n := per
			if variant == "msprof-task-time" {
				// a small file, fast to read: five times the
				// mutations, so that a silent kind of damage
				// shows in the default run (5% of them were)
				n = 5 * per
			}
			for i := 0; i < n; i++ {
				m, what := mutate(rng, orig)
				require.NoError(t, os.WriteFile(f, m, 0o644))
				got := analyzeOne(t, rank)
				changed := changedMetrics(base, got)
				st.n++
				if len(changed) == 0 {
					continue
				}
				st.changed++
				if flagged(base, got, changed) {
					continue
				}
				if digitEdit(orig, m) {
					st.valueEdits++
					continue
				}
				st.silent++
				if os.Getenv("NPUPROF_MUTATION_DEBUG") != "" {
					t.Logf("SILENT %s %s %s:\n%s\n---\n%s", variant, kind, what, around(orig, m), strings.Join(changed, ", "))
				}
				if len(st.examples) < 3 {
					st.examples = append(st.examples, fmt.Sprintf("%s %s: %s", variant, what, strings.Join(changed[:min(4, len(changed))], ", ")))
				}
			}
			require.NoError(t, os.WriteFile(f, orig, 0o644))
		}
	}
	kinds := make([]string, 0, len(total))
	for k := range total {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	var n, silent int
	for _, k := range kinds {
		st := total[k]
		n += st.n
		silent += st.silent
		t.Logf("mutation: %-26s %4d mutations, %4d changed a metric, %3d silent (%.1f%%), %3d value edits %s",
			k, st.n, st.changed, st.silent, 100*float64(st.silent)/float64(max(1, st.n)), st.valueEdits, strings.Join(st.examples, "; "))
	}
	rate := float64(silent) / float64(max(1, n))
	fmt.Printf("mutation test: %d mutations over %d file kinds, %d silent (%.2f%%)\n", n, len(kinds), silent, 100*rate)
	for _, k := range []string{"communication.json", "msprof communication.json", "msprof task_time_N.csv (timeline)"} {
		if st := total[k]; st != nil {
			require.Zero(t, st.silent, "%s: no silent mutation (%s)", k, strings.Join(st.examples, "; "))
		}
	}
	require.LessOrEqual(t, rate, 0.005, "silent rate over every file kind")
}

type mutStats struct {
	n, changed, silent, valueEdits int
	examples                       []string
}

func onlyRank(t *testing.T, dir string) string {
	ents, err := os.ReadDir(dir)
	require.NoError(t, err)
	for _, e := range ents {
		if e.IsDir() && (strings.HasSuffix(e.Name(), "_ascend_pt") || strings.HasPrefix(e.Name(), "PROF_")) {
			return filepath.Join(dir, e.Name())
		}
	}
	t.Fatalf("no rank folder in %s", dir)
	return ""
}

// mutableFiles are the rank's files, every kind once.
func mutableFiles(t *testing.T, rank string) []string {
	var out []string
	require.NoError(t, filepath.Walk(rank, func(p string, info os.FileInfo, err error) error {
		if err == nil && info.Mode().IsRegular() {
			out = append(out, p)
		}
		return err
	}))
	sort.Strings(out)
	return out
}

func analyzeOne(t *testing.T, path string) *analysis.RankResult {
	t.Helper()
	res, err := Analyze(context.Background(), path, Options{Workers: 1})
	if err != nil {
		// an error naming the input is a flag too: an empty result
		return &analysis.RankResult{Partial: true, PartialReason: err.Error()}
	}
	require.Len(t, res.Ranks, 1)
	return res.Ranks[0]
}

// changedMetrics names the metrics whose value differs from base, or that
// base measured and got does not (or the reverse).
func changedMetrics(base, got *analysis.RankResult) []string {
	var out []string
	for k, v := range base.Metrics {
		if g, ok := got.Metrics[k]; !ok || g != v {
			out = append(out, k)
		}
	}
	for k := range got.Metrics {
		if _, ok := base.Metrics[k]; !ok {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// flagged: the rank is partial, or holds a warning base did not, or every
// changed metric is unavailable with a reason.
func flagged(base, got *analysis.RankResult, changed []string) bool {
	if got.Partial {
		return true
	}
	// a warning the whole capture did not give names the damage (one it
	// gave may be gone with the damaged part, so counts do not tell)
	had := map[string]bool{}
	for _, w := range base.Warnings {
		had[w.File+"\x00"+w.Message] = true
	}
	for _, w := range got.Warnings {
		if !had[w.File+"\x00"+w.Message] {
			return true
		}
	}
	for _, k := range changed {
		if _, ok := got.Unavailable[k]; !ok {
			return false
		}
	}
	return true
}

// digitEdit: m is orig with one number turned into another valid number
// (a digit changed, added or removed), nothing else: a different, valid
// measurement that no reader can tell from the real one.
func digitEdit(orig, m []byte) bool {
	i := 0
	for i < len(orig) && i < len(m) && orig[i] == m[i] {
		i++
	}
	jo, jm := len(orig), len(m)
	for jo > i && jm > i && orig[jo-1] == m[jm-1] {
		jo--
		jm--
	}
	// widen both to the number around the change
	lo := i
	for lo > 0 && isNumByte(orig[lo-1]) {
		lo--
	}
	ho, hm := jo, jm
	for ho < len(orig) && isNumByte(orig[ho]) {
		ho++
	}
	for hm < len(m) && isNumByte(m[hm]) {
		hm++
	}
	a, b := string(orig[lo:ho]), string(m[lo:hm])
	if a == "" || b == "" || strings.Trim(a, "0123456789.eE+-") != "" || strings.Trim(b, "0123456789.eE+-") != "" {
		return false
	}
	_, errA := strconv.ParseFloat(a, 64)
	_, errB := strconv.ParseFloat(b, 64)
	return errA == nil && errB == nil
}

func isNumByte(c byte) bool {
	return isDigit(c) || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-'
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// mutate returns a damaged copy of b and what was done.
func mutate(rng *rand.Rand, b []byte) ([]byte, string) {
	n := len(b)
	if n == 0 {
		return []byte{'x'}, "insert into empty"
	}
	pos := rng.IntN(n)
	switch rng.IntN(5) {
	case 0:
		m := append([]byte(nil), b...)
		m[pos] ^= byte(1 << rng.IntN(8))
		return m, fmt.Sprintf("flip at %d", pos)
	case 1:
		return append([]byte(nil), b[:pos]...), fmt.Sprintf("cut at %d", pos)
	case 2:
		l := 1 + rng.IntN(min(200, n-pos))
		m := append([]byte(nil), b[:pos+l]...)
		m = append(m, b[pos:pos+l]...)
		m = append(m, b[pos+l:]...)
		return m, fmt.Sprintf("duplicate %d bytes at %d", l, pos)
	case 3:
		ins := make([]byte, 1+rng.IntN(16))
		for i := range ins {
			ins[i] = "{}[],:\"0123456789.-eE \n\tabc"[rng.IntN(27)]
		}
		m := append([]byte(nil), b[:pos]...)
		m = append(m, ins...)
		m = append(m, b[pos:]...)
		return m, fmt.Sprintf("insert %q at %d", ins, pos)
	default:
		l := 1 + rng.IntN(min(16, n-pos))
		m := append([]byte(nil), b[:pos]...)
		m = append(m, b[pos+l:]...)
		return m, fmt.Sprintf("delete %d bytes at %d", l, pos)
	}
}

// around is the first difference between a and b, with context.
func around(a, b []byte) string {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	lo := max(0, i-120)
	return fmt.Sprintf("was: %q\nnow: %q", a[lo:min(len(a), i+120)], b[lo:min(len(b), i+120)])
}

// fileKind names a file by its kind: msprof's names carry timestamps and
// device numbers (op_summary_20250109....csv, info.json.0), shown as N.
func fileKind(p string) string {
	if !strings.Contains(p, "PROF_") {
		return filepath.Base(p)
	}
	return "msprof " + reDigits.ReplaceAllString(filepath.Base(p), "N")
}

var reDigits = regexp.MustCompile(`[0-9]+`)
