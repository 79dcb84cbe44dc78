package gather

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/npuprof/npuprof/internal/parser/model"
	"github.com/npuprof/npuprof/internal/parser/parquetio"
	"github.com/npuprof/npuprof/internal/units"
)

// rankID is what reconcile needs to know about a parsed rank.
type rankID struct {
	Rank         int // -1 when unknown
	Path         string
	DirTimestamp string
	Steps        []int
	// Kineto: a torch.profiler Chrome trace, whose rank only its header's
	// distributedInfo gives
	Kineto bool
	// World is the world size the input states (model.Rank.World), 0
	// when none; WorldFrom says where.
	World     int
	WorldFrom string
}

// reconcile fills unknown ranks (folder order), keeps the newest of
// duplicate ranks (the newest folder timestamp, as msprof-analyze does),
// and notes missing ranks and ranks whose step sets differ. It returns the
// rank number of every input, whether to keep it, the notes on the inputs
// (numbered, duplicate) and the notes on the set of ranks kept (missing
// ranks, different step sets); nothing here is fatal.
func reconcile(ids []rankID) (ranks []int, keep []bool, notes, setNotes []string) {
	ranks, notes = fillRanks(ids)
	keep, kept, dups := dedupe(ids, ranks)
	notes = append(notes, dups...)
	world, from := expectedWorld(ids)
	if missing := missingInWorld(world, ranks, kept); len(missing) > 0 {
		setNotes = append(setNotes, worldNote(missing, world, from, len(kept)))
	}
	if len(kept) > 1 {
		if note := missingRanks(ranks, kept); note != "" && world == 0 {
			setNotes = append(setNotes, note)
		}
		if note := stepSets(ids, ranks, kept); note != "" {
			setNotes = append(setNotes, note)
		}
	}
	return ranks, keep, notes, setNotes
}

// The openings of the set notes (isSetNote).
const (
	missingRanksNote = "missing ranks: "
	stepSetsNote     = "ranks have different step sets: "
)

// isSetNote reports whether note is one of reconcile's set notes.
func isSetNote(note string) bool {
	return strings.HasPrefix(note, missingRanksNote) || strings.HasPrefix(note, stepSetsNote) || isWorldNote(note)
}

// worldMissing is what a world note says after the ranks it names.
const worldMissing = " missing (world of "

// isWorldNote reports whether note is worldNote's.
func isWorldNote(note string) bool {
	return strings.HasPrefix(note, "rank") && strings.Contains(note, worldMissing)
}

// expectedWorld is the largest world size the inputs state, and where
// (model.Rank.World); 0 when none does.
func expectedWorld(ids []rankID) (world int, from string) {
	for _, id := range ids {
		if id.World > world {
			world, from = id.World, id.WorldFrom
		}
	}
	return world, from
}

// missingInWorld lists the ranks of [0, world) that no kept input has.
func missingInWorld(world int, ranks, kept []int) []int {
	if world <= 0 {
		return nil
	}
	have := make(map[int]bool, len(kept))
	for _, i := range kept {
		have[ranks[i]] = true
	}
	var missing []int
	for r := range world {
		if !have[r] {
			missing = append(missing, r)
		}
	}
	return missing
}

// worldNote names the missing ranks of a world in one line: "ranks 8-15
// missing (world of 16)", then where the world size comes from.
func worldNote(missing []int, world int, from string, present int) string {
	what := "ranks "
	if len(missing) == 1 {
		what = "rank "
	}
	return fmt.Sprintf("%s%s%s%d); the world size is from %s; the analysis covers the %d rank(s) present", what, rankRange(missing), worldMissing, world, from, present)
}

// fillRanks numbers the ranks of unknown rank: rank 0 for a single input,
// else the lowest numbers no input has, in folder order.
func fillRanks(ids []rankID) (ranks []int, notes []string) {
	n := len(ids)
	ranks = make([]int, n)
	used := map[int]bool{}
	for i, id := range ids {
		ranks[i] = id.Rank
		if id.Rank >= 0 {
			used[id.Rank] = true
		}
	}
	nextFree := 0
	for i, id := range ids {
		if id.Rank >= 0 {
			continue
		}
		if n == 1 {
			ranks[i] = 0
			why := "no profiler_info_{rank}.json, RANK_DEVICE_MAP or info.json rank_id"
			if id.Kineto {
				why = "a Kineto trace whose header has no distributedInfo.rank"
			}
			notes = append(notes, fmt.Sprintf("%s: rank unknown (%s); reported as rank 0", id.Path, why))
			continue
		}
		for used[nextFree] {
			nextFree++
		}
		ranks[i] = nextFree
		used[nextFree] = true
		notes = append(notes, fmt.Sprintf("%s: rank unknown; assigned rank %d by folder order", id.Path, nextFree))
	}
	return ranks, notes
}

