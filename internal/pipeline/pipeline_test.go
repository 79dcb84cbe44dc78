package pipeline

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/npuprof/npuprof/internal/analysis"
	"github.com/npuprof/npuprof/internal/parser/model"
	"github.com/npuprof/npuprof/internal/pipeline/gather"
	"github.com/npuprof/npuprof/internal/testutil"
	"github.com/npuprof/npuprof/internal/tracegen"
)

func closeEnough(want, got float64) bool {
	return math.Abs(want-got) <= 1e-4*math.Max(math.Abs(want), 1e-9)
}

// slowCluster is a 16-rank decode capture (two TP-8 groups) with rank 11's
// compute 40% slower.
func slowCluster(t *testing.T, layers, steps int) (string, *tracegen.Truth) {
	t.Helper()
	sc := testutil.Scenario(t, "clean-steps")
	sc.Ranks, sc.Layers, sc.Steps = 16, layers, steps
	sc.SlowRank, sc.SlowFactor = 11, 1.4
	dir, truth := testutil.Generate(t, sc)
	return dir, truth
}

// A 16-rank cluster is analyzed with every core busy and one model per
// worker; the injected slow rank is named, with why.
func TestSixteenRankClusterNamesSlowRank(t *testing.T) {
	dir, truth := slowCluster(t, 3, 3)
	var mu sync.Mutex
	progress := 0
	workers := runtime.GOMAXPROCS(0)
	res, err := Analyze(context.Background(), dir, Options{Workers: workers, Progress: func(done, total int, _ string) {
		mu.Lock()
		progress = done
		mu.Unlock()
		require.Equal(t, 16, total)
	}})
	require.NoError(t, err)
	require.Equal(t, 16, progress)
	require.Len(t, res.Ranks, 16)
	for i, rr := range res.Ranks {
		require.Equal(t, i, rr.Rank)
		require.Empty(t, rr.Errors)
		require.True(t, closeEnough(truth.Ranks[i].Metrics["overlap.computing.time_us"], rr.Metrics["overlap.computing.time_us"]))
	}
	c := res.Cluster
	require.NotNil(t, c)
	require.Empty(t, c.Errors)
	var window []analysis.SlowRank
	steps := map[int]bool{}
	for _, s := range analysis.SkewOf(c).Slow {
		if s.Step < 0 {
			window = append(window, s)
		} else {
			require.Equal(t, 11, s.Rank, "per-step outlier %+v", s)
			steps[s.Step] = true
		}
	}
	require.Len(t, window, 1, "%+v", analysis.SkewOf(c).Slow)
	require.Equal(t, 11, window[0].Rank)
	require.Equal(t, "computing", window[0].Quantity)
	require.Contains(t, window[0].Reason, "computing")
	require.Contains(t, window[0].Reason, "arrived last")
	require.Len(t, steps, 3, "named in every step")
	require.Equal(t, 11.0, c.Metrics["skew.computing.max_rank"])
	require.Greater(t, c.Metrics["skew.computing.max_over_median"], 1.2)
	require.Contains(t, c.Metrics, "skew.free.max_over_median")
	require.Contains(t, c.Metrics, "skew.communication.max_over_median")
	// arrivals: rank 11's TP group (ranks 8-15) waits for rank 11
	var tp *analysis.GroupArrival
	for i := range analysis.ArrivalOf(c).Groups {
		g := &analysis.ArrivalOf(c).Groups[i]
		if g.Group == "tp" && g.Ranks[0] == 8 {
			tp = g
		}
	}
	require.NotNil(t, tp)
	require.Equal(t, []int{8, 9, 10, 11, 12, 13, 14, 15}, tp.Ranks)
	require.Equal(t, 11, tp.LastRank)
	require.Greater(t, tp.ByRank[11].Last, tp.Collectives/2)
	require.Less(t, tp.ByRank[11].Wait, tp.ByRank[8].Wait, "the slow rank waits least")
}

