package analysis

import (
	"math"

	"github.com/npuprof/npuprof/internal/parser/model"
)

// nameOpMemo caches a classification of device tasks that depends only on
// a task's name and op type (moeRole, isDecodeAttention). A rank has
// hundreds of thousands of tasks but a few thousand distinct sets of what
// they share (model.Extras, name and op type among them), and string
// matching per task was most of what the MoE and decode passes cost. One
// slot per set holds f's answer for it.
type nameOpMemo[T any] struct {
	r     *model.Rank
	f     func(*model.Rank, *model.DeviceTask) T
	slots []nameOpSlot[T]
}

type nameOpSlot[T any] struct {
	set bool
	v   T
}

func newNameOpMemo[T any](r *model.Rank, f func(*model.Rank, *model.DeviceTask) T) *nameOpMemo[T] {
	return &nameOpMemo[T]{r: r, f: f}
}

func (m *nameOpMemo[T]) get(t *model.DeviceTask) T {
	i := t.Extra.Index()
	if i >= len(m.slots) {
		m.slots = append(m.slots, make([]nameOpSlot[T], max(i+1, m.r.Extras.Len())-len(m.slots))...)
	}
	s := &m.slots[i]
	if s.set {
		return s.v
	}
	v := m.f(m.r, t)
	*s = nameOpSlot[T]{set: true, v: v}
	return v
}

// shapeMemo caches firstDim of an `Input Shapes` symbol.
type shapeMemo struct {
	r     *model.Rank
	slots []shapeSlot
}

type shapeSlot struct {
	n       int64
	ok, set bool
}

func (m *shapeMemo) firstDim(s model.Sym) (int64, bool) {
	if int(s) >= len(m.slots) {
		m.slots = append(m.slots, make([]shapeSlot, int(s)+1-len(m.slots))...)
	}
	sl := &m.slots[s]
	if !sl.set {
		n, ok := model.FirstDim(m.r.Str(s))
		*sl = shapeSlot{n: n, ok: ok, set: true}
	}
	return sl.n, sl.ok
}

// empiricalQuantile returns stat.Quantile(p, stat.Empirical, sorted(x),
// nil) without sorting x: the element of rank ceil(p·n)−1 (gonum's
// Empirical rule: the first element whose cumulative count reaches p·n),
// found by selection in O(n). It reorders x. x must not be empty or hold
// NaN.
func empiricalQuantile(p float64, x []float64) float64 {
	// the first k with k+1 >= p·n, as gonum's loop finds it
	k := int(math.Ceil(p*float64(len(x)))) - 1
	k = min(max(k, 0), len(x)-1)
	return selectKth(x, k)
}

// selectKth returns the k-th smallest element of x (0-based), reordering
// x (quickselect, median-of-three pivots).
func selectKth(x []float64, k int) float64 {
	lo, hi := 0, len(x)-1
	for lo < hi {
		mid := lo + (hi-lo)/2
		// order x[lo], x[mid], x[hi]; the median goes to mid
		if x[mid] < x[lo] {
			x[mid], x[lo] = x[lo], x[mid]
		}
		if x[hi] < x[lo] {
			x[hi], x[lo] = x[lo], x[hi]
		}
		if x[hi] < x[mid] {
			x[hi], x[mid] = x[mid], x[hi]
		}
		pivot := x[mid]
		i, j := lo, hi
		for i <= j {
			for x[i] < pivot {
				i++
			}
			for x[j] > pivot {
				j--
			}
			if i <= j {
				x[i], x[j] = x[j], x[i]
				i++
				j--
			}
		}
		// x[lo..j] <= pivot <= x[i..hi], and x[j+1..i-1] == pivot
		switch {
		case k <= j:
			hi = j
		case k >= i:
			lo = i
		default:
			return x[k]
		}
	}
	return x[k]
}
