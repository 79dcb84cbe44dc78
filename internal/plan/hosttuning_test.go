package plan_test

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/npuprof/npuprof/internal/plan"
	"github.com/npuprof/npuprof/internal/tracegen"
)

// The field's host tuning comes beside the plan when the host holds the
// device back, as its own block: never an action, never in the deploy
// diff; the commands a script already runs are marked.
func TestHostTuningApartFromTheDiff(t *testing.T) {
	sc, ok := tracegen.Lookup("host-bound")
	require.True(t, ok)
	res := analyze(t, sc)
	rep, _ := planFor(t, res, fieldScript)
	var host bool
	for _, f := range rep.Findings {
		host = host || f.Rule == "host-bound-free" || f.Rule == "host-bound"
	}
	require.True(t, host, "a host-bound rule fires on the host-bound scenario")
	require.NotNil(t, rep.Plan)
	plan.AddHostTuning(rep, strings.Split(fieldScript, "\n"))
	ht := rep.Plan.HostTuning
	require.NotNil(t, ht)
	require.Equal(t, "host-bound-free fired: the host holds the device back; optional, as root on every node", ht.Reason)
	var cmds []string
	for _, l := range ht.Lines {
		cmds = append(cmds, l.Command)
		require.False(t, l.InScript, l.Command)
		require.NotContains(t, rep.Plan.DeployDiff, l.Command)
		require.NotContains(t, rep.Diff, l.Command)
	}
	require.Equal(t, []string{"cpupower frequency-set -g performance", "sysctl -w vm.swappiness=0",
		"sysctl -w kernel.numa_balancing=0", "sysctl -w kernel.sched_migration_cost_ns=50000"}, cmds)

	// the first field report's final script runs all four
	final, err := os.ReadFile("../../testdata/deploy/field-report-1-final.sh")
	require.NoError(t, err)
	plan.AddHostTuning(rep, strings.Split(string(final), "\n"))
	for _, l := range rep.Plan.HostTuning.Lines {
		require.True(t, l.InScript, l.Command)
	}

	// no host-bound finding: no host tuning
	res = analyze(t, tracegen.FieldReport()[0])
	rep, _ = planFor(t, res, fieldScript, "concurrency=25")
	for _, f := range rep.Findings {
		require.NotContains(t, []string{"host-bound-free", "host-bound"}, f.Rule)
	}
	plan.AddHostTuning(rep, nil)
	require.Nil(t, rep.Plan.HostTuning)
}
