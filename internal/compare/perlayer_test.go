package compare

import (
	"testing"

	"github.com/npuprof/npuprof/internal/analysis"
	"github.com/npuprof/npuprof/internal/parser/model"
)

// perLayer, which reads the metric names of internal/results/metric, agrees with the
// analysis's own table on every declared metric and on every member of the
// HCCL families.
func TestPerLayerAgreesWithTheMetricTable(t *testing.T) {
	names := []string{"hccl.per_layer.time_us", "hccl.per_layer.bogus.x.time_us"}
	for _, m := range analysis.MetricTable() {
		names = append(names, m.Name)
		if m.IsFamily() {
			for _, typ := range model.HCCLTypes() {
				names = append(names, analysis.Family(m.Name).Of(typ))
			}
		}
	}
	for _, name := range names {
		d, _ := analysis.LookupMetric(name)
		want := d.Name == analysis.MetricHCCLPerLayerUs || d.Name == string(analysis.FamilyHCCLPerLayerTypeUs)
		if got := perLayer(name); got != want {
			t.Errorf("perLayer(%q) = %v, the metric table says %v", name, got, want)
		}
	}
}
