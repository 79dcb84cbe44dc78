package analysis

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/npuprof/npuprof/internal/inputs/service"
	"github.com/npuprof/npuprof/internal/parser/model"
	"github.com/npuprof/npuprof/internal/tracegen"
)

// serviceMetricsOf runs the cluster passes, strictly, over a service
// profile alone and returns the service.* metrics and unavailable names.
func serviceMetricsOf(t *testing.T, p *model.ServiceProfile) (map[string]float64, map[string]string) {
	t.Helper()
	strictMetrics = true
	defer func() { strictMetrics = false }()
	cr := RunClusterWith(nil, ClusterInputs{Service: p})
	require.Empty(t, cr.Errors)
	got, un := map[string]float64{}, map[string]string{}
	for k, v := range cr.Metrics {
		if strings.HasPrefix(k, "service.") {
			got[k] = v
		}
	}
	for k, v := range cr.Unavailable {
		if strings.HasPrefix(k, "service.") {
			un[k] = v
		}
	}
	require.Same(t, p, ServiceOf(cr).Profile)
	return got, un
}

// Every service metric equals the generator's truth exactly, on every
// field system's run in every column spelling; what a spelling cannot
// give is unavailable with its reason.
func TestServiceMetricsExact(t *testing.T) {
	for _, sc := range tracegen.ServiceScenarios() {
		for _, sp := range tracegen.ServiceSpellings {
			t.Run(sc.Name+"/"+sp, func(t *testing.T) {
				dir := t.TempDir()
				truth, err := tracegen.GenerateService(dir, sc, sp)
				require.NoError(t, err)
				p, err := service.Read(dir)
				require.NoError(t, err)
				require.Empty(t, p.Issues)
				want := sp
				if sp == tracegen.ServiceDB {
					want = model.ServiceSpellingDB
				}
				require.NotEmpty(t, p.Files)
				for _, f := range p.Files {
					require.Equal(t, want, p.Spellings[f], f)
				}
				got, un := serviceMetricsOf(t, p)
				require.Equal(t, truth.Metrics, got)
				for name := range un {
					require.NotContains(t, truth.Metrics, name)
				}
				if sp == tracegen.ServiceMicros {
					require.Contains(t, un, MetricServiceTTFTP99Ms)
					require.Contains(t, un, MetricServiceDPCount)
				}
			})
		}
	}
}

// The field runs' shapes: one busy DP domain of four at one request, all
// four at 90; preemptions where the run had them.
func TestServiceFieldShapes(t *testing.T) {
	for _, c := range []struct {
		name          string
		busy, preempt float64
	}{{"a3-1", 1, 0}, {"a3-90", 4, 3}, {"a2-25", 1, 0}} {
		var sc tracegen.ServiceScenario
		for _, s := range tracegen.ServiceScenarios() {
			if s.Name == c.name {
				sc = s
			}
		}
		dir := t.TempDir()
		_, err := tracegen.GenerateService(dir, sc, tracegen.ServiceDatetime)
		require.NoError(t, err)
		p, err := service.Read(dir)
		require.NoError(t, err)
		got, _ := serviceMetricsOf(t, p)
		require.Equal(t, c.busy, got[MetricServiceDPBusyCount], c.name)
		require.Equal(t, c.preempt, got[MetricServiceKVPreemptionsCount], c.name)
		require.Equal(t, float64(sc.Requests), got[MetricServiceRequestsCount], c.name)
	}
}

// A request.csv cut inside its last row: the complete rows are read and
// the profile says the file was cut.
func TestServiceCutCSVIsPartial(t *testing.T) {
	sc := tracegen.ServiceScenarios()[0]
	for _, sp := range []string{tracegen.ServiceMicros, tracegen.ServiceMillis, tracegen.ServiceDatetime} {
		dir := t.TempDir()
		_, err := tracegen.GenerateService(dir, sc, sp)
		require.NoError(t, err)
		path := filepath.Join(dir, service.RequestCSV)
		b, err := os.ReadFile(path)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(path, b[:len(b)-7], 0o644))
		p, err := service.Read(dir)
		require.NoError(t, err)
		require.True(t, p.Partial())
		require.Equal(t, []model.ServiceFileIssue{{File: service.RequestCSV, Cut: true}}, p.Issues)
		require.Equal(t, sc.Requests-1, p.Requests.Len())
		got, _ := serviceMetricsOf(t, p)
		require.Equal(t, float64(sc.Requests-1), got[MetricServiceRequestsCount])
	}
	// every table: the cut file is named, its last row dropped, the others
	// whole
	whole := func(p *model.ServiceProfile) [4]int {
		return [4]int{p.Requests.Len(), p.Batches.Len(), p.KV.Len(), p.Forwards.Len()}
	}
	dir := t.TempDir()
	_, err := tracegen.GenerateService(dir, sc, tracegen.ServiceDatetime)
	require.NoError(t, err)
	p, err := service.Read(dir)
	require.NoError(t, err)
	want := whole(p)
	for i, f := range []string{service.RequestCSV, service.BatchCSV, service.KVCacheCSV, service.ForwardCSV} {
		dir := t.TempDir()
		_, err := tracegen.GenerateService(dir, sc, tracegen.ServiceDatetime)
		require.NoError(t, err)
		path := filepath.Join(dir, f)
		b, err := os.ReadFile(path)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(path, b[:len(b)-3], 0o644))
		p, err := service.Read(dir)
		require.NoError(t, err)
		require.Equal(t, []model.ServiceFileIssue{{File: f, Cut: true}}, p.Issues, f)
		w := want
		w[i]--
		require.Equal(t, w, whole(p), f)
	}
}

