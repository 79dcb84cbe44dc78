package tracegen

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/npuprof/npuprof/internal/parser/model"
)

// small shrinks a scenario so the whole suite stays fast.
func small(s Scenario) Scenario {
	s.Layers, s.Steps = 4, 3
	return s
}

func mustLookup(t *testing.T, name string) Scenario {
	t.Helper()
	s, ok := Lookup(name)
	require.True(t, ok, name)
	return s
}

func TestGroupHashSuffix(t *testing.T) {
	// The op-name token of a real communicator (docs/formats.md#hccl-op-names-and-groups).
	g := model.NewGroup("90.91.105.46%enp189s0f0_60000_0_1736410538306028", "tp", 0, []int{0})
	assert.Equal(t, "17148521525495523210", g.Hash)
	assert.Equal(t, "210", g.HashSuffix)
}

func TestUnionOnHandMadeIntervals(t *testing.T) {
	// Unsorted, overlapping, touching, nested and empty intervals.
	iv := []interval{{50, 60}, {0, 10}, {5, 15}, {15, 20}, {30, 40}, {32, 35}, {70, 70}, {80, 79}}
	u := unionSegments(iv)
	assert.Equal(t, []interval{{0, 20}, {30, 40}, {50, 60}}, u)
	assert.EqualValues(t, 40, segLen(u))

	a := []interval{{0, 20}, {30, 40}, {50, 60}}
	b := []interval{{5, 8}, {18, 32}, {35, 36}, {55, 70}}
	assert.Equal(t, []interval{{0, 5}, {8, 18}, {32, 35}, {36, 40}, {50, 55}}, subtractSegments(a, b))
	assert.Equal(t, a, subtractSegments(a, nil))
	assert.Empty(t, subtractSegments(a, []interval{{-5, 100}}))
	assert.Equal(t, []interval{{20, 30}, {40, 50}}, gapsWithin(interval{0, 60}, a))

	// compute [0,10) [20,30); comm [5,25) [40,45); window [0,50)
	o := breakdown(interval{0, 50}, []interval{{20, 30}, {0, 10}}, []interval{{40, 45}, {5, 25}})
	assert.EqualValues(t, 20, o.computeNs)
	assert.EqualValues(t, 25, o.commNs)
	assert.EqualValues(t, 15, o.notOvNs) // [10,20) + [40,45)
	assert.EqualValues(t, 35, o.ns)      // [0,30) + [40,45)
	assert.EqualValues(t, 15, o.freeNs())
	assert.Equal(t, []interval{{10, 20}, {40, 45}}, o.notOverlapped)
}

func TestFormatting(t *testing.T) {
	assert.Equal(t, "1736408883704643.212", tsText(1736408883704643212))
	assert.Equal(t, "12.005", tsText(12005))
	assert.Equal(t, "0.000", tsText(0))
	for ns, want := range map[int64]string{31250: "31.25", 145000: "145.0", 20: "0.02", 145570: "145.57", 1: "0.001", 0: "0.0"} {
		assert.Equal(t, want, usText(ns))
	}
	assert.Equal(t, "0", string(appendDur(nil, 0)))
	assert.Equal(t, `"""25,4096;25,8"""`, string(appendCSVCell(nil, quoted("25,4096;25,8"))))
	assert.Equal(t, "BF16;INT32", string(appendCSVCell(nil, "BF16;INT32")))
}

func TestScenarios(t *testing.T) {
	names := map[string]Scenario{}
	steps := false
	for _, s := range Scenarios() {
		require.NoError(t, s.Validate(), s.Name)
		assert.Equal(t, 8, s.Ranks, s.Name)
		names[s.Name] = s
		steps = steps || s.ProfilerSteps
	}
	assert.True(t, steps, "a scenario with ProfilerSteps")
	for _, n := range []string{"ep-fc1-cumsum", "ep-fc1", "noep-cumsum", "clean", "hot-rank"} {
		require.Contains(t, names, n)
	}
	a, b, c, d, e := names["ep-fc1-cumsum"], names["ep-fc1"], names["noep-cumsum"], names["clean"], names["hot-rank"]
	assert.True(t, a.ExpertParallel && a.FlashComm1 && a.Cumsum)
	assert.True(t, b.ExpertParallel && b.FlashComm1 && !b.Cumsum)
	assert.True(t, !c.ExpertParallel && !c.FlashComm1 && c.Cumsum)
	assert.True(t, !d.ExpertParallel && !d.FlashComm1 && !d.Cumsum)
	assert.True(t, e.ExpertParallel && e.HotRank >= 0 && e.SkewFactor > 1)

	bad := a
	bad.Ranks = 0
	assert.Error(t, bad.Validate())
	bad = a
	bad.HotRank = 8
	assert.Error(t, bad.Validate())
	_, err := Generate(t.TempDir(), bad)
	assert.Error(t, err)
}

