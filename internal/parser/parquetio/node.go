package parquetio

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/npuprof/npuprof/internal/parser/model"
)

// The node tables (v2): what the cross-rank analysis needs of every rank
// an export run wrote, in one file per table and run
// (OUTDIR/<table>/part-<run>.parquet), the rank a column: each rank's
// state (rank_state: its identity, its parallel-group memberships, and its
// analysis results as `npuprof analyze` merges them), its metrics
// (rank_metrics) and, once, the communicators its ranks are in (groups)
// with their member ranks. `npuprof analyze` of one or several exports
// reads these and no per-rank table; a file of a run whose manifest is
// missing (the run never finished) is not read.

// Node tables (folder names under OUTDIR). Public contract.
const (
	TableRankState   = "rank_state"
	TableRankMetrics = "rank_metrics"
	TableGroups      = "groups"
)

// NodeTables lists the node tables in the order they are written.
var NodeTables = []string{TableGroups, TableRankMetrics, TableRankState}

// State kinds: the rank_state rows of a rank besides its pass results
// (kind "pass:NAME").
const (
	// StateID is the rank's identity (RankID, JSON).
	StateID = "id"
	// StateGroups are the rank's memberships (GroupRef list, JSON).
	StateGroups = "groups"
	// StateRecord is the rank's analysis record (opaque to SQL).
	StateRecord = "record"
	// StatePass prefixes a pass result's kind (opaque to SQL).
	StatePass = "pass:"
)

// StateRow is one row of rank_state.
type StateRow struct {
	Rank int32  `parquet:"rank"`
	Kind string `parquet:"kind,dict"`
	Data []byte `parquet:"data"`
}

// RankMetric is one row of rank_metrics: a row of metrics with its rank.
// Metric's columns follow rank (parquet-go flattens an embedded struct).
type RankMetric struct {
	Rank int32 `parquet:"rank"`
	Metric
}

// GroupRow is one row of groups: a communicator (parallel_group_info
// entry) some rank of the run is in, with every member's global rank.
type GroupRow struct {
	ID          int32   `parquet:"id"`
	Comm        string  `parquet:"comm"`
	Name        string  `parquet:"name,dict"`
	Hash        string  `parquet:"hash"`
	HashSuffix  string  `parquet:"hash_suffix,dict"`
	GlobalRanks []int32 `parquet:"global_ranks,list"`
}

// GroupRef is one of a rank's memberships: the groups row (ID, in the same
// run's file) and the rank's group_rank in it.
type GroupRef struct {
	ID   int32 `json:"id"`
	Rank int   `json:"rank"`
}

// RankID is what reconciling the ranks of several exports needs to know
// of one: its rank (final, as exported), folder, folder timestamp, step
// ids, whether it is a Kineto trace, and the world size it states.
type RankID struct {
	Rank         int    `json:"rank"`
	Path         string `json:"path"`
	DirTimestamp string `json:"dir_timestamp,omitempty"`
	Steps        []int  `json:"steps"`
	Kineto       bool   `json:"kineto,omitempty"`
	World        int    `json:"world,omitempty"`
	WorldFrom    string `json:"world_from,omitempty"`
}

// NodeRank is one rank as the node tables hold it.
type NodeRank struct {
	ID      RankID
	Groups  []model.Group
	Metrics []Metric
	// State are its opaque rows (kind, data): the record and pass results.
	State []StateRow
}

// NodeFile is the node file of table written by run.
func NodeFile(outDir, table, run string) string {
	return filepath.Join(outDir, table, "part-"+run+".parquet")
}

// WriteNode writes the node tables of run: ranks' states and metrics and
// the groups they are in, each distinct group once.
func WriteNode(outDir, run string, ranks []NodeRank) error {
	var groups []GroupRow
	ids := map[string]int32{}
	var states []StateRow
	var metrics []RankMetric
	for _, r := range ranks {
		rk := int32(r.ID.Rank)
		id, err := json.Marshal(r.ID)
		if err != nil {
			return err
		}
		refs := make([]GroupRef, 0, len(r.Groups))
		for _, g := range r.Groups {
			key := groupKey(g)
			gid, ok := ids[key]
			if !ok {
				gid = int32(len(groups))
				ids[key] = gid
				gr := GroupRow{ID: gid, Comm: g.Comm, Name: g.Name, Hash: g.Hash, HashSuffix: g.HashSuffix, GlobalRanks: make([]int32, len(g.GlobalRanks))}
				for i, m := range g.GlobalRanks {
					gr.GlobalRanks[i] = int32(m)
				}
				groups = append(groups, gr)
			}
			refs = append(refs, GroupRef{ID: gid, Rank: g.Rank})
		}
		gb, err := json.Marshal(refs)
		if err != nil {
			return err
		}
		states = append(states, StateRow{Rank: rk, Kind: StateID, Data: id}, StateRow{Rank: rk, Kind: StateGroups, Data: gb})
		for _, s := range r.State {
			s.Rank = rk
			states = append(states, s)
		}
		ms := slices.Clone(r.Metrics)
		slices.SortStableFunc(ms, func(a, b Metric) int { return strings.Compare(a.Name, b.Name) })
		for _, m := range ms {
			metrics = append(metrics, RankMetric{Rank: rk, Metric: m})
		}
	}
	if err := writeParquet(NodeFile(outDir, TableGroups, run), TableGroups, len(groups), func(i int) GroupRow { return groups[i] }); err != nil {
		return err
	}
	if err := writeParquet(NodeFile(outDir, TableRankMetrics, run), TableRankMetrics, len(metrics), func(i int) RankMetric { return metrics[i] }); err != nil {
		return err
	}
	return writeParquet(NodeFile(outDir, TableRankState, run), TableRankState, len(states), func(i int) StateRow { return states[i] })
}

