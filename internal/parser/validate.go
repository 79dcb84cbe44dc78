package parser

import (
	"fmt"
	"io"
	"math"
	"path/filepath"
	"slices"
	"strings"

	"github.com/npuprof/npuprof/internal/parser/model"
)

// Checks of what the summary readers gave that compare values with each
// other (issue 31): a damaged byte that still parses must not change a
// number without a word. Each finding is a warning on the file (so the
// rank's outputs say it), and a file whose rows disagree is partial: every
// metric from it is then marked so.

// validateRead runs the checks on a rank once its files are read.
func validateRead(r *model.Rank) {
	if f := r.Have.CommFile; f != "" && !r.Have.HCCL && slices.Contains(r.Have.PartialFiles, f) {
		// communication.json gives this rank's collectives: ops of it
		// were left out, so the rank is partial
		r.Partial = true
		if r.PartialReason == "" {
			r.PartialReason = f + " has ops that fail validation, left out: the collective metrics from it cover the others"
		}
	}
	checkStepTrace(r)
	checkKernelCores(r)
	checkGroups(r)
	checkCollectiveNames(r)
}

// farGap is more than any capture spans: a device task this far from the
// rest of its timeline has a damaged timestamp.
const farGap = 24 * 3600 * 1_000_000_000

// farScan bounds how many tasks at each end of the timeline are looked at.
const farScan = 64

// checkFarTasks: a damaged ts that still parses (a duplicated chunk that
// makes "ts": "15.632") puts a task decades from the rest, where it
// stretches the device window and adds to its kind's sums. The tasks are
// sorted by start, so such tasks are at either end, past a gap of more
// than a day: say so, and make the rank partial.
func checkFarTasks(r *model.Rank) {
	ts := r.Tasks
	head, tail := farEnds(len(ts), func(i int) int64 { return ts[i].Start }, func(i int) int64 { return r.End(&ts[i]) })
	if head+tail == 0 {
		return
	}
	first := &ts[0]
	if head == 0 {
		first = &ts[len(ts)-tail]
	}
	farReason(r, r.Have.TimelineFile, head+tail, fmt.Sprintf("%d device task(s) lie more than a day before or after the rest of the timeline (first %q at ts %d ns; damaged timestamps?): they are counted, and the device window spans them", head+tail, clipCell(r.Str(r.Name(first))), first.Start))
}

// farEnds is how many of n intervals sorted by start (start, end) lie
// past a gap of more than farGap at the head and at the tail: a gap
// splits them in two, and the smaller side is the damaged one.
func farEnds(n int, start, end func(int) int64) (head, tail int) {
	for g := 1; g < n && g <= farScan; g++ {
		if start(g)-start(g-1) > farGap && g < n-g {
			head = g
		}
	}
	for g := n - 1; g > head && g >= n-farScan; g-- {
		if start(g)-end(g-1) > farGap && n-g < g-head {
			tail = n - g
		}
	}
	return head, tail
}

// checkFarHCCL: the same for the collectives (a kernel_details.csv row
// of a collective whose start lost its digits): those more than a day
// before the first device task or after the last one's end, or, without
// tasks, past a gap of a day from the other collectives.
func checkFarHCCL(r *model.Rank) {
	hs := r.HCCL
	n := len(hs)
	var head, tail int
	if k := len(r.Tasks); k > 0 {
		lo, hi := r.Tasks[0].Start, r.End(&r.Tasks[k-1])
		for head < n && head < farScan && hs[head].Start < lo-farGap {
			head++
		}
		for tail < n-head && tail < farScan && hs[n-1-tail].Start > hi+farGap {
			tail++
		}
	} else {
		head, tail = farEnds(n, func(i int) int64 { return hs[i].Start }, func(i int) int64 { return hs[i].End() })
	}
	if head+tail == 0 {
		return
	}
	first := &hs[0]
	if head == 0 {
		first = &hs[n-tail]
	}
	file := r.Have.HCCLFile
	if file == "" {
		file = r.Have.TimelineFile
	}
	farReason(r, file, head+tail, fmt.Sprintf("%d collective(s) lie more than a day before or after the rest of the timeline (first %q at ts %d ns; damaged timestamps?): they are counted, and the device window spans them", head+tail, clipCell(r.Str(first.Name)), first.Start))
}

// farReason warns about n timeline entries of file far from the rest
// (reason says which) and makes the rank partial.
func farReason(r *model.Rank, file string, n int, reason string) {
	if file == "" {
		file = r.Path
	}
	r.Warnings = append(r.Warnings, model.Warning{File: file, Message: reason, Count: n})
	r.Partial = true
	if r.PartialReason == "" {
		r.PartialReason = reason
	}
}

