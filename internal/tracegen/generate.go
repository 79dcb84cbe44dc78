package tracegen

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"
)

// TruthFile is the name of the ground-truth file Generate writes in dir.
const TruthFile = "npuprof_truth.json"

// OutputDir is the folder of the integrated results inside a rank folder.
const OutputDir = "ASCEND_PROFILER_OUTPUT"

// Generate writes one *_ascend_pt folder per rank under dir (created if
// needed), dir/npuprof_truth.json and, for scenarios with HotExperts, the
// MindIE expert-load dump dir/expert_hotspot, and returns the ground truth.
func Generate(dir string, s Scenario) (*Truth, error) {
	return GenerateLayout(dir, s, LayoutTorchNPUText)
}

// GenerateLayout is Generate in the given layout: the same device work, and
// the same ground truth, written as torch_npu text, msprof text or torch_npu
// db output.
func GenerateLayout(dir string, s Scenario, lay Layout) (*Truth, error) {
	if _, err := ParseLayout(string(lay)); err != nil {
		return nil, err
	}
	if slices.Contains(MoreLayouts(), lay) {
		return generateConverted(dir, s, lay)
	}
	all := make([]int, s.Ranks)
	for i := range all {
		all[i] = i
	}
	ranks, err := generateRanks(dir, s, all, lay)
	if err != nil {
		return nil, err
	}
	t := &Truth{Scenario: s, Ranks: ranks}
	if s.VLLMLog {
		if err := writeVLLMLog(dir, s, t); err != nil {
			return nil, err
		}
	}
	if t.Experts, err = expertsTruth(dir, s); err != nil {
		return nil, err
	}
	return t, writeTruth(dir, t)
}

// writeTruth writes dir/npuprof_truth.json.
func writeTruth(dir string, t *Truth) error {
	data, err := json.MarshalIndent(t, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, TruthFile), append(data, '\n'), 0o644)
}

// GenerateRank writes only rank's *_ascend_pt folder under dir. The folder
// is byte-identical to the one Generate writes for that rank (the other
// ranks are still simulated for collective timing, but not written).
func GenerateRank(dir string, s Scenario, rank int) (*RankTruth, error) {
	if rank < 0 || rank >= s.Ranks {
		return nil, fmt.Errorf("tracegen: rank %d out of range (Ranks %d)", rank, s.Ranks)
	}
	r, err := generateRanks(dir, s, []int{rank}, LayoutTorchNPUText)
	if err != nil {
		return nil, err
	}
	return &r[0], nil
}

// WriteTrace streams only rank's trace_view.json to w (useful for
// benchmarks that do not want files). The returned truth is complete.
func WriteTrace(w io.Writer, s Scenario, rank int) (*RankTruth, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	if rank < 0 || rank >= s.Ranks {
		return nil, fmt.Errorf("tracegen: rank %d out of range (Ranks %d)", rank, s.Ranks)
	}
	g := newJob(s)
	info := g.rankInfo(rank)
	o := newRankOut(s.forRank(rank), info, w, nil, nil)
	if err := runPasses(s, []*rankOut{o}); err != nil {
		return nil, err
	}
	rt := o.truth()
	return &rt, nil
}

// ReadTruth loads dir/npuprof_truth.json.
func ReadTruth(dir string) (*Truth, error) {
	data, err := os.ReadFile(filepath.Join(dir, TruthFile))
	if err != nil {
		return nil, err
	}
	var t Truth
	if err := json.Unmarshal(data, &t); err != nil {
		return nil, err
	}
	return &t, nil
}

// rankFiles holds the open output files of one rank.
type rankFiles struct {
	trace, kd, cj *os.File
	msprof        *msprofFiles // msprof_text layout
}

// close closes whatever is still open, ignoring errors (the error path).
func (f *rankFiles) close() {
	for _, x := range []*os.File{f.trace, f.kd, f.cj} {
		if x != nil {
			x.Close()
		}
	}
	if f.msprof != nil {
		f.msprof.close()
	}
}

// closeChecked closes the files and reports the first error; a later close
// does nothing.
func (f *rankFiles) closeChecked() error {
	for _, x := range []*os.File{f.trace, f.kd, f.cj} {
		if x != nil {
			if err := x.Close(); err != nil {
				return err
			}
		}
	}
	m := f.msprof
	*f = rankFiles{}
	if m != nil {
		return m.close()
	}
	return nil
}