// No service profile: the pass measures nothing and says nothing.
func TestServiceAbsentSaysNothing(t *testing.T) {
	cr := RunCluster(nil, nil)
	for k := range cr.Metrics {
		require.False(t, strings.HasPrefix(k, "service."), k)
	}
	for k := range cr.Unavailable {
		require.False(t, strings.HasPrefix(k, "service."), k)
	}
	require.Nil(t, ServiceOf(cr))
}

func TestPercentileInterpolates(t *testing.T) {
	v := []float64{1, 2, 3, 4}
	require.Equal(t, 2.5, Percentile(v, 0.5))
	require.InDelta(t, 3.7, Percentile(v, 0.9), 1e-12)
	require.Equal(t, 4.0, Percentile(v, 1))
	require.Equal(t, 7.0, Percentile([]float64{7}, 0.99))
}

// The mid-2025 batch.csv's per-DP columns give the DP metrics when there
// is no forward.csv: the execution rows' dp{i}-size and dp{i}-forward(ms).
func TestServiceDPFromBatchColumns(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, service.BatchCSV), []byte(
		"name,res_list,start_time(ms),end_time(ms),batch_size,batch_type,during_time(ms),dp0-rid,dp0-size,dp0-forward(ms),dp1-rid,dp1-size,dp1-forward(ms)\n"+
			"batchFrameworkProcessing,\"['1', '2']\",1763604000000.5,1763604000001.5,2,Prefill,1.0,['1'],1,35.5,['2'],1,30.25\n"+
			"modelExec,\"['1', '2']\",1763604000002,1763604000040,2,Prefill,38,['1'],1,35.5,['2'],1,30.25\n"+
			"batchFrameworkProcessing,\"['1']\",1763604000041,1763604000042,1,Decode,1.0,['1'],1,20,,,\n"+
			"modelExec,\"['1']\",1763604000042,1763604000062,1,Decode,20,['1'],1,20,,0,4\n"), 0o644))
	p, err := service.Read(dir)
	require.NoError(t, err)
	require.Equal(t, map[string]string{service.BatchCSV: model.ServiceSpellingMillis}, p.Spellings)
	got, un := serviceMetricsOf(t, p)
	span := 20.0 + 40 // from the first execution's start to the last forward's end, ms
	require.Equal(t, map[string]float64{
		MetricServiceBatchCount:        2,
		MetricServiceBatchSizeMean:     1.5,
		MetricServiceDPCount:           2,
		MetricServiceDPBusyCount:       2,
		"service.dp.0.forward.mean_ms": (35.5 + 20) / 2,
		"service.dp.1.forward.mean_ms": (30.25 + 4) / 2,
		"service.dp.0.batch.size.mean": 1,
		"service.dp.1.batch.size.mean": 0.5,
		"service.dp.0.busy.share":      float64(55500000) / float64(int64(span*1e6)),
		"service.dp.1.busy.share":      float64(30250000) / float64(int64(span*1e6)),
		MetricServiceDPBusyShareMin:    float64(30250000) / float64(int64(span*1e6)),
		MetricServiceDPBusyShareMax:    float64(55500000) / float64(int64(span*1e6)),
	}, got)
	require.Contains(t, un[MetricServiceRequestsCount], "no request.csv")
	require.Contains(t, un[MetricServiceBatchMixedShare], "phases")
}

// Without data parallel the writer leaves dp_rank empty: every forward is
// domain 0's.
func TestServiceForwardsWithoutDPRank(t *testing.T) {
	sc := tracegen.ServiceScenarios()[0] // a2-25: one DP domain
	dir := t.TempDir()
	truth, err := tracegen.GenerateService(dir, sc, tracegen.ServiceDatetime)
	require.NoError(t, err)
	path := filepath.Join(dir, service.ForwardCSV)
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	// dp_rank is the third column from the end: blank it on every row
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	for i := 1; i < len(lines); i++ {
		c := strings.Split(lines[i], ",")
		c[len(c)-3] = ""
		lines[i] = strings.Join(c, ",")
	}
	require.NoError(t, os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644))
	p, err := service.Read(dir)
	require.NoError(t, err)
	got, _ := serviceMetricsOf(t, p)
	require.Equal(t, truth.Metrics, got)
}