// Peak memory grows with the number of workers, not with the number of
// ranks: with one worker, each rank beyond the fourth adds about what its
// results hold once its model is released, far less than a model.
//
// Two measures: what stays allocated after the run (exact, after a GC),
// which tells a rank's results from its model (what gather.Models holds for
// all ranks); and the sampled peak while it runs. Heap sampling is noisy
// on a loaded machine (a sampled peak can miss or catch a rank's
// transient), so the peak is checked against the results' growth plus a
// few models' worth of slack; keeping every model would exceed that. This
// measurement runs only with NPUPROF_MEMORY_TESTS=1 (make bench and make
// bench-quick set it; TestClusterMemoryBoundedByWorkersHTML in
// htmlmem_test.go does the same through the HTML report);
// TestHTMLReportHoldsAtMostWorkersModels checks the mechanism
// deterministically in every run.
func TestClusterMemoryBoundedByWorkers(t *testing.T) {
	if testing.Short() || os.Getenv("NPUPROF_MEMORY_TESTS") == "" {
		t.Skip("memory measurement: set NPUPROF_MEMORY_TESTS=1 to run it")
	}
	// ranks large enough (a model of ~0.7 MiB) that a model stands well
	// above the sampling noise of the peak (~1 MiB on a loaded machine)
	dir, _ := slowCluster(t, 24, 6)
	old := debug.SetGCPercent(10)
	defer debug.SetGCPercent(old)
	analyze := func(path string) func() any {
		return func() any {
			res, err := Analyze(context.Background(), path, Options{Workers: 1})
			require.NoError(t, err)
			return res
		}
	}
	// the lowest of three runs' peaks: a sampled peak can catch a
	// transient, but keeping every model raises every run's peak
	var p16, h16 uint64
	for i := range 3 {
		p, h := measureHeap(analyze(dir))
		if i == 0 || p < p16 {
			p16 = p
		}
		h16 = h
	}
	_, k16 := measureHeap(func() any {
		p, err := gather.Models(context.Background(), dir, gather.Options{Workers: 1, SkipCommunication: true})
		require.NoError(t, err)
		return p
	})
	p4 := fourRanksPeak(t, dir, analyze(dir))
	result := float64(h16) / 16 // a rank's results, model released
	model := float64(k16) / 16  // a rank's model
	t.Logf("per rank: results %.0f KiB, model %.0f KiB; peak heap above baseline: 4 ranks %d KiB, 16 ranks %d KiB (one worker)", result/1024, model/1024, p4>>10, p16>>10)
	require.Greater(t, model, 64.0*1024, "the measurement can see models")
	require.Less(t, result, 0.5*model, "a rank's results must be far smaller than its model")
	// twelve more ranks may add their results and some slack, but not
	// twelve models
	require.Less(t, float64(p16), float64(p4)+12*result+4*model, "memory must not grow with the rank count")
}

// measureHeap runs fn and returns the sampled peak heap above the start
// and what fn's result holds after the run, both in bytes.
func measureHeap(fn func() any) (peak, held uint64) {
	runtime.GC()
	var base runtime.MemStats
	runtime.ReadMemStats(&base)
	var maxHeap atomic.Uint64
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		var ms runtime.MemStats
		for {
			select {
			case <-stop:
				return
			case <-time.After(2 * time.Millisecond):
			}
			runtime.ReadMemStats(&ms)
			if ms.HeapAlloc > maxHeap.Load() {
				maxHeap.Store(ms.HeapAlloc)
			}
		}
	}()
	res := fn()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	if ms.HeapAlloc > maxHeap.Load() {
		maxHeap.Store(ms.HeapAlloc)
	}
	close(stop)
	<-done
	runtime.KeepAlive(res)
	return maxHeap.Load() - min(base.HeapAlloc, maxHeap.Load()), ms.HeapAlloc - min(base.HeapAlloc, ms.HeapAlloc)
}

