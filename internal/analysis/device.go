package analysis

import "github.com/npuprof/npuprof/internal/parser/model"

// KeyDevice is the sources / unavailable key of the rank's device id
// (JSON ranks[].device).
const KeyDevice = "device"

// deviceSource names the file the rank's device id came from, or says why
// it is unknown.
func deviceSource(r *model.Rank, m *Metrics) {
	switch {
	case r.Device >= 0 && r.Have.DeviceFile != "":
		m.Sources[KeyDevice] = r.Have.DeviceFile
	case r.Device >= 0 && r.Have.DeviceNote != "":
		m.Unavailable[KeyDevice] = r.Have.DeviceNote
	case r.Device < 0:
		m.Unavailable[KeyDevice] = "no file of the rank names its device (a timeline's device id, a Device_id column, " +
			"NPU:{id} in npu_module_mem.csv or memory_record.csv, PROF_*/device_{id}, RANK_DEVICE_MAP)"
	}
}