// groupKey identifies a communicator by everything the groups row holds.
func groupKey(g model.Group) string {
	var b strings.Builder
	b.WriteString(g.Comm)
	for _, s := range []string{g.Name, g.Hash, g.HashSuffix} {
		b.WriteByte(0)
		b.WriteString(s)
	}
	for _, m := range g.GlobalRanks {
		b.WriteByte(0)
		b.WriteString(strconv.Itoa(m))
	}
	return b.String()
}

// NodeState is one rank read from the node tables: identity, groups (the
// member lists shared with the other ranks of its file) and its opaque
// state rows.
type NodeState struct {
	ID     RankID
	Groups []model.Group
	State  []StateRow
	// Export is the folder it was read from.
	Export string
}

// HasNodeTables reports whether the export at dir holds node tables
// written by a finished run (its manifest names it) for every rank it
// has per-rank partitions of: an export before v2 has none, and one that
// a v2 run added ranks to has some ranks without; both are read rank by
// rank.
func HasNodeTables(dir string) bool {
	files, _ := filepath.Glob(filepath.Join(dir, TableRankState, "part-*.parquet"))
	if len(files) == 0 {
		return false
	}
	ms, err := manifests(dir)
	if err != nil {
		return true // ReadNodes says what is wrong
	}
	covered := map[int]bool{}
	any := false
	for _, f := range files {
		run := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(f), "part-"), ".parquet")
		for _, m := range ms {
			if m.Run == run {
				any = true
				for _, r := range m.Ranks {
					covered[r] = true
				}
			}
		}
	}
	if !any {
		return false
	}
	parts, _ := Ranks(dir)
	for _, r := range parts {
		if !covered[r] {
			return false
		}
	}
	return true
}

// ReadNodes reads every rank of the export at dir from its node tables:
// the files of runs that finished (their manifest exists), each rank from
// the run that stamped it when the export has per-rank partitions. It
// refuses a rank held by two finished runs' node files without a stamp
// to choose between them, and a rank with per-rank partitions but no node
// rows (written by an npuprof before v2: export it again).
func ReadNodes(dir string) ([]NodeState, error) {
	ms, err := manifests(dir)
	if err != nil {
		return nil, err
	}
	done := map[string]bool{}
	for _, m := range ms {
		if m.Run != "" {
			done[m.Run] = true
		}
	}
	files, _ := filepath.Glob(filepath.Join(dir, TableRankState, "part-*.parquet"))
	slices.Sort(files)
	byRank := map[int]*NodeState{}
	from := map[int]string{}
	var order []int
	for _, f := range files {
		run := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(f), "part-"), ".parquet")
		if !done[run] {
			continue
		}
		groups, err := readGroups(NodeFile(dir, TableGroups, run), dir)
		if err != nil {
			return nil, err
		}
		var bad error
		if err := readFile(dir, f, func(s *StateRow) {
			if bad != nil {
				return
			}
			rk := int(s.Rank)
			if prev, ok := from[rk]; ok && prev != run {
				if stamp, err := os.ReadFile(stampPath(dir, rk)); err == nil {
					if strings.TrimSpace(string(stamp)) != run {
						return // this run's copy was replaced
					}
					delete(byRank, rk)
				} else {
					bad = fmt.Errorf("%s: rank %d is in the node tables of two export runs (%s, %s); export the capture again into a new folder", dir, rk, prev, run)
					return
				}
			} else if stamp, err := os.ReadFile(stampPath(dir, rk)); err == nil && strings.TrimSpace(string(stamp)) != run {
				return
			}
			ns := byRank[rk]
			if ns == nil {
				ns = &NodeState{Export: dir}
				byRank[rk] = ns
				from[rk] = run
				order = append(order, rk)
			}
			switch s.Kind {
			case StateID:
				bad = json.Unmarshal(s.Data, &ns.ID)
			case StateGroups:
				var refs []GroupRef
				if bad = json.Unmarshal(s.Data, &refs); bad == nil {
					for _, ref := range refs {
						if int(ref.ID) >= len(groups) || ref.ID < 0 {
							bad = fmt.Errorf("%s: rank %d names group %d, which %s does not have", f, rk, ref.ID, TableGroups)
							return
						}
						g := groups[ref.ID]
						g.Rank = ref.Rank
						ns.Groups = append(ns.Groups, g)
					}
				}
			default:
				ns.State = append(ns.State, StateRow{Rank: s.Rank, Kind: s.Kind, Data: slices.Clone(s.Data)})
			}
		}); err != nil {
			return nil, err
		}
		if bad != nil {
			return nil, fmt.Errorf("%s: %w", f, bad)
		}
	}
	// a rank with per-rank partitions but no node rows was written by an
	// older npuprof
	if parts, err := Ranks(dir); err == nil {
		var old []string
		for _, r := range parts {
			if byRank[r] == nil {
				old = append(old, strconv.Itoa(r))
			}
		}
		if len(old) > 0 {
			return nil, fmt.Errorf("%s: rank(s) %s have no node tables (written by an npuprof before %s); export them again, or analyze this folder alone", dir, strings.Join(old, ", "), Schema)
		}
	}
	slices.Sort(order)
	out := make([]NodeState, 0, len(order))
	for _, r := range order {
		out = append(out, *byRank[r])
	}
	return out, nil
}