// fourRanksPeak moves all but four of the 16 ranks under dir away, runs fn
// (which reads dir) three times and returns the highest sampled peak: a
// sampled peak can only miss the true one.
func fourRanksPeak(t *testing.T, dir string, fn func() any) uint64 {
	ents, _ := filepath.Glob(filepath.Join(dir, "*_ascend_pt"))
	require.Len(t, ents, 16)
	away := t.TempDir()
	for _, e := range ents[4:] {
		require.NoError(t, os.Rename(e, filepath.Join(away, filepath.Base(e))))
	}
	defer func() {
		for _, e := range ents[4:] {
			require.NoError(t, os.Rename(filepath.Join(away, filepath.Base(e)), e))
		}
	}()
	var p4 uint64
	for range 3 {
		p, _ := measureHeap(fn)
		p4 = max(p4, p)
	}
	return p4
}

// The hot-rank scenario (rank 5's GroupedMatmul 2.5x slower) names rank 5;
// a clean cluster names nobody.
func TestHotRankNamedCleanNot(t *testing.T) {
	for _, c := range []struct {
		name string
		slow []int
	}{{"hot-rank", []int{5}}, {"clean-steps", nil}, {"ep-fc1-cumsum", nil}} {
		sc := testutil.Scenario(t, c.name)
		sc.Layers, sc.Steps = 4, 3
		dir, _ := testutil.Generate(t, sc)
		res, err := Analyze(context.Background(), dir, Options{})
		require.NoError(t, err)
		var got []int
		for _, s := range analysis.SkewOf(res.Cluster).Slow {
			if s.Step < 0 {
				got = append(got, s.Rank)
			}
		}
		require.Equal(t, c.slow, got, "%s: %+v", c.name, analysis.SkewOf(res.Cluster).Slow)
	}
}

// TestSkipCommunicationSameResult: Analyze leaves communication.json
// unread because no pass reads Rank.Communication; a pass that starts to
// must flip gather.Options.SkipCommunication there, or this test fails.
func TestSkipCommunicationSameResult(t *testing.T) {
	_, root := testutil.GenerateTiny(t)
	readCommunication = true
	comm := 0
	modelHook = func(r *model.Rank) { comm += len(r.Communication) }
	full, err := Analyze(context.Background(), root, Options{})
	readCommunication, modelHook = false, nil
	require.NoError(t, err)
	require.Len(t, full.Ranks, 1)
	require.Positive(t, comm, "the generated rank has a communication.json")
	skip, err := Analyze(context.Background(), root, Options{})
	require.NoError(t, err)
	doc := func(res *analysis.Result) string {
		var out []any
		for _, rr := range res.Ranks {
			out = append(out, rr.Metrics, rr.Unavailable, analysis.StepsOf(rr), rr.Errors, rr.Warnings, rr.Partial)
		}
		b, err := json.Marshal(out)
		require.NoError(t, err)
		return string(b)
	}
	require.Equal(t, doc(full), doc(skip))
}

// Analyze keeps a rank's timeline sample only when asked (the HTML
// report): a cluster's results otherwise hold none.
func TestAnalyzeSamplesOnlyWhenAsked(t *testing.T) {
	dir, _ := slowCluster(t, 2, 2)
	for _, want := range []bool{false, true} {
		res, err := Analyze(t.Context(), dir, Options{Workers: 2, TimelineSample: want})
		require.NoError(t, err)
		require.Len(t, res.Ranks, 16)
		for _, rr := range res.Ranks {
			require.Equal(t, want, analysis.TimelineSampleOf(rr) != nil, "rank %d", rr.Rank)
			ran := false
			for _, tm := range rr.Timings {
				ran = ran || tm.Pass == analysis.TimelineSamplePass.Name
			}
			require.Equal(t, want, ran, "rank %d", rr.Rank)
		}
	}
}
