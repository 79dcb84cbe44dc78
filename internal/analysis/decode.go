package analysis

import (
	"sort"
	"strings"

	"github.com/npuprof/npuprof/internal/parser/model"
)

// SingleOpModelID is the Model ID of a kernel launched in single-op
// (eager) mode; any other id is a graph (ACL graph replay).
const SingleOpModelID = 4294967295

// DecodeResult describes the decode batch sizes the kernels saw and
// whether kernels ran from captured graphs.
type DecodeResult struct {
	// Batches counts attention kernels by the leading dimension of their
	// first input (the decode batch, padded when a graph was replayed).
	Batches map[int]int
	// Sizes are the distinct batch sizes, ascending.
	Sizes []int
	// Observed is the most frequent batch size (ties: the larger), 0 when
	// unknown.
	Observed int
	// AttentionKernels is the number of attention kernels with a shape.
	AttentionKernels int
	// GraphKernels / Kernels count compute kernels with a graph Model ID
	// and all compute kernels (timeline only).
	GraphKernels, Kernels int
	HaveGraph             bool
	// Sampler counts the sampler's kernels (isSampler).
	Sampler int
}

// isSampler matches the kernels of vLLM's sampler after the lm_head:
// ArgMax* (greedy), Sort* and TopK* (top-p/top-k). A data-parallel
// engine's dummy steps (execute_dummy_batch) run the model's layers but no
// sampler. It reads only the task's extras (r.Name(t), r.OpType(t)):
// nameOpMemo relies on it.
func isSampler(r *model.Rank, t *model.DeviceTask) bool {
	s := r.Str(r.OpType(t))
	if s == "" {
		s = r.Str(r.Name(t))
	}
	return strings.HasPrefix(s, "ArgMax") || strings.HasPrefix(s, "Sort") || s == "TopK" || s == "TopKV2"
}

// isDecodeAttention matches the decode attention kernels whose first input
// is [tokens, ...] (vllm-ascend.md §4, §5.2). It reads only the task's
// extras (r.Name(t), r.OpType(t)): nameOpMemo relies on it.
func isDecodeAttention(r *model.Rank, t *model.DeviceTask) bool {
	s := r.Str(r.OpType(t))
	if s == "" {
		s = r.Str(r.Name(t))
	}
	return strings.Contains(s, "FusedInferAttentionScore") || strings.Contains(s, "IncreFlashAttention") ||
		strings.Contains(s, "PagedAttention")
}

// Metrics of the decode pass.
const (
	MetricDecodeBatchObserved      = "decode.batch.observed"       // tokens: most frequent leading dimension of the decode attention kernels' first input (the decode batch; padded to the capture size in a graph replay)
	MetricDecodeBatchMin           = "decode.batch.min"            // tokens: smallest decode batch seen
	MetricDecodeBatchMax           = "decode.batch.max"            // tokens: largest decode batch seen
	MetricDecodeBatchDistinctCount = "decode.batch.distinct.count" // count: number of distinct decode batch sizes
	MetricGraphKernelsShare        = "graph.kernels.share"         // ratio: share of compute kernels replayed from a captured graph (Model ID not 4294967295)
	MetricSamplerKernelsCount      = "sampler.kernels.count"       // count: kernels of vLLM's sampler (ArgMax*, Sort*, TopK*): 0 on a data-parallel engine that only ran dummy steps
)

