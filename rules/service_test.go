package rules

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/npuprof/npuprof/analysis"
	"github.com/npuprof/npuprof/internal/tracegen"
	"github.com/npuprof/npuprof/pipeline"
	"github.com/npuprof/npuprof/results"
)

// analyzedService is a serving run's service folder (datetime spelling)
// analyzed alone.
func analyzedService(t testing.TB, sc tracegen.ServiceScenario) *analysis.Result {
	t.Helper()
	dir := t.TempDir()
	_, err := tracegen.GenerateService(dir, sc, tracegen.ServiceDatetime)
	require.NoError(t, err)
	res, err := pipeline.Analyze(context.Background(), dir, pipeline.Options{})
	require.NoError(t, err)
	return res
}

// serviceRules are the rules over the service profile.
var serviceRules = []string{"service-dp-idle", "service-prefill-interference", "service-kv-pressure", "service-queueing", "service-cache-hit"}

// Each service rule fires where the serving run has its problem and stays
// silent elsewhere, and none fires on the balanced, unsaturated run.
func TestServiceRulesFire(t *testing.T) {
	set := builtin(t)
	for _, c := range []struct {
		run  string
		fire []string
	}{
		{"a3-1", []string{"service-dp-idle"}},
		{"a3-90", []string{"service-prefill-interference", "service-kv-pressure", "service-queueing", "service-cache-hit"}},
		{"a3-90-cache", []string{"service-prefill-interference", "service-queueing"}},
		{"a2-25", []string{"service-cache-hit"}},
		{"a2-4-cache", nil},
	} {
		t.Run(c.run, func(t *testing.T) {
			var sc tracegen.ServiceScenario
			for _, s := range tracegen.ServiceScenarios() {
				if s.Name == c.run {
					sc = s
				}
			}
			require.Equal(t, c.run, sc.Name)
			rep := evaluate(t, set, analyzedService(t, sc), nil)
			require.Empty(t, rep.Failed())
			fired := map[string]bool{}
			for _, o := range rep.Outcomes {
				if o.Status == results.StatusFired {
					fired[o.Rule] = true
				}
			}
			for _, id := range serviceRules {
				want := false
				for _, f := range c.fire {
					want = want || f == id
				}
				require.Equal(t, want, fired[id], "%s on %s", id, c.run)
			}
		})
	}
}
