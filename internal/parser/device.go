package parser

import (
	"encoding/csv"
	"io"
	"strconv"
	"strings"

	"github.com/npuprof/npuprof/internal/parser/model"
)

// deviceColumns are the summary files (in the torch_npu / MindSpore
// output folder) whose rows name the device, and the column that does,
// in the order they are tried: the new headers' leading Device_id of
// kernel_details.csv and op_statistic.csv, and the memory files'
// "NPU:{id}" (real Level1 capture: npu_module_mem.csv Device and
// memory_record.csv Device Type say NPU:0 on every row).
var deviceColumns = []struct{ file, column string }{
	{"kernel_details.csv", "Device_id"},
	{"op_statistic.csv", "Device_id"},
	{"npu_module_mem.csv", "Device"},
	{"memory_record.csv", "Device Type"},
	{"operator_memory.csv", "Device Type"},
}

// deviceFromSummaries sets r.Device, when no other file gave it, from the
// first row of a summary file of out that names the device. Only the
// header and the first rows are read.
func deviceFromSummaries(r *model.Rank, out string) {
	for _, dc := range deviceColumns {
		if r.Device >= 0 {
			return
		}
		p := findInput(out, dc.file)
		if p == "" {
			continue
		}
		if d, ok := firstDevice(p, dc.column); ok {
			r.Device, r.Have.DeviceFile = d, p
		}
	}
}

// firstDevice reads the header and up to 8 rows of a CSV, and returns the
// device id of the first row whose column names one.
func firstDevice(path, column string) (int, bool) {
	f, err := openInput(path)
	if err != nil {
		return -1, false
	}
	defer f.Close()
	cr := csv.NewReader(io.LimitReader(f, 1<<20))
	cr.FieldsPerRecord, cr.LazyQuotes, cr.ReuseRecord = -1, true, true
	hdr, err := cr.Read()
	if err != nil {
		return -1, false
	}
	col := -1
	for i, h := range hdr {
		if strings.TrimSpace(strings.TrimPrefix(h, "\ufeff")) == column {
			col = i
			break
		}
	}
	if col < 0 {
		return -1, false
	}
	for range 8 {
		rec, err := cr.Read()
		if err != nil {
			return -1, false
		}
		if col < len(rec) {
			if d, ok := parseDeviceID(rec[col]); ok {
				return d, true
			}
		}
	}
	return -1, false
}

// parseDeviceID reads a device id as the profilers write it: "4", or
// "NPU:4" in the memory files.
func parseDeviceID(s string) (int, bool) {
	s = strings.TrimSpace(s)
	s = strings.TrimPrefix(s, "NPU:")
	d, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil || d < 0 || d >= 1<<16 {
		return -1, false
	}
	return d, true
}

// noteDevice records file as what gave r.Device, when a reader set the
// device without saying from where.
func noteDevice(r *model.Rank, file string) {
	if r.Device >= 0 && r.Have.DeviceFile == "" {
		r.Have.DeviceFile = file
	}
}
