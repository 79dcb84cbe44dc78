package summary

// kept: its standard-library imports resemble internal/render/text.go's; an import block cannot be shared
import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/npuprof/npuprof/internal/parser/model"
	"github.com/npuprof/npuprof/internal/redact"
)

var stepCols = map[string][]string{
	"step":      {"Step"},
	"computing": {"Computing"},
	"notover":   {"Communication(Not Overlapped)"},
	"overlap":   {"Overlapped"},
	"comm":      {"Communication"},
	"free":      {"Free"},
	"stage":     {"Stage"},
	"bubble":    {"Bubble"},
	"preparing": {"Preparing"},
	"device":    {"Device_id"},
}

// ReadStepTraceTime reads step_trace_time.csv (old, mid and new headers;
// the new one has a leading Device_id column, kept in StepTraceRow.Device).
func ReadStepTraceTime(r io.Reader, file string) ([]model.StepTraceRow, RowIssues, error) {
	var issues RowIssues
	cr, ll := newCSV(r)
	header, err := cr.Read()
	if err != nil {
		if err == io.EOF {
			return nil, issues, fmt.Errorf("%s: empty file, expected a step_trace_time.csv header", file)
		}
		return nil, issues, fmt.Errorf("%s: expected a step_trace_time.csv header: %w", file, err)
	}
	idx, loose := headerIndex(header, stepCols)
	if err := NeedColumns(file, header, idx, stepCols, true, "computing", "notover", "comm", "free"); err != nil {
		return nil, issues, err
	}
	issues.Header = loose
	var rows []model.StepTraceRow
	err = EachRow(cr, file, &issues, func(rec []string, line int) {
		if !CellCountOK(rec, len(header)) {
			issues.Skip(line, "wrong number of cells")
			return
		}
		for _, c := range rec {
			if strings.IndexByte(c, '\n') >= 0 {
				// every cell is a step or a time: one over several
				// lines opened with a stray quote, and holds the rows
				// up to the next quote (or the end of the file)
				issues.Skip(line, "a quote opens a cell that runs over the next lines")
				return
			}
		}
		f := func(k string) (float64, bool) {
			s := cell(rec, idx, k)
			if s == "" {
				return 0, false
			}
			v, err := strconv.ParseFloat(strings.Trim(s, "\t \""), 64)
			return v, err == nil && !math.IsNaN(v) && !math.IsInf(v, 0)
		}
		var row model.StepTraceRow
		var ok [4]bool
		row.Step = cell(rec, idx, "step")
		row.Device = strings.TrimSpace(cell(rec, idx, "device"))
		row.Computing, ok[0] = f("computing")
		row.CommunicationNotOverlapped, ok[1] = f("notover")
		row.Communication, ok[2] = f("comm")
		row.Free, ok[3] = f("free")
		if !ok[0] || !ok[1] || !ok[2] || !ok[3] {
			issues.Skip(line, "non-numeric time")
			return
		}
		var haveOverlap bool
		row.Overlapped, haveOverlap = f("overlap")
		row.NoOverlapped = !haveOverlap
		row.Stage, _ = f("stage")
		row.Bubble, _ = f("bubble")
		row.Preparing, row.HasPreparing = f("preparing")
		rows = append(rows, row)
	})
	if err != nil {
		return rows, issues, err
	}
	// a file cut inside its last line: that row may be cut too
	issues.CutLine = ll.cutLine()
	return rows, issues, nil
}

// ProfilerInfo is what npuprof reads from profiler_info_{rank}.json.
type ProfilerInfo struct {
	Rank            int // -1 when absent
	ProfilerLevel   string
	ExportType      []string
	TorchNPUVersion string
	CANNVersion     string
	HasSchedule     bool
	// WorldSize is a world_size key some writers add, 0 when absent.
	WorldSize int
}

