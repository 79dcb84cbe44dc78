package pipeline

import "github.com/npuprof/npuprof/internal/parser/model"

// SetModelHook lets external tests (package pipeline_test) see each model
// Analyze receives; the returned func restores the previous hook.
func SetModelHook(f func(*model.Rank)) (restore func()) {
	old := modelHook
	modelHook = f
	return func() { modelHook = old }
}

// SetKeepFramework lets external tests have Analyze reduce the framework
// ops and links only once each rank is read; the returned func restores.
func SetKeepFramework(keep bool) (restore func()) {
	old := keepFramework
	keepFramework = keep
	return func() { keepFramework = old }
}

// For htmlmem_test.go.
var (
	SlowCluster = slowCluster
	MeasureHeap = measureHeap
)
