package tracegen

import (
	"fmt"

	"github.com/npuprof/npuprof/internal/parser/model"
)

// Group kinds that carry collectives.
const (
	grpTP = iota // tensor-parallel group: attention collectives, logits all-gather
	grpEP        // expert-parallel group: FLASHCOMM1 MoE all-gathers / reduce-scatter
	numCollGroups
)

// layout is the process-group layout shared by all ranks.
type layout struct {
	tp      int
	ranks   int
	pp      int   // pipeline stages (0 or 1: none)
	created int64 // communicator creation time (µs), part of comm names
}

// ip is the host address of the node holding rank r.
func ip(r int) string { return fmt.Sprintf("10.0.0.%d", 1+r/maxTP) }

// commName builds a communicator name like
// `10.0.0.1%enp189s0f0_60000_0_1736410538306028`.
func (l layout) commName(root, counter int) string {
	return fmt.Sprintf("%s%%enp189s0f0_%d_%d_%d", ip(root), 60000+root%maxTP, counter, l.created+int64(counter))
}

// groupsOf returns the communicators of rank r (profiler_metadata.json
// parallel_group_info entries, with the hash fields HCCL op names carry):
// tp (and ep when EP is on) first, then default_group, dp and pp.
func (l layout) groupsOf(r int) []model.Group {
	var out []model.Group
	for _, g := range l.allGroups() {
		if i := indexOf(g.members, r); i >= 0 {
			out = append(out, model.NewGroup(g.comm, g.name, i, g.members))
		}
	}
	return out
}

// groupInstance is one communicator of the whole job.
type groupInstance struct {
	name    string
	members []int
	comm    string
}

// allGroups lists every communicator of the job in a fixed order and names
// them: each name is tried with an increasing counter until its 3-character
// hash suffix differs from the suffixes of all groups already named on any
// of its member ranks, so every rank sees distinct suffixes.
func (l layout) allGroups() []groupInstance {
	var gs []groupInstance
	for node := 0; node*l.tp < l.ranks; node++ {
		var m []int
		for i := 0; i < l.tp; i++ {
			m = append(m, node*l.tp+i)
		}
		gs = append(gs, groupInstance{name: "tp", members: m})
	}
	var all []int
	for i := 0; i < l.ranks; i++ {
		all = append(all, i)
	}
	// vLLM creates the ep group for every MoE model, expert parallel or
	// not (with it off no collective runs on it)
	gs = append(gs, groupInstance{name: "ep", members: all})
	gs = append(gs, groupInstance{name: "default_group", members: all})
	for j := 0; j < l.tp; j++ {
		var m []int
		for i := j; i < l.ranks; i += l.tp {
			m = append(m, i)
		}
		gs = append(gs, groupInstance{name: "dp", members: m})
	}
	if l.pp > 1 {
		// the ranks of one place in every stage
		per := l.ranks / l.pp
		for j := 0; j < per; j++ {
			var m []int
			for st := 0; st < l.pp; st++ {
				m = append(m, st*per+j)
			}
			gs = append(gs, groupInstance{name: "pp", members: m})
		}
	} else {
		for r := 0; r < l.ranks; r++ {
			gs = append(gs, groupInstance{name: "pp", members: []int{r}})
		}
	}
	used := make([]map[string]bool, l.ranks)
	for i := range used {
		used[i] = map[string]bool{}
	}
	counter := 0
	for gi := range gs {
		g := &gs[gi]
		for {
			name := l.commName(g.members[0], counter)
			counter++
			suf := model.NewGroup(name, g.name, 0, g.members).HashSuffix
			clash := false
			for _, m := range g.members {
				clash = clash || used[m][suf]
			}
			if clash {
				continue
			}
			for _, m := range g.members {
				used[m][suf] = true
			}
			g.comm = name
			break
		}
	}
	return gs
}

func indexOf(a []int, v int) int {
	for i, x := range a {
		if x == v {
			return i
		}
	}
	return -1
}