// ReadProfilerInfo reads profiler_info_*.json.
func ReadProfilerInfo(r io.Reader, file string) (ProfilerInfo, error) {
	info := ProfilerInfo{Rank: -1}
	var raw struct {
		Config struct {
			Common struct {
				Schedule json.RawMessage `json:"schedule"`
			} `json:"common_config"`
			Experimental map[string]json.RawMessage `json:"experimental_config"`
		} `json:"config"`
		RankID          *json.Number `json:"rank_id"`
		WorldSize       *json.Number `json:"world_size"`
		TorchNPUVersion string       `json:"torch_npu_version"`
		CANNVersion     string       `json:"cann_version"`
	}
	dec := json.NewDecoder(limit(r, 16<<20))
	dec.UseNumber()
	if err := dec.Decode(&raw); err != nil {
		return info, fmt.Errorf("%s: expected a profiler_info JSON object: %w", file, err)
	}
	if err := onlyOneValue(dec); err != nil {
		return info, fmt.Errorf("%s: expected a profiler_info JSON object: %w", file, err)
	}
	if raw.RankID != nil {
		if v, err := raw.RankID.Int64(); err == nil && v >= 0 && v < 1<<20 {
			info.Rank = int(v)
		}
	}
	if raw.WorldSize != nil {
		if v, err := raw.WorldSize.Int64(); err == nil && v > 0 && v < 1<<20 {
			info.WorldSize = int(v)
		}
	}
	info.TorchNPUVersion, info.CANNVersion = raw.TorchNPUVersion, raw.CANNVersion
	s := strings.TrimSpace(string(raw.Config.Common.Schedule))
	info.HasSchedule = s != "" && s != "null"
	for _, k := range []string{"_profiler_level", "profiler_level"} {
		if v, ok := raw.Config.Experimental[k]; ok {
			var lvl string
			if json.Unmarshal(v, &lvl) == nil {
				info.ProfilerLevel = lvl
			}
		}
	}
	for _, k := range []string{"_export_type", "export_type"} {
		if v, ok := raw.Config.Experimental[k]; ok {
			var one string
			var many []string
			if json.Unmarshal(v, &one) == nil {
				info.ExportType = []string{one}
			} else if json.Unmarshal(v, &many) == nil {
				info.ExportType = many
			}
		}
	}
	return info, nil
}

// Metadata is profiler_metadata.json.
type Metadata struct {
	Env    map[string]string
	Groups []model.Group
	// Other keys as raw JSON text.
	Other map[string]string
}

// ReadProfilerMetadata reads profiler_metadata.json (ENV_VARIABLES,
// parallel_group_info and user keys). A file whose bytes an earlier call
// read is not decoded again (the ranks of a cluster mostly repeat one):
// the caller gets its own copy of what was decoded.
func ReadProfilerMetadata(r io.Reader, file string) (Metadata, error) {
	data, err := io.ReadAll(limit(r, 64<<20))
	if err != nil {
		// decoded as read, up to the error (a complete object first is
		// still read, as a stream decoder would)
		return decodeMetadata(io.MultiReader(bytes.NewReader(data), errReader{err}), file)
	}
	if md, ok := metaCache.get(data); ok {
		return md, nil
	}
	md, err := decodeMetadata(bytes.NewReader(data), file)
	if err == nil {
		metaCache.put(data, md)
	}
	return md, err
}

// errReader returns its error.
type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

// metaCache holds the decoded profiler_metadata.json of each distinct
// content read (bounded at maxMetaCache bytes of files).
var metaCache metaFiles

const maxMetaCache = 4 << 20

type metaFiles struct {
	sync.Mutex
	m     map[string]Metadata
	env   map[string]map[string]string // ENV_VARIABLES by its JSON text: ranks that differ in their group_rank share it
	bytes int
}

// getEnv returns a copy of the environment decoded from the JSON text v.
func (c *metaFiles) getEnv(v []byte) (map[string]string, bool) {
	c.Lock()
	env, ok := c.env[string(v)]
	c.Unlock()
	return maps.Clone(env), ok
}

// putEnv keeps a copy of env, decoded from v.
func (c *metaFiles) putEnv(v []byte, env map[string]string) {
	c.Lock()
	defer c.Unlock()
	if c.bytes+len(v) > maxMetaCache {
		return
	}
	if c.env == nil {
		c.env = map[string]map[string]string{}
	}
	if _, ok := c.env[string(v)]; !ok {
		c.env[string(v)] = maps.Clone(env)
		c.bytes += len(v)
	}
}

// get returns a copy of the metadata decoded from data.
func (c *metaFiles) get(data []byte) (Metadata, bool) {
	c.Lock()
	md, ok := c.m[string(data)]
	c.Unlock()
	if !ok {
		return md, false
	}
	return md.clone(), true
}

// put keeps a copy of md, decoded from data.
func (c *metaFiles) put(data []byte, md Metadata) {
	c.Lock()
	defer c.Unlock()
	if c.bytes+len(data) > maxMetaCache {
		return
	}
	if c.m == nil {
		c.m = map[string]Metadata{}
	}
	if _, ok := c.m[string(data)]; !ok {
		c.m[string(data)] = md.clone()
		c.bytes += len(data)
	}
}

// clone returns a copy of md that shares nothing a caller may edit (the
// long rank lists are shared already: sharedRanks).
func (md Metadata) clone() Metadata {
	c := Metadata{Env: maps.Clone(md.Env), Other: maps.Clone(md.Other), Groups: slices.Clone(md.Groups)}
	for i := range c.Groups {
		if g := &c.Groups[i]; len(g.GlobalRanks) < 16 {
			g.GlobalRanks = slices.Clone(g.GlobalRanks)
		}
	}
	return c
}