func TestGroupsHaveDistinctSuffixes(t *testing.T) {
	for _, ranks := range []int{1, 8, 16, 32} {
		lay := layout{tp: min(ranks, maxTP), ranks: ranks, created: 1736410538306028}
		shared := map[string]string{} // group instance key -> comm
		for r := 0; r < ranks; r++ {
			seen := map[string]bool{}
			for _, g := range lay.groupsOf(r) {
				assert.False(t, seen[g.HashSuffix], "ranks %d rank %d suffix %s", ranks, r, g.HashSuffix)
				seen[g.HashSuffix] = true
				assert.Equal(t, r, g.GlobalRanks[g.Rank])
				key := g.Name + jsonText(g.GlobalRanks)
				if c, ok := shared[key]; ok {
					assert.Equal(t, c, g.Comm, "members of one group share its name")
				}
				shared[key] = g.Comm
			}
		}
	}
}

func jsonText(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// readTree returns every file under dir keyed by relative path.
func readTree(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	require.NoError(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		files[rel], err = os.ReadFile(p)
		return err
	}))
	return files
}

func TestDeterminism(t *testing.T) {
	s := small(mustLookup(t, "ep-fc1-cumsum-steps"))
	d1, d2, d3 := t.TempDir(), t.TempDir(), t.TempDir()
	_, err := Generate(d1, s)
	require.NoError(t, err)
	_, err = Generate(d2, s)
	require.NoError(t, err)
	f1, f2 := readTree(t, d1), readTree(t, d2)
	require.Equal(t, len(f1), len(f2))
	for k, v := range f1 {
		assert.True(t, bytes.Equal(v, f2[k]), "file %s differs between runs", k)
	}

	// One rank alone is byte-identical to the same rank of the full run.
	rt, err := GenerateRank(d3, s, 3)
	require.NoError(t, err)
	f3 := readTree(t, d3)
	for k, v := range f3 {
		assert.True(t, bytes.Equal(v, f1[k]), "GenerateRank file %s differs", k)
	}
	truth, err := ReadTruth(d1)
	require.NoError(t, err)
	assert.Equal(t, truth.Ranks[3].Metrics, rt.Metrics)
	assert.Equal(t, truth.Ranks[3].Steps, rt.Steps)

	// WriteTrace streams the same trace_view.json.
	var buf bytes.Buffer
	rt2, err := WriteTrace(&buf, s, 3)
	require.NoError(t, err)
	assert.True(t, bytes.Equal(buf.Bytes(), f3[filepath.Join(rt.Dir, OutputDir, "trace_view.json")]))
	assert.Equal(t, rt.Metrics, rt2.Metrics)

	// A different seed changes the output.
	s.Seed++
	var other bytes.Buffer
	_, err = WriteTrace(&other, s, 3)
	require.NoError(t, err)
	assert.False(t, bytes.Equal(buf.Bytes(), other.Bytes()))
}

// TestScenarioFilesMatchTruth re-derives the truth of every rank of every
// built-in scenario from the written files.
func TestScenarioFilesMatchTruth(t *testing.T) {
	for _, s := range Scenarios() {
		s := small(s)
		t.Run(s.Name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			truth, err := Generate(dir, s)
			require.NoError(t, err)
			onDisk, err := ReadTruth(dir)
			require.NoError(t, err)
			require.Equal(t, truth.Ranks, onDisk.Ranks)
			assert.Equal(t, s, onDisk.Scenario)
			require.Len(t, truth.Ranks, s.Ranks)
			for _, rt := range truth.Ranks {
				verifyRank(t, dir, s, rt)
			}
		})
	}
}