// generateRanks writes the folders of the listed ranks.
func generateRanks(dir string, s Scenario, ranks []int, lay Layout) ([]RankTruth, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	g := newJob(s)
	outs := make([]*rankOut, 0, len(ranks))
	files := make([]*rankFiles, 0, len(ranks))
	defer func() {
		for _, f := range files {
			f.close()
		}
	}()
	for _, r := range ranks {
		f := &rankFiles{}
		files = append(files, f)
		o, err := openRank(dir, s, g, r, lay, f)
		if err != nil {
			return nil, err
		}
		outs = append(outs, o)
	}
	if err := runPasses(s, outs); err != nil {
		return nil, err
	}
	truth := make([]RankTruth, 0, len(outs))
	for i, o := range outs {
		if err := finishRank(dir, s, g, o, lay, files[i]); err != nil {
			return nil, err
		}
		truth = append(truth, o.truth())
	}
	return truth, nil
}

// openRank creates rank r's folder and streamed output files in layout lay
// (recorded in f, to be closed also on error) and returns its writer.
func openRank(dir string, s Scenario, g *job, r int, lay Layout, f *rankFiles) (*rankOut, error) {
	s = s.forRank(r)
	info := g.rankInfo(r)
	switch lay {
	case LayoutMsprofText:
		info.dir = g.profDir(r)
		o, mf, err := newMsprofOut(dir, s, g, info)
		f.msprof = mf
		return o, err
	case LayoutTorchNPUDB:
		if err := os.MkdirAll(filepath.Join(dir, info.dir, OutputDir), 0o755); err != nil {
			return nil, err
		}
		p, _ := dbPaths(filepath.Join(dir, info.dir), r)
		d, err := newDBOut(p, info)
		if err != nil {
			return nil, err
		}
		o := newRankOut(s, info, io.Discard, nil, nil)
		o.lay, o.db = LayoutTorchNPUDB, d
		return o, nil
	}
	out := filepath.Join(dir, info.dir, OutputDir)
	if err := os.MkdirAll(out, 0o755); err != nil {
		return nil, err
	}
	var err error
	if f.trace, err = os.Create(filepath.Join(out, "trace_view.json")); err != nil {
		return nil, err
	}
	if f.kd, err = os.Create(filepath.Join(out, "kernel_details.csv")); err != nil {
		return nil, err
	}
	if err := writeKernelHeader(f.kd, s.ProfilerSteps); err != nil {
		return nil, err
	}
	var cj io.Writer
	if s.CommJSON {
		if f.cj, err = os.Create(filepath.Join(out, "communication.json")); err != nil {
			return nil, err
		}
		cj = f.cj
	}
	return newRankOut(s, info, f.trace, f.kd, cj), nil
}

// finishRank closes rank o's streamed files and writes the files that need
// the whole capture (profiler info, step trace, statistics, analysis.db).
func finishRank(dir string, s Scenario, g *job, o *rankOut, lay Layout, f *rankFiles) error {
	s = s.forRank(o.info.rank)
	if err := f.closeChecked(); err != nil {
		return err
	}
	rdir := filepath.Join(dir, o.info.dir)
	switch lay {
	case LayoutMsprofText:
		return finishMsprof(dir, s, g, o)
	case LayoutTorchNPUDB:
		if err := o.db.close(o.info, envVariables(s)); err != nil {
			return err
		}
		_, ap := dbPaths(rdir, o.info.rank)
		if err := writeAnalysisDB(ap, s, o.acc); err != nil {
			return err
		}
		return writeProfilerInfo(rdir, s, g, o, "db")
	}
	return writeSmallFiles(rdir, s, g, o)
}

// truth is the rank's ground truth once its passes ran.
func (o *rankOut) truth() RankTruth {
	return RankTruth{Rank: o.info.rank, Dir: o.info.dir, Metrics: o.acc.metrics(), Steps: o.acc.steps, Waits: o.acc.waits}
}

