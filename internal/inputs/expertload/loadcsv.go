package expertload

import (
	"bufio"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/npuprof/npuprof/internal/parser/model"
)

// LoadCSVHeader is the header line of npuprof's plain expert-load CSV.
const LoadCSVHeader = "layer,expert,tokens"

// ErrNotLoadCSV is returned by ReadLoadCSV when the first line is not a
// layer,expert,tokens header (the file is not this format).
var ErrNotLoadCSV = errors.New("not a layer,expert,tokens CSV")

// IsLoadCSVHeader reports whether line is a layer,expert,tokens header
// (any column order, any case, extra columns allowed).
func IsLoadCSVHeader(line string) bool {
	_, ok := loadCSVColumns(strings.Split(strings.TrimPrefix(strings.TrimSpace(line), "\ufeff"), ","))
	return ok
}

func loadCSVColumns(header []string) ([3]int, bool) {
	idx := [3]int{-1, -1, -1}
	for i, h := range header {
		switch strings.ToLower(strings.Trim(strings.TrimPrefix(h, "\ufeff"), " \t\"")) {
		case "layer":
			idx[0] = i
		case "expert":
			idx[1] = i
		case "tokens":
			idx[2] = i
		}
	}
	return idx, idx[0] >= 0 && idx[1] >= 0 && idx[2] >= 0
}

// ReadLoadCSV reads the plain expert-load CSV documented in docs/experts.md:
//
//	layer,expert,tokens
//	0,0,1520
//	0,1,980
//
// for users who dump vLLM-Ascend's per-layer moe_load counters (or any
// other per-expert counts) themselves. layer is the MoE layer index (0-based,
// the index vLLM-Ascend's expert map uses), expert the logical (global)
// expert id, tokens the routed token count. Columns may come in any order
// and extra columns are ignored; rows repeating a (layer, expert) pair are
// summed (e.g. one row per replica or per rank). A row with tokens 0 says
// the expert got none; an expert without a row in some layer (below the
// highest expert id) has an unknown load there and is unobserved: such a
// CSV is partial (analysis.PartialDump).
func ReadLoadCSV(r io.Reader, name string) (*model.ExpertLoads, error) {
	cr := csv.NewReader(bufio.NewReaderSize(r, 64<<10))
	cr.FieldsPerRecord = -1
	cr.ReuseRecord = true
	cr.TrimLeadingSpace = true
	header, err := cr.Read()
	if err != nil {
		if err == io.EOF {
			return nil, fmt.Errorf("%s: empty: %w", name, ErrNotLoadCSV)
		}
		return nil, fmt.Errorf("%s: %w: %v", name, ErrNotLoadCSV, err)
	}
	idx, ok := loadCSVColumns(header)
	if !ok {
		return nil, fmt.Errorf("%s: first line %q: %w (expected the header %s)", name, strings.Join(header, ","), ErrNotLoadCSV, LoadCSVHeader)
	}
	type key struct{ layer, expert int }
	sums := map[key]int64{}
	layers := map[int]bool{}
	maxExpert := -1
	var total int64
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			// FieldPos is only valid after a successful Read.
			return nil, fmt.Errorf("%s: %v", name, err)
		}
		line, _ := cr.FieldPos(0)
		if len(rec) == 1 && strings.TrimSpace(rec[0]) == "" {
			continue
		}
		var v [3]int64
		for i, c := range idx {
			if c >= len(rec) {
				return nil, fmt.Errorf("%s:%d: %d cells, expected layer,expert,tokens", name, line, len(rec))
			}
			n, err := parseCount(rec[c])
			if err != nil {
				return nil, fmt.Errorf("%s:%d: %s: %v", name, line, [3]string{"layer", "expert", "tokens"}[i], err)
			}
			v[i] = n
		}
		if v[0] >= maxSlots || v[1] >= maxSlots {
			return nil, fmt.Errorf("%s:%d: layer %d or expert %d out of range (max %d)", name, line, v[0], v[1], maxSlots-1)
		}
		k := key{int(v[0]), int(v[1])}
		if total += v[2]; v[2] > MaxTokens || total > MaxTokens {
			return nil, fmt.Errorf("%s:%d: %s", name, line, errTooManyTokens)
		}
		sums[k] += v[2]
		layers[k.layer] = true
		maxExpert = max(maxExpert, k.expert)
	}
	if len(sums) == 0 {
		return nil, fmt.Errorf("%s: no rows after the %s header", name, LoadCSVHeader)
	}
	if len(layers)*(maxExpert+1) > maxCells {
		return nil, fmt.Errorf("%s: %d layers x %d experts is more than npuprof holds (%d loads)", name, len(layers), maxExpert+1, maxCells)
	}
	x := &model.ExpertLoads{Format: model.ExpertFormatCSV, NumExperts: maxExpert + 1}
	ids := make([]int, 0, len(layers))
	for l := range layers {
		ids = append(ids, l)
	}
	sort.Ints(ids)
	pos := make(map[int]int, len(ids))
	for i, l := range ids {
		pos[l] = i
		x.Layers = append(x.Layers, model.ExpertLayer{ID: l, Tokens: make([]int64, x.NumExperts)})
	}
	rows := make([]int, x.NumExperts) // per expert, the layers with a row for it
	perLayer := make([]int, len(ids)) // per layer, the experts with a row in it
	for k, v := range sums {
		x.Layers[pos[k.layer]].Tokens[k.expert] = v
		rows[k.expert]++
		perLayer[pos[k.layer]]++
	}
	markUnknown(x, name, rows, perLayer)
	if ids[0] != 0 || ids[len(ids)-1] != len(ids)-1 {
		x.Notes = append(x.Notes, fmt.Sprintf("%s: layer ids run %d..%d with %d layers; an expert map numbers MoE layers 0..%d in this order", name, ids[0], ids[len(ids)-1], len(ids), len(ids)-1))
	}
	return x, nil
}

// markUnknown marks unobserved the experts of x that lack a row in some
// layer: rows[e] is the number of layers with a row for expert e,
// perLayer[i] the number of experts with a row in layer x.Layers[i]. An
// absent row is an unknown load, not 0 tokens, so the expert's load in
// that layer, and with it the layer's mean, is unknown.
func markUnknown(x *model.ExpertLoads, name string, rows, perLayer []int) {
	var never, some []int
	for e, n := range rows {
		switch {
		case n == 0:
			never = append(never, e)
		case n < len(x.Layers):
			some = append(some, e)
		}
	}
	if len(never) == 0 && len(some) == 0 {
		return
	}
	x.Observed = make([]bool, x.NumExperts)
	for e, n := range rows {
		x.Observed[e] = n == len(x.Layers)
	}
	if len(never) > 0 {
		x.Notes = append(x.Notes, fmt.Sprintf("%s: expert(s) %s appear in no row: their load is unknown", name, intList(never, 12)))
	}
	if len(some) > 0 {
		// the layers lacking a row for an expert other layers have
		gaps := 0
		for _, n := range perLayer {
			if n < x.NumExperts-len(never) {
				gaps++
			}
		}
		x.Notes = append(x.Notes, fmt.Sprintf("%s: expert(s) %s have rows in some layers only (%d of the %d layers lack a row for one of them): their load is unknown, not 0 tokens (a row with tokens 0 says an expert got none)",
			name, intList(some, 12), gaps, len(x.Layers)))
	}
}

// intList formats at most n ints ("3, 7, 9, …").
func intList(v []int, n int) string {
	var b strings.Builder
	for i, x := range v {
		if i == n {
			b.WriteString(", …")
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprint(&b, x)
	}
	return b.String()
}