// DecodePass measures the decode batch from kernel input shapes and the
// share of kernels replayed from captured graphs.
var DecodePass = &Pass{
	Name: "decode",
	Doc: `decode batch sizes from kernel shapes, and graph-replayed kernels

decode.batch.observed is the most frequent leading dimension of the first
input of the decode attention kernels (FusedInferAttentionScore,
IncreFlashAttention, PagedAttention): the tokens of a decode step, padded
to the capture size when a graph was replayed. decode.batch.min/.max and
decode.batch.distinct.count describe the spread. graph.kernels.share is the
share of compute kernels whose Model ID is not 4294967295 (single-op mode),
i.e. that were replayed from a captured ACL graph; it needs the timeline.
sampler.kernels.count counts the sampler's kernels (ArgMax*, Sort*,
TopK*): a data-parallel engine that only ran dummy steps has none.`,
	Requires: []*Pass{TimelinePass},
	Metrics:  decodeMetrics,
	Run: func(ctx *Context) (any, error) {
		r := ctx.Rank
		tl := TimelineOf(ctx)
		batchNames := []string{MetricDecodeBatchObserved, MetricDecodeBatchMin, MetricDecodeBatchMax, MetricDecodeBatchDistinctCount}
		if !tl.HaveCompute {
			ctx.UnavailableAll(noDeviceData(ctx))
			return (*DecodeResult)(nil), nil
		}
		res := &DecodeResult{Batches: map[int]int{}}
		attention := 0
		isAttention := newNameOpMemo(r, isDecodeAttention)
		sampler := newNameOpMemo(r, isSampler)
		shapes := &shapeMemo{r: r}
		for _, i := range tl.ComputeTasks {
			t := &r.Tasks[i]
			res.Kernels++
			if r.ModelID(t) != SingleOpModelID {
				res.GraphKernels++
			}
			if sampler.get(t) {
				res.Sampler++
			}
			if !isAttention.get(t) {
				continue
			}
			attention++
			if n, ok := shapes.firstDim(r.InputShapes(t)); ok && n > 0 {
				res.Batches[int(n)]++
				res.AttentionKernels++
			}
		}
		for b, n := range res.Batches {
			res.Sizes = append(res.Sizes, b)
			if n > res.Batches[res.Observed] || (n == res.Batches[res.Observed] && b > res.Observed) {
				res.Observed = b
			}
		}
		sort.Ints(res.Sizes)
		switch {
		case attention == 0:
			ctx.Unavailable("no decode attention kernel (FusedInferAttentionScore, IncreFlashAttention, PagedAttention) in "+tl.ComputeSource, batchNames...)
		case len(res.Sizes) == 0 && r.Have.KernelNote != "":
			ctx.Unavailable("attention kernels have no input shapes: "+kernelDetailsUnusable(r), batchNames...)
		case len(res.Sizes) == 0:
			ctx.Unavailable("attention kernels have no input shapes (kernel_details.csv Input Shapes; capture with record_shapes=True)", batchNames...)
		default:
			ctx.SetCount(MetricDecodeBatchObserved, res.Observed)
			ctx.SetCount(MetricDecodeBatchMin, res.Sizes[0])
			ctx.SetCount(MetricDecodeBatchMax, res.Sizes[len(res.Sizes)-1])
			ctx.SetCount(MetricDecodeBatchDistinctCount, len(res.Sizes))
		}
		ctx.SetCount(MetricSamplerKernelsCount, res.Sampler)
		switch {
		case r.Format == model.FormatTorchNPUChrome:
			// (a real one: Ascend/msinsight's torchnpu/*.pt.trace.json
			// kernels carry only streamId and type)
			ctx.Unavailable(r.Path+" is a Kineto trace (torch.profiler): its kernels carry no Model ID, so graph replay cannot be told from single-op launches", MetricGraphKernelsShare)
		case r.Have.Timeline && res.Kernels > 0:
			res.HaveGraph = true
			ctx.Set(MetricGraphKernelsShare, float64(res.GraphKernels)/float64(res.Kernels))
		default:
			ctx.Unavailable("the Model ID of each kernel is read from the device timeline (trace_view.json), which "+r.Path+" lacks", MetricGraphKernelsShare)
		}
		return res, nil
	},
}

// DecodeOf is the decode pass's result on a rank.
var DecodeOf = RankResultOf[*DecodeResult](DecodePass)

// kernelDetailsUnusable says that the file input shapes come from was
// not read (absent, empty, an unknown header), so that a metric
// needing shapes does not send the user to capture with record_shapes=True
// when the capture may have them.
func kernelDetailsUnusable(r *model.Rank) string {
	return "they are recorded in kernel_details.csv, which was not read: " + r.Have.KernelNote
}
