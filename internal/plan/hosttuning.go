package plan

import (
	"strings"

	"github.com/npuprof/npuprof/internal/results"
	"github.com/npuprof/npuprof/internal/rules"
)

// hostTuning is the field's host OS tuning (the first field report's final
// script; vLLM-Ascend's optimization_and_tuning.md §2, §5): each command,
// what it does, and the text that shows a script already runs it.
var hostTuning = []struct{ command, what, inScript string }{
	{"cpupower frequency-set -g performance", "CPU governor performance: the launch threads run at full clock", "-g performance"},
	{"sysctl -w vm.swappiness=0", "no swapping of the serving processes", "vm.swappiness=0"},
	{"sysctl -w kernel.numa_balancing=0", "no automatic NUMA page migration under the bound threads", "kernel.numa_balancing=0"},
	{"sysctl -w kernel.sched_migration_cost_ns=50000", "the scheduler keeps hot threads on their CPU longer", "kernel.sched_migration_cost_ns=50000"},
}

// hostRules are the rules whose finding says the host holds the device
// back.
var hostRules = []string{"host-bound-free", "host-bound"}

// AddHostTuning gives the plan its optional host tuning when a host-bound
// rule fired; script is the --deploy script's lines (nil without one),
// read to mark the commands it already runs. The commands are never
// actions: the deploy diff does not hold them.
func AddHostTuning(rep *rules.Report, script []string) {
	if rep.Plan == nil {
		return
	}
	var fired []string
	for _, f := range rep.Findings {
		for _, id := range hostRules {
			if f.Rule == id {
				fired = append(fired, id)
			}
		}
	}
	if len(fired) == 0 {
		return
	}
	ht := &results.HostTuning{Reason: strings.Join(fired, ", ") + " fired: the host holds the device back; optional, as root on every node"}
	for _, h := range hostTuning {
		in := false
		for _, l := range script {
			if l = strings.TrimSpace(l); !strings.HasPrefix(l, "#") && strings.Contains(l, h.inScript) {
				in = true
			}
		}
		ht.Lines = append(ht.Lines, results.HostLine{Command: h.command, What: h.what, InScript: in})
	}
	rep.Plan.HostTuning = ht
}