// runPasses drives the three streaming passes over all steps: host (Python)
// events, device events (+ CSV/JSON summaries and truth), then flows. Each
// pass replays the deterministic simulator from the start, so nothing but
// one step is ever held in memory.
func runPasses(s Scenario, outs []*rankOut) error {
	detail := make([]bool, s.Ranks)
	for _, o := range outs {
		detail[o.info.rank] = true
	}
	g := newSim(s, detail)
	for k := 0; k < s.Steps; k++ {
		rk := g.step()
		for _, o := range outs {
			o.writeHost(&rk[o.info.rank].st)
		}
	}
	for _, o := range outs {
		o.writePythonMeta()
		if s.DeviceMetaFirst {
			o.writeDeviceMeta()
		}
	}
	g = newSim(s, detail)
	for k := 0; k < s.Steps; k++ {
		rk := g.step()
		for _, o := range outs {
			if err := o.writeDevice(&rk[o.info.rank].st); err != nil {
				return err
			}
		}
	}
	for _, o := range outs {
		o.finishDevice(!s.DeviceMetaFirst)
	}
	g = newSim(s, detail)
	for k := 0; k < s.Steps; k++ {
		rk := g.step()
		for _, o := range outs {
			o.writeFlows(&rk[o.info.rank].st)
		}
	}
	for _, o := range outs {
		if err := o.closeTrace(); err != nil {
			return err
		}
	}
	return nil
}

// job holds the job-wide layout shared by all ranks.
type job struct {
	s   Scenario
	lay layout
	t0  int64
}

func newJob(s Scenario) *job {
	lay := layout{tp: s.tpSize(), ranks: s.Ranks, pp: s.PP}
	j := &job{s: s, lay: lay, t0: newSim(s, make([]bool, s.Ranks)).t0}
	j.lay.created = (j.t0 - 38_000_000_000) / 1000
	return j
}

// rankInfo builds the identity of rank r: pid, device, folder name
// (`dp0_pp0_tp{r}_dcp0_ep{r}_rank{r}_{pid}_{YYYYmmddHHMMSSmmm}_ascend_pt`)
// and communicators.
func (j *job) rankInfo(r int) *rankInfo {
	s := j.s
	tp := s.tpSize()
	ri := &rankInfo{rank: r, device: r % maxTP}
	ri.pid = 2_900_000 + 211*int64(r) + int64(uint64(s.Seed)%1000)*7
	ep := 0
	if s.ExpertParallel {
		ep = r
	}
	worker := fmt.Sprintf("dp%d_pp0_tp%d_dcp0_ep%d_rank%d", r/tp, r%tp, ep, r)
	t := time.Unix(0, j.t0).UTC()
	stamp := t.Format("20060102150405") + fmt.Sprintf("%03d", t.Nanosecond()/1_000_000)
	ri.dir = fmt.Sprintf("%s_%d_%s_ascend_pt", worker, ri.pid, stamp)
	ri.groups = j.lay.groupsOf(r)
	for i := range ri.groups {
		switch ri.groups[i].Name {
		case "tp":
			ri.coll[grpTP] = &ri.groups[i]
		case "ep":
			ri.coll[grpEP] = &ri.groups[i]
		}
	}
	ri.usedColl[grpTP] = true
	ri.usedColl[grpEP] = s.FlashComm1
	for g := 0; g < numCollGroups; g++ {
		if ri.usedColl[g] {
			ri.collTid[g] = ri.nColl
			ri.nColl++
		}
	}
	return ri
}

// writeSmallFiles writes profiler_info_{rank}.json, profiler_metadata.json
// and step_trace_time.csv of one rank.
func writeSmallFiles(rdir string, s Scenario, j *job, o *rankOut) error {
	f, err := os.Create(filepath.Join(rdir, OutputDir, "step_trace_time.csv"))
	if err != nil {
		return err
	}
	if err := writeStepTrace(f, s, o.acc); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := writeProfilerInfo(rdir, s, j, o, "text"); err != nil {
		return err
	}
	md := obj{{"ENV_VARIABLES", envVariables(s)}, {"parallel_group_info", groupInfo(o.info)}}
	if s.VLLMAscendVersion != "" {
		md = append(md, kv{"vllm_ascend_version", s.VLLMAscendVersion})
	}
	return writeJSON(filepath.Join(rdir, "profiler_metadata.json"), md)
}

