package expertload

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/npuprof/npuprof/internal/lazyre"
	"github.com/npuprof/npuprof/internal/parser/model"
)

// reDump matches a MindIE load-balancing dump, {prefill|decode}_{rank}.csv.
// The pattern is the one MindStudio Insight imports ("Dump" data):
// EXPERT_HOTSPOT_FILE_REG in Ascend/msinsight
// server/src/modules/communication/parser/ClusterDef.h, used by
// server/src/modules/summary/parser/ExpertHotspotParser.cpp (docs/formats.md#expert-loads).
var reDump = lazyre.New(`^(prefill|decode)_([0-9]{1,4})\.csv$`)

// reDeployment matches MindIE's {prefill|decode}_global_deployment.json.
var reDeployment = lazyre.New(`^(prefill|decode)_global_deployment\.json$`)

// DumpName returns the stage and rank of a dump file name, ok=false when
// name is not a dump.
func DumpName(name string) (stage string, rank int, ok bool) {
	m := reDump().FindStringSubmatch(name)
	if m == nil {
		return "", 0, false
	}
	r, err := strconv.Atoi(m[2])
	if err != nil {
		return "", 0, false
	}
	return m[1], r, true
}

// DeploymentStage returns the stage of a {stage}_global_deployment.json
// name, ok=false when name is not one.
func DeploymentStage(name string) (string, bool) {
	m := reDeployment().FindStringSubmatch(name)
	if m == nil {
		return "", false
	}
	return m[1], true
}

// maxLineBytes bounds one dump or CSV line (a rank never has anywhere near
// 64 K slots; a longer line is not a dump).
const maxLineBytes = 1 << 20

// maxCells bounds layers x experts of one input (94 layers x 512 experts
// is 48 K; the bound only stops a hostile file from exhausting memory).
const maxCells = 1 << 24

// maxSlots bounds the slots of one rank and the experts of one layer.
const maxSlots = 1 << 16

// MaxTokens bounds the tokens of one expert-load input in total (2^53:
// every sum of them is exact in an int64 and in a float64 metric). Real
// counts are far below it; a file above it is not token counts.
const MaxTokens = 1 << 53

var errTooManyTokens = fmt.Errorf("more than %d tokens in total (2^53): not per-expert token counts", int64(MaxTokens))

// ReadDump reads one {stage}_{rank}.csv dump: no header, one line per MoE
// layer, comma-separated token counts per local expert slot. A file may
// hold several dumps appended one after another; like MindStudio Insight
// (ExpertHotspotParser::Parse keeps a sliding window of config.moeLayer
// lines) ReadDump keeps the last keep lines (keep <= 0: every line). Empty
// lines are skipped. Every line must have the same number of cells.
func ReadDump(r io.Reader, name string, keep int) ([][]int64, int, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	var rows [][]int64
	dropped := 0
	width := -1
	var total int64 // over every line read, dropped ones too (a bound, not a sum used)
	for lineNo := 1; ; lineNo++ {
		line, err := readLine(br)
		if err != nil && err != io.EOF {
			return nil, 0, fmt.Errorf("%s:%d: %w", name, lineNo, err)
		}
		if s := strings.TrimSpace(line); s != "" {
			row, perr := parseCounts(s)
			if perr != nil {
				return nil, 0, fmt.Errorf("%s:%d: expected comma-separated token counts per expert slot: %w", name, lineNo, perr)
			}
			if width >= 0 && len(row) != width {
				return nil, 0, fmt.Errorf("%s:%d: %d slots, but the first line has %d", name, lineNo, len(row), width)
			}
			width = len(row)
			for _, v := range row {
				if total += v; v > MaxTokens || total > MaxTokens {
					return nil, 0, fmt.Errorf("%s:%d: %w", name, lineNo, errTooManyTokens)
				}
			}
			if keep <= 0 && (len(rows)+1)*width > maxCells {
				return nil, 0, fmt.Errorf("%s:%d: more than %d token counts", name, lineNo, maxCells)
			}
			rows = append(rows, row)
			if keep > 0 && len(rows) > keep {
				rows = rows[1:]
				dropped++
			}
		}
		if err == io.EOF {
			break
		}
	}
	if len(rows) == 0 {
		return nil, 0, fmt.Errorf("%s: empty: expected one line of token counts per MoE layer", name)
	}
	return rows, dropped, nil
}

// errLongLine is a line longer than maxLineBytes.
var errLongLine = errors.New("line too long")

// readLine returns the next line without its end of line (\n or \r\n).
// A line longer than maxLineBytes is consumed entirely and reported as
// errLongLine. At the end of input it returns io.EOF with the last
// (unterminated, possibly empty) line.
func readLine(br *bufio.Reader) (string, error) {
	var b []byte
	long := false
	for {
		frag, err := br.ReadSlice('\n')
		if !long && len(b)+len(frag) > maxLineBytes {
			long, b = true, nil
		}
		if !long {
			b = append(b, frag...)
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if long {
			if err != nil && err != io.EOF {
				return "", err
			}
			return "", errLongLine // at EOF the next call returns "", io.EOF
		}
		return strings.TrimRight(string(b), "\r\n"), err
	}
}

// parseCounts parses "12,0,345" into non-negative integers.
func parseCounts(s string) ([]int64, error) {
	n := strings.Count(s, ",") + 1
	if n > maxSlots {
		return nil, fmt.Errorf("%d cells (more than %d)", n, maxSlots)
	}
	out := make([]int64, 0, n)
	for cell := range strings.SplitSeq(s, ",") {
		v, err := parseCount(cell)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

// parseCount parses one token count: a non-negative integer (surrounding
// blanks and quotes allowed).
func parseCount(cell string) (int64, error) {
	c := strings.Trim(cell, " \t\"")
	v, err := strconv.ParseInt(c, 10, 64)
	if errors.Is(err, strconv.ErrRange) && !strings.HasPrefix(c, "-") {
		return 0, fmt.Errorf("%q is too large (more than %d)", c, int64(math.MaxInt64))
	}
	if err != nil {
		return 0, fmt.Errorf("%q is not a whole number", c)
	}
	if v < 0 {
		return 0, fmt.Errorf("negative count %d", v)
	}
	return v, nil
}

// ReadGenConfig reads MindIE's model_gen_config.json
// ({"num_moe_layers", "collection_Interval", "num_of_experts",
// "num_of_selected_experts", "num_dangling_shared_experts"}; sample
// S23/expert_hotspot/model_gen_config.json, struct ModelGenConfig in
// Ascend/msinsight ClusterDef.h).
func ReadGenConfig(r io.Reader, name string) (*model.MoEGenConfig, error) {
	var c model.MoEGenConfig
	dec := json.NewDecoder(io.LimitReader(r, 1<<20))
	if err := dec.Decode(&c); err != nil {
		return nil, fmt.Errorf("%s: expected MindIE model_gen_config.json (num_moe_layers, num_of_experts, ...): %w", name, err)
	}
	if c.NumMoELayers < 0 || c.NumExperts < 0 || c.NumSelectedExperts < 0 || c.NumMoELayers > maxSlots || c.NumExperts > maxSlots {
		return nil, fmt.Errorf("%s: out-of-range value (num_moe_layers %d, num_of_experts %d)", name, c.NumMoELayers, c.NumExperts)
	}
	return &c, nil
}
