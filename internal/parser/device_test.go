package parser

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/npuprof/npuprof/internal/parser/model"
)

// The device comes from the first summary file that names it: the new
// headers' Device_id, else the memory files' NPU:{id}; a file that names
// none is passed over.
func TestDeviceFromSummaries(t *testing.T) {
	for _, tc := range []struct {
		files map[string]string
		want  int
		from  string
	}{
		{map[string]string{"kernel_details.csv": "Device_id,Step ID,Name,Type\r\n5,1,MatMul-op1,MatMul\r\n"}, 5, "kernel_details.csv"},
		{map[string]string{
			"kernel_details.csv": "Step Id,Name,Type\r\n1,MatMul,MatMul\r\n",
			"npu_module_mem.csv": "Component,Timestamp(us),Total Reserved(MB),Device\nSLOG,1736408883657086.220\t,0.0,NPU:4\n",
		}, 4, "npu_module_mem.csv"},
		{map[string]string{"memory_record.csv": "Component,Timestamp(us),Total Allocated(MB),Total Reserved(MB),Total Active(MB),Stream Ptr,Device Type\nPTA,1,0,0,0,0,NPU:1\n"}, 1, "memory_record.csv"},
		{map[string]string{"npu_module_mem.csv": "Component,Device\nSLOG,cpu\n"}, -1, ""},
	} {
		out := t.TempDir()
		for n, body := range tc.files {
			require.NoError(t, os.WriteFile(filepath.Join(out, n), []byte(body), 0o644))
		}
		r := model.NewRank(out)
		deviceFromSummaries(r, out)
		require.Equal(t, tc.want, r.Device, "%v", tc.files)
		if tc.from != "" {
			require.Equal(t, filepath.Join(out, tc.from), r.Have.DeviceFile)
		}
	}
	for s, want := range map[string]int{"4": 4, " NPU:7 ": 7, "NPU:x": -1, "-1": -1, "": -1} {
		got, _ := parseDeviceID(s)
		require.Equal(t, want, got, s)
	}
}