// checkCollectiveNames: a collective whose name gives no type npuprof
// knows (hcom_allGat_5_1: a damaged name) would be summed as "unknown";
// say so, and make the file partial when it gives the rank's collectives.
func checkCollectiveNames(r *model.Rank) {
	n, first := 0, ""
	file := r.Have.HCCLFile
	if r.Have.HCCL {
		if r.Have.Timeline {
			return // the timeline's names are checked by its reader
		}
		for i := range r.HCCL {
			if name := r.Str(r.HCCL[i].Name); model.HCCLTypeFromName(name) == "unknown" {
				if n == 0 {
					first = name
				}
				n++
			}
		}
	} else {
		file = r.Have.CommFile
		for _, c := range r.Communication {
			if model.HCCLTypeFromName(c.Op) == "unknown" {
				if n == 0 {
					first = c.Op
				}
				n++
			}
		}
	}
	if n == 0 || file == "" {
		return
	}
	r.Warn(file, "%d collective(s) whose name gives no type npuprof knows (first: %q): measured under hccl.unknown.*", n, clipCell(first))
	markPartialFile(r, file, fmt.Sprintf("%s has %d collective(s) of no known type: the collective metrics from it may be wrong", file, n))
}

// checkStepTrace: in every step_trace_time.csv row torch_npu writes,
// Communication = Communication(Not Overlapped) + Overlapped and Stage =
// Computing + Communication(Not Overlapped) + Free (Stage is rounded: it
// is held to a millionth of its value). A step listed twice for a device
// is a duplicated line. Either makes the file partial.
func checkStepTrace(r *model.Rank) {
	p := r.Have.StepTraceFile
	if p == "" || len(r.StepTrace) == 0 {
		return
	}
	seen := make(map[string]bool, len(r.StepTrace))
	dup, disagree := 0, 0
	firstDup, firstDis := "", ""
	for _, row := range r.StepTrace {
		if row.Step != "" && !allDigits(row.Step) {
			// torch_npu numbers its steps: a step id that is not a
			// number is a damaged cell
			if disagree == 0 {
				firstDis = row.Step
			}
			disagree++
			continue
		}
		if row.Step != "" {
			k := row.Step + "\x00" + row.Device
			if seen[k] {
				if dup == 0 {
					firstDup = row.Step
				}
				dup++
			}
			seen[k] = true
		}
		comm := row.CommunicationNotOverlapped + row.Overlapped
		stage := row.Computing + row.CommunicationNotOverlapped + row.Free
		// without an Overlapped value (its column missing: unavailable,
		// analysis.overlapFromStepTrace) Communication cannot be checked
		if (row.Communication > 0 && !row.NoOverlapped && !near(row.Communication, comm)) || (row.Stage > 0 && !near(row.Stage, stage)) {
			if disagree == 0 {
				firstDis = row.Step
			}
			disagree++
		}
	}
	if dup > 0 {
		r.Warn(p, "%d step row(s) repeat a step already listed (first: step %s): a duplicated or damaged line; the step metrics from this file may be wrong", dup, clipCell(firstDup))
	}
	if disagree > 0 {
		r.Warn(p, "%d row(s) with a step id that is not a number or whose columns disagree (Communication is not Communication(Not Overlapped) + Overlapped, or Stage is not Computing + Communication(Not Overlapped) + Free; first: step %q): a damaged value; the metrics from this file may be wrong", disagree, clipCell(firstDis))
	}
	if dup > 0 || disagree > 0 {
		markPartialFile(r, p, fmt.Sprintf("%s holds rows that repeat a step or whose columns disagree: the metrics from it may be wrong", p))
	}
}

// near: a and b agree to the precision torch_npu writes (3 decimals; Stage
// rounded to a millionth of its value).
func near(a, b float64) bool {
	return math.Abs(a-b) <= 0.005+4e-6*math.Max(math.Abs(a), math.Abs(b))
}

// checkKernelCores: a kernel_details.csv row (read without a timeline)
// whose Accelerator Core is none npuprof knows is counted nowhere (neither
// compute nor collective): say so, rather than report fewer kernels.
func checkKernelCores(r *model.Rank) {
	p := r.Have.KernelFile
	if p == "" || r.Have.Timeline {
		return
	}
	n, first := 0, ""
	for _, t := range r.Tasks {
		if r.Class(&t) != model.ClassOther {
			continue
		}
		if n == 0 {
			first = r.Str(r.TaskType(&t))
		}
		n++
	}
	if n > 0 {
		r.Warn(p, "%d row(s) with an Accelerator Core npuprof does not know (first: %q): counted neither as compute nor as collectives", n, clipCell(first))
		markPartialFile(r, p, fmt.Sprintf("%s has %d row(s) of an unknown Accelerator Core: the kernel metrics from it leave them out", p, n))
	}
}