// dedupe keeps one input per rank, the newest folder: keep[i] says whether
// input i is kept, kept lists the kept inputs in rank order.
func dedupe(ids []rankID, ranks []int) (keep []bool, kept []int, notes []string) {
	keep = make([]bool, len(ids))
	order := make([]int, len(ids))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool {
		x, y := order[a], order[b]
		if ranks[x] != ranks[y] {
			return ranks[x] < ranks[y]
		}
		return ids[x].DirTimestamp > ids[y].DirTimestamp
	})
	for k, i := range order {
		if k > 0 && ranks[order[k-1]] == ranks[i] {
			k := ids[kept[len(kept)-1]]
			if k.DirTimestamp == ids[i].DirTimestamp {
				// equal or missing timestamps: nothing says which is newer
				notes = append(notes, fmt.Sprintf("rank %d appears twice; kept %s (the first found: no folder timestamp tells which is newer), ignored %s", ranks[i], k.Path, ids[i].Path))
				continue
			}
			notes = append(notes, fmt.Sprintf("rank %d appears twice; kept the newest folder %s, ignored %s", ranks[i], k.Path, ids[i].Path))
			continue
		}
		keep[i] = true
		kept = append(kept, i)
	}
	return keep, kept, notes
}

// missingRanks notes the ranks below the highest kept one that no input
// has ("" when none is missing).
func missingRanks(ranks, kept []int) string {
	maxRank := ranks[kept[len(kept)-1]]
	if maxRank+1 == len(kept) {
		return ""
	}
	have := map[int]bool{}
	for _, i := range kept {
		have[ranks[i]] = true
	}
	var missing []string
	total := 0
	for r := 0; r <= maxRank; r++ {
		if !have[r] {
			total++
			if len(missing) < 20 {
				missing = append(missing, strconv.Itoa(r))
			}
		}
	}
	if total == 0 {
		return ""
	}
	more := ""
	if total > len(missing) {
		more = fmt.Sprintf(" and %d more", total-len(missing))
	}
	return fmt.Sprintf(missingRanksNote+"%s%s (found %d of %d ranks 0..%d); the cluster analysis covers the ranks present", strings.Join(missing, ", "), more, len(kept), maxRank+1, maxRank)
}

// stepSets notes kept ranks whose step sets differ, grouped by set, the
// largest group first ("" when all have the same steps).
func stepSets(ids []rankID, ranks, kept []int) string {
	sets := map[string][]int{}
	var keys []string
	for _, i := range kept {
		ss := make([]string, len(ids[i].Steps))
		for k, v := range ids[i].Steps {
			ss[k] = strconv.Itoa(v)
		}
		key := strings.Join(ss, ",")
		if _, ok := sets[key]; !ok {
			keys = append(keys, key)
		}
		sets[key] = append(sets[key], ranks[i])
	}
	if len(keys) <= 1 {
		return ""
	}
	sort.SliceStable(keys, func(a, b int) bool { return len(sets[keys[a]]) > len(sets[keys[b]]) })
	parts := make([]string, len(keys))
	for k, key := range keys {
		if key == "" {
			key = "none"
		}
		parts[k] = fmt.Sprintf("ranks %s have steps [%s]", rankRange(sets[keys[k]]), key)
	}
	return stepSetsNote + strings.Join(parts, "; ") + "; per-step comparisons use the ranks that have each step"
}

// idOf is what reconcile needs to know about a parsed rank.
func idOf(r *model.Rank) rankID {
	world, from := r.World()
	return rankID{Rank: r.Rank, Path: r.Path, DirTimestamp: r.DirTimestamp, Steps: stepIDs(r), Kineto: r.Format == model.FormatTorchNPUChrome,
		World: world, WorldFrom: from}
}

// rankRange prints ranks compactly: 0-3,5,7-8.
func rankRange(r []int) string {
	var parts []string
	for _, run := range units.Runs(r) {
		if run[1] > run[0] {
			parts = append(parts, fmt.Sprintf("%d-%d", run[0], run[1]))
		} else {
			parts = append(parts, strconv.Itoa(run[0]))
		}
	}
	return strings.Join(parts, ",")
}

// stepIDs lists a rank's step ids.
func stepIDs(r *model.Rank) []int {
	ids := make([]int, len(r.Steps))
	for i, s := range r.Steps {
		ids[i] = s.ID
	}
	return ids
}

// IdentityOf is what reconciling r with the ranks of other exports needs
// (the node tables' RankID).
func IdentityOf(r *model.Rank) parquetio.RankID {
	id := idOf(r)
	return parquetio.RankID{Rank: id.Rank, Path: id.Path, DirTimestamp: id.DirTimestamp, Steps: id.Steps, Kineto: id.Kineto, World: id.World, WorldFrom: id.WorldFrom}
}

// fromIdentity is the rankID of a rank read from node tables.
func fromIdentity(id parquetio.RankID) rankID {
	return rankID{Rank: id.Rank, Path: id.Path, DirTimestamp: id.DirTimestamp, Steps: id.Steps, Kineto: id.Kineto, World: id.World, WorldFrom: id.WorldFrom}
}