// readGroups reads a groups file: the group of each id (Rank -1: each
// member sets its own).
func readGroups(p, root string) ([]model.Group, error) {
	var out []model.Group
	err := readFile(root, p, func(g *GroupRow) {
		members := make([]int, len(g.GlobalRanks))
		for i, m := range g.GlobalRanks {
			members[i] = int(m)
		}
		for int(g.ID) >= len(out) {
			out = append(out, model.Group{Rank: -1})
		}
		out[g.ID] = model.Group{Comm: g.Comm, Name: g.Name, Rank: -1, GlobalRanks: members, Hash: g.Hash, HashSuffix: g.HashSuffix}
	})
	return out, err
}

// fillMembers sets the member ranks of groups read from a v2 ranks row
// (whose groups_json leaves them out) from the export's groups tables.
func fillMembers(dir string, groups []model.Group) error {
	if len(groups) == 0 {
		return nil
	}
	members, err := groupMembers(dir)
	if err != nil {
		return err
	}
	for i := range groups {
		g := &groups[i]
		m, ok := members[groupKey(model.Group{Comm: g.Comm, Name: g.Name, Hash: g.Hash, HashSuffix: g.HashSuffix})]
		if !ok {
			return fmt.Errorf("group %s (%s) is in none of the export's %s files", g.Name, g.Comm, TableGroups)
		}
		g.GlobalRanks = m
	}
	return nil
}

// memberCache holds the member ranks of each export's groups, read once.
var memberCache struct {
	sync.Mutex
	m map[string]map[string][]int
}

// groupMembers maps each group of the export at dir (groupKey without
// members) to its member ranks.
func groupMembers(dir string) (map[string][]int, error) {
	files, _ := filepath.Glob(filepath.Join(dir, TableGroups, "part-*.parquet"))
	slices.Sort(files)
	// the files as they are now (an export written again is read again)
	key := dir
	for _, f := range files {
		if st, err := os.Stat(f); err == nil {
			key += fmt.Sprintf("\x00%s\x00%d\x00%d", f, st.Size(), st.ModTime().UnixNano())
		}
	}
	memberCache.Lock()
	defer memberCache.Unlock()
	if m, ok := memberCache.m[key]; ok {
		return m, nil
	}
	out := map[string][]int{}
	for _, f := range files {
		gs, err := readGroups(f, dir)
		if err != nil {
			return nil, err
		}
		for _, g := range gs {
			k := groupKey(model.Group{Comm: g.Comm, Name: g.Name, Hash: g.Hash, HashSuffix: g.HashSuffix})
			if _, ok := out[k]; !ok {
				out[k] = g.GlobalRanks
			}
		}
	}
	if memberCache.m == nil {
		memberCache.m = map[string]map[string][]int{}
	}
	memberCache.m[key] = out
	return out, nil
}

// PruneNodes removes, from the export at outDir, the node files of runs
// other than run that hold nothing to read any more: runs that never
// finished (no manifest) and runs all of whose ranks run wrote again
// (ranks). Called by an export run that holds the folder's lock, after its
// own node files are written.
func PruneNodes(outDir, run string, ranks []int) error {
	ms, err := manifests(outDir)
	if err != nil {
		return err
	}
	mine := map[int]bool{}
	for _, r := range ranks {
		mine[r] = true
	}
	finished := map[string][]int{}
	for _, m := range ms {
		if m.Run != "" {
			finished[m.Run] = m.Ranks
		}
	}
	files, _ := filepath.Glob(filepath.Join(outDir, TableRankState, "part-*.parquet"))
	for _, f := range files {
		other := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(f), "part-"), ".parquet")
		if other == run {
			continue
		}
		theirs, ok := finished[other]
		superseded := !ok
		if ok {
			superseded = true
			for _, r := range theirs {
				if !mine[r] {
					superseded = false
					break
				}
			}
		}
		if !superseded {
			continue
		}
		for _, table := range NodeTables {
			if err := os.Remove(NodeFile(outDir, table, other)); err != nil && !os.IsNotExist(err) {
				return err
			}
		}
	}
	return nil
}