// checkGroups: when profiler_metadata.json lists the parallel groups, a
// collective whose group hash none of them has loses its group metrics
// (hccl.group.*): name the hashes, instead of dropping them in silence.
func checkGroups(r *model.Rank) {
	if len(r.Groups) == 0 {
		for k := range r.Metadata {
			if k != "parallel_group_info" && (nearGroupInfo(k) || heldGroupInfo(r.Metadata[k])) {
				r.Warn(filepath.Join(r.Path, "profiler_metadata.json"), "key %q looks like a damaged parallel_group_info: the collectives' groups are unknown (no hccl.group.* metrics)", clipCell(k))
			}
		}
		return
	}
	hashes := map[string]bool{}
	for _, g := range r.Groups {
		hashes[g.Hash] = true
	}
	var missing []string
	seen := map[string]bool{}
	add := func(h string) {
		if h != "" && !seen[h] {
			seen[h] = true
			missing = append(missing, h)
		}
	}
	for i := range r.HCCL {
		h := &r.HCCL[i]
		if h.HashSuffix != 0 && h.Group == 0 {
			add(r.Str(h.HashSuffix))
		}
	}
	if !r.Have.HCCL {
		for _, c := range r.Communication {
			if hashes[c.GroupHash] {
				continue
			}
			if suf := model.HCCLHashSuffix(c.Op); suf != "" && r.GroupByHashSuffix(suf) != nil {
				continue
			}
			add(c.GroupHash)
		}
	}
	if len(missing) == 0 {
		return
	}
	shown := missing
	if len(shown) > 3 {
		shown = shown[:3]
	}
	for i := range shown {
		shown[i] = clipCell(shown[i])
	}
	file := r.Path
	if p := filepath.Join(r.Path, "profiler_metadata.json"); exists(p) {
		file = p
	}
	r.Warn(file, "collectives name %d group(s) that parallel_group_info does not list (%s): they are left out of the hccl.group.* metrics (a damaged or mismatched profiler_metadata.json?)", len(missing), strings.Join(shown, ", "))
}

// readComm reads a communication.json into r.Communication; ops that fail
// validation (or hold times out of range) are left out, warned about, and
// make the file partial.
func readComm(r *model.Rank, p string, read func(io.Reader, string) ([]model.CommOpInfo, error)) {
	err := withFile(r, p, func(f io.Reader) error {
		c, err := read(f, p)
		r.Communication = c
		return err
	})
	if err != nil && len(r.Communication) > 0 && !slices.Contains(r.Have.PartialFiles, p) {
		r.Have.PartialFiles = append(r.Have.PartialFiles, p)
	}
	if err != nil && len(r.Communication) == 0 && !r.Have.HCCL && r.Have.HCCLNote == "" {
		// refused whole where it was to give the collectives: the
		// collective metrics say why (beside the warning)
		r.Have.HCCLNote = err.Error()
	}
}

// markPartialFile records p as read only in part (its metrics partial),
// and the rank as partial when p is its device data (no timeline).
func markPartialFile(r *model.Rank, p, reason string) {
	r.Have.PartialFiles = append(r.Have.PartialFiles, p)
	if !r.Have.Timeline {
		r.Partial = true
		if r.PartialReason == "" {
			r.PartialReason = reason
		}
	}
}

// clipCell caps a value quoted from a file.
func clipCell(s string) string {
	if len(s) > 60 {
		return s[:60] + "…"
	}
	return s
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// heldGroupInfo: the JSON text v holds what parallel_group_info holds
// (communicators with a group_name and their global_ranks), whatever its
// key became.
func heldGroupInfo(v string) bool {
	return strings.Contains(v, `"group_name"`) && strings.Contains(v, `"global_ranks"`)
}

// nearGroupInfo: k could be parallel_group_info with a byte or two
// damaged (about its length, and its start or its "group" left whole), or
// with bytes written into the key around it (any case).
func nearGroupInfo(k string) bool {
	const want = "parallel_group_info"
	if strings.Contains(strings.ToLower(k), want) {
		// bytes written into the key before or after it
		return true
	}
	if d := len(k) - len(want); d > 2 || d < -2 {
		return false
	}
	return strings.HasPrefix(k, "paral") || strings.Contains(k, "group") || strings.HasSuffix(k, "_info")
}
