package analysis

import (
	"testing"

	"github.com/npuprof/npuprof/internal/parser/model"
)

// TestBoxKind pins each task class's box, and a class past the table's end.
func TestBoxKind(t *testing.T) {
	want := map[model.TaskClass]BoxKind{
		model.ClassOther: BoxOther, model.ClassCompute: BoxCompute,
		model.ClassCommKernel: BoxCommKernel, model.ClassEventWait: BoxEventWait,
		model.ClassEventRecord: BoxEventRecord, model.ClassMemcpy: BoxMemcpy,
		model.ClassCommSubtask: BoxOther, model.ClassPlaceholder: BoxOther,
		model.ClassPlaceholder + 1: BoxOther,
	}
	for c, k := range want {
		if got := boxKind(c); got != k {
			t.Errorf("boxKind(%d) = %d, want %d", c, got, k)
		}
	}
}
