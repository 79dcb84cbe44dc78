package analysis

import (
	"bytes"
	"encoding/gob"
	"fmt"
	"reflect"

	"github.com/npuprof/npuprof/internal/parser/model"
)

// A rank's state is what the cluster passes, the rules, the plan and the
// document read of a finished rank (RankResult after ReleaseModel): its
// record and each rank pass's result, encoded apart so that a reader can
// leave a result it does not need unread (the timelinesample pass's, drawn
// only by the HTML report). `npuprof export` writes it per rank
// (internal/parser/parquetio's rank_state table) and `npuprof analyze` of several
// exports merges the ranks from it without reading their device tasks.
//
// The parallel groups are not in it: every rank lists the communicators it
// is in with their member ranks, which grows with the cluster; the export
// writes them once per node (parquetio's groups table), and DecodeState
// is given each rank's.

// rankRecord is a RankResult's exported fields but its groups and pass
// results (a gob of it is StateRecord).
// kept: RankResult's fields again: gob reads saved exports by this flat shape, and an embedded struct would nest it
type rankRecord struct {
	// StateVersion is the encoding's StateVersion (0: written before
	// records carried one, version 1).
	StateVersion   int
	Rank           int
	Device         int
	Path           string
	Origin         model.Origin
	Format         model.Format
	ProfilerLevel  string
	TorchNPU       string
	CANN           string
	Metrics        map[string]float64
	Unavailable    map[string]string
	Env            map[string]string
	MetaVersions   map[string]string
	Errors         []PassError
	Timings        []PassTiming
	Warnings       []model.Warning
	Partial        bool
	PartialReason  string
	PartialMetrics []string
	Sources        map[string]string
}

// StateVersion is the version of the encoded pass results. It goes up
// whenever a rank pass's result type changes how it encodes (a field's
// type, or its meaning); TestStateTypesFingerprint fails until it does.
// A state of another version is refused with what to do: gob would read
// a changed field as an error at best, as a zero at worst.
const StateVersion = 3

// RankState is one rank's encoded state: its record and, by pass name, the
// result of each rank pass that ran (a gob each).
type RankState struct {
	Record []byte
	Passes []PassState
}

// PassState is one rank pass's encoded result.
type PassState struct {
	Pass string
	Data []byte
}

// EncodeState encodes rr (its model released) without its groups.
func EncodeState(rr *RankResult) (*RankState, error) {
	rec := rankRecord{StateVersion: StateVersion, Rank: rr.Rank, Device: rr.Device, Path: rr.Path, Origin: rr.Origin, Format: rr.Format, ProfilerLevel: rr.ProfilerLevel,
		TorchNPU: rr.TorchNPU, CANN: rr.CANN, Metrics: rr.Metrics, Unavailable: rr.Unavailable, Env: rr.Env, MetaVersions: rr.MetaVersions,
		Errors: rr.Errors, Timings: rr.Timings, Warnings: rr.Warnings, Partial: rr.Partial, PartialReason: rr.PartialReason,
		PartialMetrics: rr.PartialMetrics, Sources: rr.Sources.Map()}
	st := &RankState{}
	var err error
	if st.Record, err = encodeGob(&rec); err != nil {
		return nil, fmt.Errorf("rank %d's record: %w", rr.Rank, err)
	}
	for _, e := range rr.results {
		v := e.res
		if c, ok := v.(*CollectivesResult); ok && c != nil {
			// its groups are the rank's (r.Groups), written once
			cp := *c
			cp.Groups = nil
			v = &cp
		}
		if isNil(v) {
			// a pass that ran and had nothing to give: nil again on reading
			st.Passes = append(st.Passes, PassState{Pass: e.pass.Name})
			continue
		}
		b, err := encodeGob(v)
		if err != nil {
			return nil, fmt.Errorf("rank %d's %s result: %w", rr.Rank, e.pass.Name, err)
		}
		st.Passes = append(st.Passes, PassState{Pass: e.pass.Name, Data: b})
	}
	return st, nil
}

// isNil: v is nil or a nil pointer, slice or map (gob cannot encode it).
func isNil(v any) bool {
	rv := reflect.ValueOf(v)
	if !rv.IsValid() {
		return true
	}
	switch rv.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Map, reflect.Interface:
		return rv.IsNil()
	}
	return false
}

func encodeGob(v any) ([]byte, error) {
	var b bytes.Buffer
	if err := gob.NewEncoder(&b).Encode(v); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// passByName is every rank pass by name.
var passByName = func() map[string]*Pass {
	m := make(map[string]*Pass, len(Passes))
	for _, p := range Passes {
		m[p.Name] = p
	}
	return m
}()

// DecodeState is the RankResult st encodes, with groups its parallel
// groups (shared, not copied). A pass result whose pass keep refuses is
// left undecoded (nil keep keeps all); a pass this npuprof does not know
// is an error (the export was written by another version).
func DecodeState(st *RankState, groups []model.Group, keep func(*Pass) bool) (*RankResult, error) {
	var rec rankRecord
	if err := gob.NewDecoder(bytes.NewReader(st.Record)).Decode(&rec); err != nil {
		return nil, fmt.Errorf("a rank's record: %w", err)
	}
	if v := max(rec.StateVersion, 1); v != StateVersion {
		return nil, fmt.Errorf("rank %d: its saved pass results are of state version %d, written by another npuprof; this one reads version %d: export the capture again with this npuprof", rec.Rank, v, StateVersion)
	}
	rr := &RankResult{Rank: rec.Rank, Device: rec.Device, Path: rec.Path, Origin: rec.Origin, Format: rec.Format, ProfilerLevel: rec.ProfilerLevel,
		TorchNPU: rec.TorchNPU, CANN: rec.CANN, Metrics: rec.Metrics, Unavailable: rec.Unavailable, Groups: groups, Env: rec.Env,
		MetaVersions: rec.MetaVersions, Errors: rec.Errors, Timings: rec.Timings, Warnings: rec.Warnings, Partial: rec.Partial,
		PartialReason: rec.PartialReason, PartialMetrics: rec.PartialMetrics, Sources: model.NewSources(rec.Sources)}
	if rr.Metrics == nil {
		rr.Metrics = map[string]float64{}
	}
	if rr.Unavailable == nil {
		rr.Unavailable = map[string]string{}
	}
	rr.results = make(resultList[*Pass], 0, len(st.Passes))
	for _, ps := range st.Passes {
		p := passByName[ps.Pass]
		if p == nil || p.ResultType == nil {
			return nil, fmt.Errorf("rank %d: a result of pass %q, which this npuprof does not have", rec.Rank, ps.Pass)
		}
		if keep != nil && !keep(p) {
			continue
		}
		v := reflect.New(p.ResultType)
		if len(ps.Data) == 0 {
			rr.results = append(rr.results, passResult[*Pass]{pass: p, res: v.Elem().Interface()})
			continue
		}
		if err := gob.NewDecoder(bytes.NewReader(ps.Data)).Decode(v.Interface()); err != nil {
			return nil, fmt.Errorf("rank %d's %s result: %w", rec.Rank, p.Name, err)
		}
		res := v.Elem().Interface()
		if c, ok := res.(*CollectivesResult); ok && c != nil {
			c.Groups = groups
		}
		rr.results = append(rr.results, passResult[*Pass]{pass: p, res: res})
	}
	return rr, nil
}