// writeProfilerInfo writes profiler_info_{rank}.json.
func writeProfilerInfo(rdir string, s Scenario, j *job, o *rankOut, export string) error {
	ri := o.info
	var schedule any
	if s.ProfilerSteps {
		schedule = obj{{"wait", 1}, {"active", s.Steps}, {"warmup", 1}, {"repeat", 1}, {"skip_first", 0}}
	}
	end := o.lastPS + 25_000_000
	info := obj{
		{"config", obj{
			{"common_config", obj{
				{"activities", []string{"ProfilerActivity.CPU", "ProfilerActivity.NPU"}},
				{"schedule", schedule},
				{"record_shapes", true},
				{"profile_memory", false},
				{"with_stack", false},
				{"with_flops", false},
				{"with_modules", false},
			}},
			{"experimental_config", obj{
				{"_profiler_level", "Level1"},
				{"_aic_metrics", "ACL_AICORE_PIPE_UTILIZATION"},
				{"_l2_cache", false},
				{"_msprof_tx", false},
				{"_data_simplification", true},
				{"record_op_args", false},
				{"_export_type", export},
				{"_op_attr", false},
				{"_gc_detect_threshold", nil},
			}},
		}},
		{"start_info", obj{
			{"syscnt_enable", true},
			{"freq", 100},
			{"start_cnt", 17238197612056 + int64(ri.rank)*1013},
			{"start_monotonic", 172163581670080 + int64(ri.rank)*977},
		}},
		{"end_info", obj{
			{"collectionTimeEnd", end},
			{"MonotonicTimeEnd", end - (j.t0 - 172163581670080) + int64(ri.rank)*977},
		}},
		{"torch_npu_version", cmp.Or(s.TorchNPUVersion, "2.5.1.post1")},
		{"cann_version", cmp.Or(s.CANNVersion, "8.1.RC1")},
		{"rank_id", ri.rank},
	}
	return writeJSON(filepath.Join(rdir, "profiler_info_"+strconv.Itoa(ri.rank)+".json"), info)
}

// groupInfo is the parallel_group_info of a rank.
func groupInfo(ri *rankInfo) obj {
	var pgi obj
	for _, g := range ri.groups {
		pgi = append(pgi, kv{g.Comm, obj{{"group_name", g.Name}, {"group_rank", g.Rank}, {"global_ranks", g.GlobalRanks}}})
	}
	return pgi
}

// envVariables is the ENV_VARIABLES block of the profiler metadata.
func envVariables(s Scenario) obj {
	aiv := ""
	if s.AivComm {
		aiv = "AIV"
	}
	return obj{
		{"ASCEND_GLOBAL_LOG_LEVEL", "3"},
		{"HCCL_RDMA_TC", ""},
		{"HCCL_RDMA_SL", ""},
		{"ACLNN_CACHE_LIMIT", ""},
		{"HOST_CACHE_CAPACITY", ""},
		{"ASCEND_ENHANCE_ENABLE", ""},
		{"PYTORCH_NPU_ALLOC_CONF", "expandable_segments:True"},
		{"ASCEND_LAUNCH_BLOCKING", ""},
		{"HCCL_OP_EXPANSION_MODE", aiv},
		{"HCCL_BUFFSIZE", "512"},
		{"TASK_QUEUE_ENABLE", "1"},
	}
}

// kv / obj give ordered JSON objects (Python dicts keep insertion order).
type kv struct {
	k string
	v any
}

type obj []kv

// MarshalJSON writes the pairs in order.
func (o obj) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, p := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(p.k)
		b.Write(k)
		b.WriteByte(':')
		v, err := json.Marshal(p.v)
		if err != nil {
			return nil, err
		}
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// writeJSON writes v indented by four spaces, like Python's json.dump.
func writeJSON(path string, v any) error {
	data, err := json.MarshalIndent(v, "", "    ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o644)
}

// countWriter counts bytes and discards them.
type countWriter struct{ n int64 }

func (c *countWriter) Write(p []byte) (int, error) {
	c.n += int64(len(p))
	return len(p), nil
}

// SizedScenario returns s with Steps chosen so that one rank's
// trace_view.json is about target bytes (within a few percent), for
// benchmarks (e.g. 50 MB, 200 MB, 1 GB). It measures one- and two-step
// traces of rank 0 and extrapolates; raise Layers for fewer, bigger steps.
func SizedScenario(s Scenario, target int64) (Scenario, error) {
	if target <= 0 {
		return s, fmt.Errorf("tracegen: target size must be positive, got %d", target)
	}
	size := func(steps int) (int64, error) {
		p := s
		p.Steps = steps
		var c countWriter
		_, err := WriteTrace(&c, p, 0)
		return c.n, err
	}
	one, err := size(1)
	if err != nil {
		return s, err
	}
	two, err := size(2)
	if err != nil {
		return s, err
	}
	per := max(two-one, 1)
	s.Steps = int(max((target-(one-per)+per/2)/per, 1))
	return s, nil
}
