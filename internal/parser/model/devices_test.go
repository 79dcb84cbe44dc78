package model

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// SplitDevices gives each device its tasks, collectives and the links to
// them, its step rows, op_statistic rows, own Overlap Analysis and own
// steps (DevicePart.Steps), the
// host side whole, and its rank from RankOfDevice, else the device id.
func TestSplitDevices(t *testing.T) {
	r := NewRank("p")
	require.Nil(t, r.SplitDevices(), "one device: nothing to split")
	r.Have = Availability{Timeline: true, HCCL: true, TimelineFile: "trace_view.json"}
	k := r.Intern("kernel")
	r.FrameworkOps = []FrameworkOp{{Start: 1, Dur: 9, Name: r.Intern("op")}}
	r.Tasks = []DeviceTask{r.NewTask(2, 1, TaskExtra{Name: k, Device: 3}), r.NewTask(2, 1, TaskExtra{Name: k, Device: 5}), r.NewTask(4, 1, TaskExtra{Name: k, Device: 5})}
	r.HCCL = []HCCLOp{{Start: 6, Dur: 1, Device: 5}}
	r.Links = []Link{{Op: 0, Task: 0, HCCL: -1}, {Op: 0, Task: 2, HCCL: -1}, {Op: 0, Task: -1, HCCL: 0}}
	r.StepTrace = []StepTraceRow{{Step: "1", Device: "3"}, {Step: "1", Device: "5"}}
	r.OpStats = []StatRow{{Name: "Cast", Device: "5", Count: 2}}
	r.AddDevice(5)
	r.AddDevice(3)
	r.AddDevice(5)
	require.Equal(t, []int{3, 5}, r.Devices)
	r.Part(5).OwnOverlap.Add("Free", 0, 10)
	r.Steps = []Step{{ID: 1, Start: 2, End: 5}}
	r.Part(5).Steps = []Step{{ID: 1, Start: 2, End: 5}}
	r.Part(3).Steps = []Step{{ID: 1, Start: 2, End: 3}}
	r.RankOfDevice = map[int]int{5: 9}
	rs := r.SplitDevices()
	require.Len(t, rs, 2)
	a, b := rs[0], rs[1]
	require.Equal(t, 3, a.Device)
	require.Equal(t, 3, a.Rank)
	require.Equal(t, 9, b.Rank)
	require.Len(t, a.Tasks, 1)
	require.Len(t, b.Tasks, 2)
	require.Empty(t, a.HCCL)
	require.Len(t, b.HCCL, 1)
	require.Equal(t, []Link{{Op: 0, Task: 0, HCCL: -1}}, a.Links)
	require.Equal(t, []Link{{Op: 0, Task: 1, HCCL: -1}, {Op: 0, Task: -1, HCCL: 0}}, b.Links)
	require.Len(t, a.FrameworkOps, 1)
	require.Equal(t, "3", a.StepTrace[0].Device)
	require.Empty(t, a.OpStats)
	require.Len(t, b.OpStats, 1)
	require.Zero(t, a.OwnOverlap.Slices)
	require.Equal(t, int64(10), b.OwnOverlap.Free)
	require.Equal(t, "kernel", b.Str(b.Name(&b.Tasks[0])))
	require.Zero(t, b.TaskDevice(&b.Tasks[0]), "a split rank's tasks are of device 0")
	require.Equal(t, []Step{{ID: 1, Start: 2, End: 3}}, a.Steps, "the device's own steps")
	require.Equal(t, []Step{{ID: 1, Start: 2, End: 5}}, b.Steps)
	require.NoError(t, a.Validate())
	require.NoError(t, b.Validate())
	require.Contains(t, a.Warnings[0].Message, "numbered by its device id")
	require.Contains(t, b.Warnings[0].Message, "rank 9 by RANK_DEVICE_MAP")
}
