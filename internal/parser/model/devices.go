package model

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Clone returns a copy of the table that grows on its own.
func (t *Syms) Clone() Syms {
	return Syms{strs: slices.Clone(t.strs), slots: slices.Clone(t.slots), bytes: slices.Clone(t.bytes), ends: slices.Clone(t.ends)}
}

// AddDevice records that the rank's files hold device d among several
// (Devices stays ascending, each device once).
func (r *Rank) AddDevice(d int) {
	if i, found := slices.BinarySearch(r.Devices, d); !found {
		r.Devices = slices.Insert(r.Devices, i, d)
	}
}

// Part returns the part of device d (PerDevice), added when new.
func (r *Rank) Part(d int) *DevicePart {
	for i := range r.PerDevice {
		if r.PerDevice[i].Device == d {
			return &r.PerDevice[i]
		}
	}
	r.PerDevice = append(r.PerDevice, DevicePart{Device: d})
	return &r.PerDevice[len(r.PerDevice)-1]
}

// SplitDevices makes one rank of each device of a rank whose files hold
// several (Devices), nil when it holds one. Each has its device's tasks,
// HCCL ops, links, step-trace rows, op_statistic rows, own Overlap
// Analysis, plane tasks and device-bound steps (DevicePart.Steps), and the
// host side whole (framework ops, steps, metadata, summaries
// without a device). Its rank is RankOfDevice's for its device, else the
// device id, said in a warning. Call after the read is finished (sorted,
// duplicates dropped); r is not used afterwards.
func (r *Rank) SplitDevices() []*Rank {
	if len(r.Devices) < 2 {
		return nil
	}
	devs := r.Devices
	list := strings.Trim(strings.Join(strings.Fields(fmt.Sprint(devs)), ", "), "[]")
	file := r.Have.TimelineFile
	for _, f := range []string{r.Have.KernelFile, r.Have.StepTraceFile, r.Have.OpStatFile, r.Path} {
		if file == "" {
			file = f
		}
	}
	out := make([]*Rank, len(devs))
	for k, d := range devs {
		c := *r
		c.Devices, c.PerDevice, c.RankOfDevice = nil, nil, nil
		c.Device = d
		c.Have.DeviceNote = ""
		c.Syms = r.Syms.Clone()
		c.Extras = r.Extras.Clone()
		c.Threads = r.Threads.Clone()
		c.Env, c.Metadata = r.Env, r.Metadata
		c.Groups = slices.Clone(r.Groups)
		c.FrameworkOps = slices.Clone(r.FrameworkOps)
		c.Steps = slices.Clone(r.Steps)
		c.Communication = slices.Clone(r.Communication)
		c.CommStats, c.APIStats, c.OpStats = slices.Clone(r.CommStats), slices.Clone(r.APIStats), slices.Clone(r.OpStats)
		c.Have.PartialFiles = slices.Clone(r.Have.PartialFiles)
		c.Warnings = slices.Clone(r.Warnings)
		// tasks and ops of the device, and the links to them
		taskAt := make([]int32, len(r.Tasks))
		c.Tasks = nil
		for i := range r.Tasks {
			taskAt[i] = -1
			if x := r.Extra(&r.Tasks[i]); int(x.Device) == d {
				taskAt[i] = int32(len(c.Tasks))
				t := r.Tasks[i]
				x.Device = 0
				c.SetExtra(&t, x)
				c.Tasks = append(c.Tasks, t)
			}
		}
		hcclAt := make([]int32, len(r.HCCL))
		c.HCCL = nil
		lost := 0
		for i := range r.HCCL {
			hcclAt[i] = -1
			if !slices.Contains(devs, int(r.HCCL[i].Device)) {
				lost++
			}
			if int(r.HCCL[i].Device) == d {
				hcclAt[i] = int32(len(c.HCCL))
				h := r.HCCL[i]
				h.Device = 0
				c.HCCL = append(c.HCCL, h)
			}
		}
		c.Links = nil
		for _, l := range r.Links {
			switch {
			case l.Task >= 0 && taskAt[l.Task] >= 0:
				c.Links = append(c.Links, Link{Op: l.Op, Task: taskAt[l.Task], HCCL: -1})
			case l.Task < 0 && l.HCCL >= 0 && hcclAt[l.HCCL] >= 0:
				c.Links = append(c.Links, Link{Op: l.Op, Task: -1, HCCL: hcclAt[l.HCCL]})
			}
		}
		// the step-trace rows of the device (rows without one were
		// written for every device together: none is this device's)
		c.StepTrace = nil
		ds := strconv.Itoa(d)
		for _, row := range r.StepTrace {
			if row.Device == ds {
				c.StepTrace = append(c.StepTrace, row)
			}
		}
		if len(c.StepTrace) == 0 {
			if len(r.StepTrace) > 0 {
				c.Warn(r.Have.StepTraceFile, "holds no row of device %d (its rows name no device, or other devices), so this rank's steps are not read from it", d)
			}
			c.Have.StepTraceFile = ""
		}
		if slices.ContainsFunc(r.OpStats, func(s StatRow) bool { return s.Device != "" }) {
			// op_statistic's rows of the device
			c.OpStats = slices.DeleteFunc(c.OpStats, func(s StatRow) bool { return s.Device != ds })
			if len(c.OpStats) == 0 {
				c.Have.OpStatFile = ""
			}
		}
		c.OwnOverlap, c.HCCLPlane = OwnOverlap{}, PlaneTasks{}
		for _, p := range r.PerDevice {
			if p.Device == d {
				c.OwnOverlap, c.HCCLPlane = p.OwnOverlap, p.HCCLPlane
				if p.Steps != nil {
					c.Steps = slices.Clone(p.Steps)
				}
			}
		}
		if r.Have.Timeline {
			c.Have.Timeline = len(c.Tasks) > 0 || len(c.HCCL) > 0
			if !c.Have.Timeline && c.Have.TimelineNote == "" {
				c.Have.TimelineNote = fmt.Sprintf("%s holds no device task of device %d", r.Have.TimelineFile, d)
			}
			c.Have.HCCL = c.Have.HCCL && c.Have.Timeline
		}
		if lost > 0 {
			// collectives the file does not give a device: none is
			// this device's for sure
			c.HCCL = nil
			c.Links = slices.DeleteFunc(c.Links, func(l Link) bool { return l.HCCL >= 0 })
			c.Have.HCCL = false
			c.Have.HCCLNote = fmt.Sprintf("%s holds devices %s but does not say the device of %d collective(s), so no device's collectives are known", file, list, lost)
		}
		if r.launched != nil {
			c.launched = r.launched.ofTasks(taskAt)
		}
		c.Have.Framework = len(c.FrameworkOps) > 0 || c.launched != nil && len(c.launched.names) > 0
		if len(c.Communication) > 0 && !c.Have.HCCL {
			// the per-op communication info names no device: it is the
			// collectives of this rank only when nothing else gives them
			c.Warn(c.Have.CommFile, "names no device for its ops, and the rank's files hold devices %s: the collectives read from it are every device's", list)
		}
		if rk, ok := r.RankOfDevice[d]; ok {
			c.Rank = rk
			c.Warn(file, "holds devices %s: this rank is device %d's (rank %d by RANK_DEVICE_MAP)", list, d, rk)
		} else {
			c.Rank = d
			c.Warn(file, "holds devices %s and names no rank per device: this rank is device %d's, numbered by its device id", list, d)
		}
		out[k] = &c
	}
	return out
}
