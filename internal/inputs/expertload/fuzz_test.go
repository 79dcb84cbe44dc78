package expertload

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/npuprof/npuprof/internal/parser/model"
	"github.com/npuprof/npuprof/internal/testutil"
)

// seed adds the package's testdata files and, when the real samples are
// present, the named sample files (fuzz targets never skip for want of
// samples).
func seed(f *testing.F, local []string, samples []string, add func(f *testing.F, data []byte)) {
	for _, n := range local {
		if data, err := os.ReadFile(filepath.Join("testdata", n)); err == nil {
			add(f, data)
		}
	}
	dir := os.Getenv("NPUPROF_SAMPLES")
	if dir == "" {
		dir, _ = testutil.SharedFile("samples")
	}
	for _, rel := range samples {
		if data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(rel))); err == nil {
			add(f, data)
		}
	}
}

func FuzzReadDump(f *testing.F) {
	seed(f, []string{"appended_decode_0.csv"}, []string{hotspotRel + "/decode_0.csv", hotspotRel + "/prefill_0.csv"},
		func(f *testing.F, d []byte) { f.Add(d, 2); f.Add(d, 0) })
	f.Add([]byte("1,2\r\n3,4\r\n"), 1)
	f.Fuzz(func(t *testing.T, data []byte, keep int) {
		rows, dropped, err := ReadDump(bytes.NewReader(data), "fuzz.csv", keep%100)
		if err != nil {
			return
		}
		if len(rows) == 0 || dropped < 0 {
			t.Fatalf("no rows without an error")
		}
		if k := keep % 100; k > 0 && len(rows) > k {
			t.Fatalf("kept %d rows, keep %d", len(rows), k)
		}
		for _, r := range rows {
			if len(r) != len(rows[0]) {
				t.Fatalf("ragged rows")
			}
			for _, v := range r {
				if v < 0 {
					t.Fatalf("negative count")
				}
			}
		}
	})
}

func FuzzReadDeployment(f *testing.F) {
	seed(f, nil, []string{deploymentRel, vaMapRel}, func(f *testing.F, d []byte) { f.Add(d) })
	f.Add([]byte(`{"moe_layer_count": 1, "layer_list": [{"layer_id": 0, "device_count": 1, "device_list": [{"device_id": 0, "device_expert": [0]}]}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		dep, _, err := ReadDeployment(bytes.NewReader(data), "fuzz.json")
		if err != nil {
			return
		}
		var buf bytes.Buffer
		if err := WriteDeployment(&buf, dep); err != nil {
			t.Fatal(err)
		}
		back, _, err := ReadDeployment(&buf, "back.json")
		if err != nil {
			t.Fatalf("written deployment does not read back: %v", err)
		}
		if len(back.Layers) != len(dep.Layers) {
			t.Fatalf("layers %d -> %d", len(dep.Layers), len(back.Layers))
		}
		for i := range dep.Layers {
			a, b := dep.Layers[i].Devices, back.Layers[i].Devices
			if len(a) != len(b) {
				t.Fatalf("layer %d: devices differ", i)
			}
			for d := range a {
				if !equalInts(a[d], b[d]) {
					t.Fatalf("layer %d device %d: %v -> %v", i, d, a[d], b[d])
				}
			}
		}
	})
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func FuzzReadLoadCSV(f *testing.F) {
	seed(f, []string{"loads.csv"}, nil, func(f *testing.F, d []byte) { f.Add(d) })
	f.Add([]byte("tokens,layer,expert\n1,0,0\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		x, err := ReadLoadCSV(bytes.NewReader(data), "fuzz.csv")
		if err != nil {
			return
		}
		if err := x.Validate(); err != nil {
			t.Fatal(err)
		}
		if !x.HasLoads() {
			t.Fatal("no loads without an error")
		}
	})
}

func FuzzReadLog(f *testing.F) {
	seed(f, []string{"vllm-ascend.log", "vllm-eplb.log"}, nil, func(f *testing.F, d []byte) { f.Add(d) })
	f.Fuzz(func(t *testing.T, data []byte) {
		_, err := ReadLog(bytes.NewReader(data), "fuzz.log", func(e model.ExpertLog) {
			if e.Line < 1 || e.Kind == "" {
				t.Fatalf("bad entry %+v", e)
			}
			for k, v := range e.Values {
				if math.IsNaN(v) || math.IsInf(v, 0) {
					t.Fatalf("%s is not finite", k)
				}
			}
		})
		if err != nil {
			t.Fatal(err)
		}
	})
}
