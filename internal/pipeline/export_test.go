package pipeline

import "github.com/npuprof/npuprof/internal/parser/model"

// SetModelHook lets external tests (package pipeline_test) see each model
// Analyze receives; the returned func restores the previous hook.
func SetModelHook(f func(*model.Rank)) (restore func()) {
	old := modelHook
	modelHook = f
	return func() { modelHook = old }
}

// For htmlmem_test.go.
var (
	SlowCluster = slowCluster
	MeasureHeap = measureHeap
)
