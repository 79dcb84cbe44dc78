package pipeline_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/npuprof/npuprof/internal/parser/model"
	"github.com/npuprof/npuprof/internal/pipeline"
	"github.com/npuprof/npuprof/internal/render"
	"github.com/npuprof/npuprof/internal/results/assemble"
	"github.com/npuprof/npuprof/internal/testutil"
	"github.com/npuprof/npuprof/internal/tracegen"
)

// TestReduceFrameworkEarlySameResult: Analyze reduces a trace's framework
// ops and links as soon as it is read (gather.Options.ReduceFramework);
// the document (every pass result, warning and note) is the one a
// reduction after the whole rank is read gives, on every tracegen
// scenario, the real samples with a trace, and traces made to hold exact
// duplicate tasks, ops and links, and tasks and ops out of order.
func TestReduceFrameworkEarlySameResult(t *testing.T) {
	var paths, mutated []string
	for _, sc := range tracegen.Scenarios() {
		dir, _ := testutil.Generate(t, sc)
		paths = append(paths, dir)
	}
	for _, how := range []string{"doubled", "partly doubled, shuffled"} {
		_, root := testutil.GenerateTiny(t)
		mutateTrace(t, filepath.Join(root, tracegen.OutputDir, "trace_view.json"), how)
		mutated = append(mutated, root)
	}
	requireSameEarly(t, paths, mutated)
}

// TestReduceFrameworkEarlySameResultSamples is
// TestReduceFrameworkEarlySameResult on the real samples with a trace, a
// real rank's trace made to hold two devices, and made to hold duplicates
// and disorder (its ops launch several tasks each).
func TestReduceFrameworkEarlySameResultSamples(t *testing.T) {
	samples := testutil.SamplesDir(t)
	var paths, mutated []string
	require.NoError(t, filepath.WalkDir(samples, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.Name() != "trace_view.json" {
			return err
		}
		if filepath.Base(filepath.Dir(p)) == "ASCEND_PROFILER_OUTPUT" {
			p = filepath.Dir(filepath.Dir(p))
		}
		paths = append(paths, p)
		return nil
	}))
	require.GreaterOrEqual(t, len(paths), 4)
	real := filepath.Join(samples, "Ascend-msinsight/test/data/pytorch/text/level1/rank0_ascend_pt")
	// two devices in one trace: the rank splits in two (SplitDevices)
	two := filepath.Join(t.TempDir(), filepath.Base(real))
	require.NoError(t, os.CopyFS(two, os.DirFS(real)))
	withSecondDevice(t, filepath.Join(two, "ASCEND_PROFILER_OUTPUT", "trace_view.json"))
	paths = append(paths, two)
	for _, how := range []string{"doubled", "partly doubled, shuffled"} {
		root := filepath.Join(t.TempDir(), filepath.Base(real))
		require.NoError(t, os.CopyFS(root, os.DirFS(real)))
		mutateTrace(t, filepath.Join(root, "ASCEND_PROFILER_OUTPUT", "trace_view.json"), how)
		mutated = append(mutated, root)
	}
	requireSameEarly(t, paths, mutated)
}

// requireSameEarly analyzes each path with the early reduction and
// without, and requires the same document; the mutated ones must have
// dropped duplicate tasks and framework ops.
func requireSameEarly(t *testing.T, paths, mutated []string) {
	t.Helper()
	dupes := regexp.MustCompile(`counted exact duplicates once: [1-9][0-9]* device task\(s\), [0-9]+ HCCL op\(s\), [1-9][0-9]* framework op\(s\)`)
	// the document, and the launches and op name counts the passes read
	analyze := func(path string, keep bool) string {
		var b bytes.Buffer
		defer pipeline.SetKeepFramework(keep)()
		defer pipeline.SetModelHook(func(r *model.Rank) {
			v := r.TaskLaunches()
			for i := range v.Len() {
				if v.Task(i) >= 0 {
					fmt.Fprintf(&b, "%d@%d ", v.Task(i), v.End(i))
				}
			}
			counts := make([]int32, r.Syms.Len())
			r.CountOpNames(counts)
			fmt.Fprintln(&b, counts)
		})()
		res, err := pipeline.Analyze(context.Background(), path, pipeline.Options{Workers: 1, TimelineSample: true})
		require.NoError(t, err, path)
		require.NoError(t, render.WriteJSONFull(&b, assemble.Doc(res, nil)))
		return b.String()
	}
	gaps := 0
	for _, p := range append(paths, mutated...) {
		early := analyze(p, false)
		require.Equal(t, analyze(p, true), early, p)
		if strings.Contains(early, `"ledger.host_gap.time_us": `) {
			gaps++ // the launches are read
		}
	}
	require.Positive(t, gaps)
	for _, p := range mutated {
		require.Regexp(t, dupes, analyze(p, false), p)
	}
}

// mutateTrace rewrites a trace_view.json: "doubled" repeats every event;
// "partly doubled, shuffled" repeats every third event that is not
// metadata and shuffles those events (metadata first, as written).
func mutateTrace(t *testing.T, path, how string) {
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	var evs []json.RawMessage
	require.NoError(t, json.Unmarshal(b, &evs))
	var meta, rest []json.RawMessage
	for _, e := range evs {
		var h struct{ Ph string }
		require.NoError(t, json.Unmarshal(e, &h))
		if h.Ph == "M" {
			meta = append(meta, e)
		} else {
			rest = append(rest, e)
		}
	}
	switch how {
	case "doubled":
		evs = append(evs, evs...)
	default:
		for i := 0; i < len(rest); i += 3 {
			rest = append(rest, rest[i])
		}
		rng := rand.New(rand.NewPCG(1, 2))
		rng.Shuffle(len(rest), func(i, j int) { rest[i], rest[j] = rest[j], rest[i] })
		evs = append(meta, rest...)
	}
	out, err := json.Marshal(evs)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, out, 0o644))
	require.True(t, strings.HasPrefix(string(out), "["))
}