func TestTruthSanity(t *testing.T) {
	gen := func(name string) (Scenario, *Truth) {
		s := small(mustLookup(t, name))
		tr, err := Generate(t.TempDir(), s)
		require.NoError(t, err)
		return s, tr
	}
	ls := func(s Scenario) float64 { return float64(s.Layers * s.Steps) }

	for _, name := range []string{"ep-fc1-cumsum", "noep-cumsum", "ep-fc1", "clean"} {
		s, tr := gen(name)
		for _, r := range tr.Ranks {
			m := r.Metrics
			want := 0.0
			if s.Cumsum {
				want = ls(s)
			}
			assert.Equal(t, want, m[MetricMoECumsumCount], "%s rank %d cumsum", name, r.Rank)
			assert.Equal(t, want, m[MetricMoECumsumAicpuCount])
			if s.Cumsum {
				assert.Greater(t, m[MetricMoECumsumUs]/m[MetricMoECumsumCount], 25.0)
			}
			assert.Equal(t, ls(s), m[MetricMoERoutingCount])
			assert.Equal(t, 2*ls(s), m[MetricMoEGmmCount])
			assert.Less(t, m[MetricCommNotOverlappedUs], m[MetricCommunicationUs])
			assert.Greater(t, m[MetricFreeUs], 0.0)
			assert.Greater(t, m[MetricEventWaitCount], 0.0)
			assert.Greater(t, m[MetricEventWaitStream(streamCompute, "count")], 0.0)
			assert.Greater(t, m[MetricEventWaitStream(streamTP, "count")], 0.0)
			assert.InDelta(t, m[MetricKernelComputeUs], m[MetricComputingUs], 1e-6, "one sequential compute stream")
			sum := m[MetricComputingUs] + m[MetricCommNotOverlappedUs] + m[MetricFreeUs]
			assert.InDelta(t, m[MetricWindowUs], sum, 1e-6)
			if s.FlashComm1 {
				agrs := m[MetricHCCLType("allgather", "count")] + m[MetricHCCLType("reducescatter", "count")]
				assert.GreaterOrEqual(t, agrs, 4*ls(s))
				assert.Zero(t, m[MetricHCCLType("allreduce", "count")])
				assert.Equal(t, 3*ls(s), m[MetricHCCLGroup("ep", "count")])
			} else {
				// Only the logits all-gather, once per step.
				assert.Equal(t, float64(s.Steps), m[MetricHCCLType("allgather", "count")])
				assert.Equal(t, 2*ls(s), m[MetricHCCLType("allreduce", "count")])
				assert.Zero(t, m[MetricHCCLGroup("ep", "count")])
			}
			assert.InDelta(t, m[MetricHCCLTotalUs], m[MetricCommunicationUs], 1e-6, "collectives are serialised, so their union is their sum")
		}
	}

	s, tr := gen("hot-rank")
	hot := tr.Ranks[s.HotRank].Metrics
	for _, r := range tr.Ranks {
		if r.Rank == s.HotRank {
			continue
		}
		m := r.Metrics
		assert.Greater(t, hot[MetricMoEGmmUs], 0.8*s.SkewFactor*m[MetricMoEGmmUs], "hot GMM slower")
		assert.Less(t, hot[MetricHCCLTotalUs], m[MetricHCCLTotalUs], "peers wait for the hot rank in HCCL")
	}
}

func TestSizedScenario(t *testing.T) {
	s := mustLookup(t, "clean")
	s.Ranks = 2
	sized, err := SizedScenario(s, 3<<20)
	require.NoError(t, err)
	var c countWriter
	_, err = WriteTrace(&c, sized, 0)
	require.NoError(t, err)
	assert.InEpsilon(t, float64(3<<20), float64(c.n), 0.1)
}

// BenchmarkWriteTrace measures streaming one rank's trace (94 layers).
func BenchmarkWriteTrace(b *testing.B) {
	s, _ := Lookup("ep-fc1-cumsum")
	s.Layers, s.Steps = 94, 2
	var c countWriter
	if _, err := WriteTrace(&c, s, 0); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(c.n)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := WriteTrace(&countWriter{}, s, 0); err != nil {
			b.Fatal(err)
		}
	}
}
