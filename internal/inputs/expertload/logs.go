package expertload

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/npuprof/npuprof/internal/lazyre"
	"github.com/npuprof/npuprof/internal/parser/model"
)

// num matches a number printed by Python's %.Nf / {:.Nf} / %d, including
// the non-finite spellings (dropped later).
const num = `([-+]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)?|nan|inf|-inf)`

// logPattern is one log line format, quoted from the producer's source.
type logPattern struct {
	kind   string
	marker string // cheap substring test before the regexp
	// re is the regexp, compiled on first use: a run without a log to
	// read does not pay for it (1 M instructions)
	re   func() *regexp.Regexp
	keys []string // value names of the numeric groups, in order ("layer" is Layer)
}

var logPatterns = []logPattern{
	{
		// vLLM-Ascend v0.13.0 vllm_ascend/eplb/eplb_updator.py:197
		// (v0.14.0rc1 and v0.15.0rc1: line 176), rank 0, INFO:
		//   f"[ModelRunner][MOE_load_stats] Peak-to-Average-Ratio: "
		//   f"Mean={avg_imbalance:.4f}, Max={max_imbalance:.4f}, Min={min_imbalance:.4f}"
		// where each layer's ratio is max over ranks / mean over ranks of the
		// per-rank token load (compute_moe_imbalance, same file).
		kind:   model.LogMoELoadStats,
		marker: "[MOE_load_stats] Peak-to-Average-Ratio:",
		re:     lazyre.New(`\[ModelRunner\]\[MOE_load_stats\] Peak-to-Average-Ratio: Mean=` + num + `, Max=` + num + `, Min=` + num),
		keys:   []string{"mean", "max", "min"},
	},
	{
		// vLLM-Ascend v0.13.0 vllm_ascend/eplb/eplb_updator.py:180-181
		// (v0.14.0rc1/v0.15.0rc1: line 161), DEBUG, one per MoE layer:
		//   f"[ModelRunner][MOE_load_stats][Layer {layer_idx}] PAR={moe_load_imbalance:.4f}"
		kind:   model.LogMoELoadStatsLayer,
		marker: "[MOE_load_stats][Layer ",
		re:     lazyre.New(`\[ModelRunner\]\[MOE_load_stats\]\[Layer ([0-9]+)\] PAR=` + num),
		keys:   []string{"layer", "par"},
	},
	{
		// vLLM-Ascend v0.16.0rc1 vllm_ascend/eplb/core/eplb_worker.py:69
		// ("...{:.3f}".format), v0.18.0 line 73, v0.20.2rc1 line 73 ("%.3f"):
		//   "[Expert Hotness] Current: mean=%.3f, max=%.3f, Updated: mean=%.3f, max=%.3f"
		// (peak-to-average ratio of per-rank load per layer, mean and max
		// over layers, for the current and the newly computed placement).
		kind:   model.LogExpertHotness,
		marker: "[Expert Hotness] Current:",
		re:     lazyre.New(`\[Expert Hotness\] Current: mean=` + num + `, max=` + num + `, Updated: mean=` + num + `, max=` + num),
		keys:   []string{"mean", "max", "updated_mean", "updated_max"},
	},
	{
		// vLLM-Ascend v0.21.0rc1 and v0.22.1rc1
		// vllm_ascend/eplb/core/eplb_worker.py:88, HEAD 182b75ea84 line 95:
		//   "[eplb/worker] Expert hotness imbalance, current: mean=%.3f max=%.3f, updated: mean=%.3f max=%.3f"
		// (same quantities, computed by EplbWorker._compute_imbalance).
		kind:   model.LogHotnessImbalance,
		marker: "Expert hotness imbalance, current:",
		re:     lazyre.New(`Expert hotness imbalance, current: mean=` + num + ` max=` + num + `, updated: mean=` + num + ` max=` + num),
		keys:   []string{"mean", "max", "updated_mean", "updated_max"},
	},
	{
		// Upstream vLLM vllm/distributed/eplb/eplb_state.py, EplbState.step(),
		// rank 0 of the EP group, INFO. Older form (vllm-project/vllm
		// 0014ec6c):
		//   "EPLB step: avg_tokens=%.2f, max_tokens=%d, balancedness=%.4f"
		// newer form (50feac95):
		//   "EPLB step: %d for model %s: avg_tokens=%.2f, max_tokens=%d, balancedness=%.4f, steps until the next rearrangement: %d"
		// avg_tokens / max_tokens are the mean / max over ranks of per-rank
		// load, each summed over layers; balancedness = avg_tokens/max_tokens.
		kind:   model.LogEPLBStep,
		marker: "EPLB step:",
		re:     lazyre.New(`EPLB step: (?:[0-9]+ for model (.*?): )?avg_tokens=` + num + `, max_tokens=` + num + `, balancedness=` + num),
		keys:   []string{"model", "avg_tokens", "max_tokens", "balancedness"},
	},
}

// LogStats is what ReadLog found.
type LogStats struct {
	Lines int // lines read
	// NonFinite counts matched lines dropped because a value was nan/inf.
	NonFinite int
}

// ReadLog scans a vLLM-Ascend or vLLM log for the expert-imbalance lines
// above and calls fn for each (in file order). Lines longer than 1 MiB are
// skipped. A log with no such line is not an error; the caller decides.
func ReadLog(r io.Reader, name string, fn func(model.ExpertLog)) (LogStats, error) {
	var st LogStats
	br := bufio.NewReaderSize(r, 256<<10)
	for lineNo := 1; ; lineNo++ {
		line, err := readLine(br)
		if err == errLongLine {
			st.Lines++
			continue
		}
		if err != nil && err != io.EOF {
			return st, fmt.Errorf("%s:%d: %w", name, lineNo, err)
		}
		if err == io.EOF && line == "" {
			break
		}
		st.Lines++
		if e, ok, bad := matchLog(line); ok {
			e.File, e.Line = name, lineNo
			fn(e)
		} else if bad {
			st.NonFinite++
		}
		if err == io.EOF {
			break
		}
	}
	return st, nil
}

// matchLog parses one line; bad reports a matched line with a nan/inf value.
func matchLog(line string) (e model.ExpertLog, ok, bad bool) {
	for i := range logPatterns {
		p := &logPatterns[i]
		if !strings.Contains(line, p.marker) {
			continue
		}
		m := p.re().FindStringSubmatch(line)
		if m == nil {
			continue
		}
		e = model.ExpertLog{Kind: p.kind, Layer: -1, Values: map[string]float64{}}
		for j, k := range p.keys {
			s := m[j+1]
			switch k {
			case "model":
				e.Model = s
				continue
			case "layer":
				l, err := strconv.Atoi(s)
				if err != nil || l >= maxSlots {
					return e, false, false
				}
				e.Layer = l
				continue
			}
			v, err := strconv.ParseFloat(s, 64)
			if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
				return e, false, true
			}
			e.Values[k] = v
		}
		return e, true, false
	}
	return e, false, false
}