// decodeMetadata decodes profiler_metadata.json.
func decodeMetadata(r io.Reader, file string) (Metadata, error) {
	md := Metadata{Env: map[string]string{}, Other: map[string]string{}}
	var raw map[string]json.RawMessage
	dec := json.NewDecoder(r)
	if err := dec.Decode(&raw); err != nil {
		return md, fmt.Errorf("%s: expected a JSON object: %w", file, err)
	}
	if err := onlyOneValue(dec); err != nil {
		// a damaged brace closed the object early: what follows (the
		// groups, often) would be dropped without a word
		return md, fmt.Errorf("%s: expected a JSON object: %w", file, err)
	}
	keys := slices.Sorted(maps.Keys(raw))
	for _, k := range keys {
		v := raw[k]
		switch k {
		case "ENV_VARIABLES":
			if env, ok := metaCache.getEnv(v); ok {
				md.Env = env
				continue
			}
			var env map[string]any
			if err := json.Unmarshal(v, &env); err != nil {
				return md, fmt.Errorf("%s: ENV_VARIABLES: %w", file, err)
			}
			for ek, ev := range env {
				s, ok := ev.(string)
				if !ok {
					s = fmt.Sprint(ev)
				}
				// a credential never reaches an output: *** from here on
				md.Env[ek] = redact.Env(ek, s)
			}
			metaCache.putEnv(v, md.Env)
		case "parallel_group_info":
			groups, err := parseGroups(v)
			if err != nil {
				return md, fmt.Errorf("%s: parallel_group_info: %w", file, err)
			}
			md.Groups = groups
		default:
			md.Other[k] = redact.URLs(string(v))
		}
	}
	return md, nil
}

func parseGroups(v json.RawMessage) ([]model.Group, error) {
	if !utf8.Valid(v) {
		// JSON text is UTF-8, and the decoder would turn a damaged byte
		// of a group_name into U+FFFD, a group of its own
		return nil, errors.New("holds bytes that are not UTF-8, as JSON text is (damaged bytes?)")
	}
	var pg map[string]struct {
		GroupName   string `json:"group_name"`
		GroupRank   *int   `json:"group_rank"`
		GlobalRanks []int  `json:"global_ranks"`
	}
	if err := json.Unmarshal(v, &pg); err != nil {
		// some writers store the JSON as a string
		var s string
		if json.Unmarshal(v, &s) == nil {
			return parseGroups(json.RawMessage(s))
		}
		return nil, err
	}
	comms := slices.Sorted(maps.Keys(pg))
	out := make([]model.Group, 0, len(comms))
	for _, c := range comms {
		g := pg[c]
		// a communicator without its name is a damaged file: its
		// collectives would be measured under no group
		if g.GroupName == "" {
			return nil, fmt.Errorf("communicator %q has no group_name", clip(c, 80))
		}
		rank := -1
		if g.GroupRank != nil {
			rank = *g.GroupRank
		}
		out = append(out, model.NewGroup(c, g.GroupName, rank, sharedRanks(g.GlobalRanks)))
	}
	return out, nil
}

// rankLists holds one copy of each long global_ranks list: every rank of a
// group lists the same ranks, so a cluster kept N copies of a list of N
// ranks for its world group (N² ints, 25 KiB a rank at 2048 ranks, the
// part of a finished rank's memory that grew with the rank count). Bounded:
// past maxSharedRanks ints, lists are kept as read.
var rankLists struct {
	sync.Mutex
	m    map[string][]int
	ints int
}

const maxSharedRanks = 1 << 20

// sharedRanks returns the one kept copy of rs (rs itself when short).
func sharedRanks(rs []int) []int {
	if len(rs) < 16 {
		return rs
	}
	key := make([]byte, 0, 5*len(rs))
	for _, r := range rs {
		key = strconv.AppendInt(key, int64(r), 10)
		key = append(key, ',')
	}
	rankLists.Lock()
	defer rankLists.Unlock()
	if kept, ok := rankLists.m[string(key)]; ok {
		return kept
	}
	if rankLists.ints+len(rs) > maxSharedRanks {
		return rs
	}
	if rankLists.m == nil {
		rankLists.m = map[string][]int{}
	}
	rankLists.m[string(key)] = rs
	rankLists.ints += len(rs)
	return rs
}

// MaxCommunicationBytes bounds communication.json: a bigger file is
// refused with a message. The reader streams (memory grows with the number
// of ops kept, not with the file), so this only caps the time spent.
var MaxCommunicationBytes int64 = 256 << 20

// MaxMsprofCommunicationBytes bounds msprof's analyze/communication.json
// (one PROF_* folder's, streamed the same way).
var MaxMsprofCommunicationBytes int64 = 1 << 30

// onlyOneValue fails when anything but white space follows the JSON value
// dec has read.
func onlyOneValue(dec *json.Decoder) error {
	if _, err := dec.Token(); err != io.EOF {
		return fmt.Errorf("more data after the object ends at byte %d (a damaged brace?)", dec.InputOffset())
	}
	return nil
}
