package expertload

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"

	"github.com/npuprof/npuprof/internal/parser/model"
)

// mapFile is the expert-map JSON schema:
//
//	{"moe_layer_count": L,
//	 "layer_list": [{"layer_id": i, "device_count": D,
//	                 "device_list": [{"device_id": d, "device_expert": [e0, e1, ...]}]}]}
//
// It is shared by
//
//   - vLLM-Ascend's writer, VllmEplbAdaptor._export_tensor_to_file in
//     vllm_ascend/eplb/adaptor/vllm_adaptor.py:175 (HEAD 182b75ea84), which
//     writes it for expert_map_record_path with json.dump(record, f, indent=4);
//   - vLLM-Ascend's reader for expert_map_path, expert_file_to_tensor in
//     vllm_ascend/eplb/core/eplb_utils.py:27, which indexes
//     layer_list[layer_id] and builds one tensor from every device_expert
//     list (so every device of a layer needs the same number of slots);
//   - MindIE's {prefill|decode}_global_deployment.json (sample
//     S23/expert_deployment/prefill_global_deployment.json: 58 layers x 64
//     devices x 5 slots).
type mapFile struct {
	MoELayerCount *int       `json:"moe_layer_count"`
	LayerList     []mapLayer `json:"layer_list"`
}

type mapLayer struct {
	LayerID     *int        `json:"layer_id"`
	DeviceCount *int        `json:"device_count,omitempty"`
	DeviceList  []mapDevice `json:"device_list"`
}

type mapDevice struct {
	DeviceID     *int  `json:"device_id"`
	DeviceExpert []int `json:"device_expert"`
}

// maxDeployBytes bounds a deployment file (the 58x64x5 sample is 1 MB).
const maxDeployBytes = 256 << 20

// ReadDeployment reads an expert-map / global-deployment JSON. Devices are
// ordered by device_id, which must run 0..n-1; layers are ordered by
// layer_id. Inconsistencies vLLM-Ascend tolerates or that MindIE files are
// known to carry (moe_layer_count or device_count disagreeing with the
// lists, an expert twice on one device) are returned as notes.
func ReadDeployment(r io.Reader, name string) (*model.Deployment, []string, error) {
	var f mapFile
	dec := json.NewDecoder(io.LimitReader(r, maxDeployBytes))
	if err := dec.Decode(&f); err != nil {
		return nil, nil, fmt.Errorf("%s: expected an expert-map JSON ({\"moe_layer_count\", \"layer_list\": [...]}): %w", name, err)
	}
	if f.LayerList == nil {
		return nil, nil, fmt.Errorf("%s: no \"layer_list\": not an expert-map / global deployment JSON", name)
	}
	var notes []string
	dep := &model.Deployment{}
	seen := map[int]bool{}
	for i, l := range f.LayerList {
		if l.LayerID == nil {
			return nil, nil, fmt.Errorf("%s: layer_list[%d]: no \"layer_id\"", name, i)
		}
		id := *l.LayerID
		if id < 0 || seen[id] {
			return nil, nil, fmt.Errorf("%s: layer_list[%d]: layer_id %d is negative or repeated", name, i, id)
		}
		seen[id] = true
		if len(l.DeviceList) == 0 {
			return nil, nil, fmt.Errorf("%s: layer %d: empty \"device_list\"", name, id)
		}
		if l.DeviceCount != nil && *l.DeviceCount != len(l.DeviceList) {
			notes = append(notes, fmt.Sprintf("%s: layer %d: device_count %d but %d devices listed", name, id, *l.DeviceCount, len(l.DeviceList)))
		}
		devs := make([][]int, len(l.DeviceList))
		have := make([]bool, len(l.DeviceList))
		dupDevices := 0
		for j, d := range l.DeviceList {
			if d.DeviceID == nil {
				return nil, nil, fmt.Errorf("%s: layer %d: device_list[%d]: no \"device_id\"", name, id, j)
			}
			did := *d.DeviceID
			if did < 0 || did >= len(l.DeviceList) || have[did] {
				return nil, nil, fmt.Errorf("%s: layer %d: device_id %d: expected each of 0..%d once", name, id, did, len(l.DeviceList)-1)
			}
			if len(d.DeviceExpert) == 0 || len(d.DeviceExpert) > maxSlots {
				return nil, nil, fmt.Errorf("%s: layer %d device %d: \"device_expert\" must list 1..%d expert ids", name, id, did, maxSlots)
			}
			held := make(map[int]bool, len(d.DeviceExpert))
			dup := false
			for _, e := range d.DeviceExpert {
				if e < 0 || e >= maxSlots {
					return nil, nil, fmt.Errorf("%s: layer %d device %d: expert id %d out of range", name, id, did, e)
				}
				dup = dup || held[e]
				held[e] = true
			}
			if dup {
				dupDevices++
			}
			have[did] = true
			devs[did] = append([]int(nil), d.DeviceExpert...)
		}
		if dupDevices > 0 {
			notes = append(notes, fmt.Sprintf("%s: layer %d: %d device(s) hold the same expert twice", name, id, dupDevices))
		}
		dep.Layers = append(dep.Layers, model.DeploymentLayer{ID: id, Devices: devs})
	}
	sort.Slice(dep.Layers, func(i, j int) bool { return dep.Layers[i].ID < dep.Layers[j].ID })
	if f.MoELayerCount == nil {
		notes = append(notes, fmt.Sprintf("%s: no \"moe_layer_count\"", name))
	} else if *f.MoELayerCount != len(f.LayerList) {
		notes = append(notes, fmt.Sprintf("%s: moe_layer_count %d but %d layers listed", name, *f.MoELayerCount, len(f.LayerList)))
	}
	if !dep.Uniform() {
		notes = append(notes, fmt.Sprintf("%s: devices or layers differ in slot count; vLLM-Ascend needs the same number of slots on every device", name))
	}
	return dep, notes, nil
}

// WriteDeployment writes d in the expert-map schema, indented by four
// spaces like vLLM-Ascend's own json.dump(..., indent=4), so the file can
// be given to vLLM-Ascend as eplb_config.expert_map_path. layer_id is the
// position in d.Layers (vLLM-Ascend indexes layer_list by MoE layer
// number), device_id the position in Devices.
func WriteDeployment(w io.Writer, d *model.Deployment) error {
	n := len(d.Layers)
	f := mapFile{MoELayerCount: &n, LayerList: make([]mapLayer, 0, n)}
	for i, l := range d.Layers {
		id, dc := i, len(l.Devices)
		ml := mapLayer{LayerID: &id, DeviceCount: &dc, DeviceList: make([]mapDevice, 0, dc)}
		for j, dev := range l.Devices {
			did := j
			ml.DeviceList = append(ml.DeviceList, mapDevice{DeviceID: &did, DeviceExpert: append([]int{}, dev...)})
		}
		f.LayerList = append(f.LayerList, ml)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "    ")
	return enc.Encode(&f)
}
