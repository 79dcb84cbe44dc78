package metric

import "testing"

func TestFamilyHas(t *testing.T) {
	for name, want := range map[string]bool{
		"hccl.per_layer.allgather.time_us":     true,
		"hccl.per_layer.all_to_all_v.time_us":  true,
		"hccl.per_layer.time_us":               false, // the plain metric, not a member
		"hccl.per_layer..time_us":              false,
		"hccl.per_layer.a.b.time_us":           false, // the variable part is one name
		"hccl.per_layer.allgather.count":       false,
		"moe.hccl.per_layer.allgather.time_us": false,
	} {
		if got := FamilyHCCLPerLayerTypeUs.Has(name); got != want {
			t.Errorf("FamilyHCCLPerLayerTypeUs.Has(%q) = %v, want %v", name, got, want)
		}
	}
	if !FamilySkewMaxUs.Has(FamilySkewMaxUs.Of("window")) {
		t.Errorf("FamilySkewMaxUs.Has(Of(window)) = false")
	}
}
