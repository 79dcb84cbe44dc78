// Package expertload reads per-expert load inputs into model.ExpertLoads:
// MindIE load-balancing dumps ({prefill|decode}_{rank}.csv with
// model_gen_config.json and {prefill|decode}_global_deployment.json),
// vLLM-Ascend expert maps (the same JSON schema), npuprof's plain
// `layer,expert,tokens` CSV, and the expert-imbalance lines vLLM-Ascend and
// vLLM write to their logs. Profiling data itself holds no per-expert
// counts (docs/formats.md#expert-loads). The formats and the metrics built on them are
// documented in docs/experts.md.
package expertload

import (
	"bufio"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/npuprof/npuprof/internal/errkind"
	"github.com/npuprof/npuprof/internal/infile"
	"github.com/npuprof/npuprof/internal/parser/model"
)

// Options tune Load.
type Options struct {
	// Stage picks "decode" or "prefill" dumps when a folder holds both
	// ("" prefers decode).
	Stage string
}

// expected is the sentence naming what Load accepts.
const expected = "expected MindIE dumps ({prefill|decode}_{rank}.csv, model_gen_config.json, " +
	"{prefill|decode}_global_deployment.json), a layer,expert,tokens CSV, or a vLLM-Ascend/vLLM log with expert-imbalance lines"

// Load reads the expert input at path: a folder (every recognised file in
// it, not recursive) or one file (a dump, a layer,expert,tokens CSV, or a
// log). A deployment JSON alone is refused: it is a placement, not a load.
func Load(path string, opts Options) (*model.ExpertLoads, error) {
	st, err := os.Stat(path)
	if err != nil {
		if os.IsNotExist(err) {
			return nil, errkind.Errorf(errkind.Input, "%s: no such file or directory", path)
		}
		return nil, errkind.Errorf(errkind.Input, "%s: %w", path, err)
	}
	if opts.Stage != "" && opts.Stage != "decode" && opts.Stage != "prefill" {
		return nil, errkind.Errorf(errkind.Input, "stage %q: expected decode or prefill", opts.Stage)
	}
	var x *model.ExpertLoads
	if st.IsDir() {
		x, err = loadDir(path, opts, true)
	} else {
		x, err = loadFile(path, opts)
	}
	if err != nil {
		return nil, err
	}
	x.Source = path
	if err := x.Validate(); err != nil {
		return nil, fmt.Errorf("%s: internal error: %w", path, err)
	}
	return x, nil
}

// ForProfile returns the expert input of a profile: the one named by
// explicit (an error there is for the user: exit code 2), else one found
// inside the profile folder by Find (a problem there only produces a note,
// the profile is still analyzed). note says what was read or why not; x is
// nil when there is no input.
func ForProfile(profile, explicit string, opts Options) (x *model.ExpertLoads, note string, err error) {
	if explicit != "" {
		x, err = Load(explicit, opts)
		if err != nil {
			return nil, "", fmt.Errorf("--experts %w", err)
		}
		return x, "", nil
	}
	if st, err := os.Stat(profile); err != nil || !st.IsDir() {
		return nil, "", nil
	}
	dir := Find(profile)
	if dir == "" {
		return nil, "", nil
	}
	x, err = Load(dir, opts)
	if err != nil {
		if errkind.Of(err) == errkind.Usage {
			// a file that must not be opened (a FIFO, a device, a link
			// leading out of the profile) is the user's to remove
			return nil, "", err
		}
		return nil, "expert loads found in the profile folder could not be read: " + err.Error(), nil
	}
	return x, "expert loads read from " + dir, nil
}

// Find looks for expert inputs placed inside a profile folder: in dir
// itself or one folder below it (rank folders and ASCEND_PROFILER_OUTPUT
// are skipped). It returns the folder holding MindIE dumps or a
// layer,expert,tokens CSV, or "" when there is none. Logs are never
// auto-detected.
func Find(dir string) string {
	if hasLoadFiles(dir) {
		return dir
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return ""
	}
	for _, e := range ents {
		n := e.Name()
		if !e.IsDir() || strings.HasSuffix(n, "_ascend_pt") || n == "ASCEND_PROFILER_OUTPUT" || strings.HasPrefix(n, "PROF_") {
			continue
		}
		if p := filepath.Join(dir, n); hasLoadFiles(p) {
			return p
		}
	}
	return ""
}

// hasLoadFiles reports whether dir holds a dump or a load CSV.
func hasLoadFiles(dir string) bool {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	for _, e := range ents {
		if e.IsDir() {
			continue
		}
		n := e.Name()
		if _, _, ok := DumpName(n); ok {
			return true
		}
		if strings.HasSuffix(strings.ToLower(n), ".csv") {
			p := filepath.Join(dir, n)
			// a CSV that may not be opened (a FIFO, a device) is found,
			// so that Load refuses it by name
			if isLoadCSV(p) || notRegular(p) {
				return true
			}
		}
	}
	return false
}

// isLoadCSV peeks at the first line of a file.
func isLoadCSV(p string) bool {
	f, err := infile.Open(p, infile.ExpertLoads, infile.Opts{Root: filepath.Dir(p)})
	if err != nil {
		return false
	}
	defer f.Close()
	line, err := readLine(bufio.NewReaderSize(io.LimitReader(f, 4096), 4096))
	if err != nil && err != io.EOF {
		return false
	}
	return IsLoadCSVHeader(line)
}

// loadFile reads one named file.
func loadFile(path string, opts Options) (*model.ExpertLoads, error) {
	name := filepath.Base(path)
	if stage, _, ok := DumpName(name); ok {
		if opts.Stage != "" && opts.Stage != stage {
			return nil, errkind.Errorf(errkind.Input, "%s: a %s dump, but stage %s was asked for", path, stage, opts.Stage)
		}
		return loadDumps(filepath.Dir(path), stage, []string{name})
	}
	if _, ok := DeploymentStage(name); ok || name == "model_gen_config.json" {
		return nil, errkind.Errorf(errkind.Input, "%s: a placement/config file holds no loads; give the folder with the {prefill|decode}_{rank}.csv dumps", path)
	}
	if strings.HasSuffix(strings.ToLower(name), ".csv") {
		x, err := readFileWith(path, "", func(r io.Reader) (*model.ExpertLoads, error) { return ReadLoadCSV(r, path) })
		if err != nil {
			return nil, errkind.Errorf(errkind.Input, "%w; %s", err, expected)
		}
		x.Files = []string{path}
		if err := csvConfig(x, filepath.Dir(path)); err != nil {
			return nil, err
		}
		return x, nil
	}
	if strings.HasSuffix(strings.ToLower(name), ".json") {
		return nil, errkind.Errorf(errkind.Input, "%s: %s", path, expected)
	}
	x := &model.ExpertLoads{Format: model.ExpertFormatLog}
	if err := readLogFile(x, path, ""); err != nil {
		return nil, errkind.Wrap(errkind.Input, err)
	}
	if len(x.Logs) == 0 {
		return nil, errkind.Errorf(errkind.Input, "%s: no expert-imbalance log lines found; %s", path, expected)
	}
	return x, nil
}

// readFileWith reads path with fn; root is the folder it was found in
// ("" for a file named by --experts), which its links must not leave.
func readFileWith(path, root string, fn func(io.Reader) (*model.ExpertLoads, error)) (*model.ExpertLoads, error) {
	f, err := infile.Open(path, infile.ExpertLoads, infile.Opts{Root: root})
	if err != nil {
		return nil, err
	}
	x, err := fn(f)
	if cerr := f.Close(); err == nil && cerr != nil {
		return nil, cerr
	}
	return x, err
}

func readLogFile(x *model.ExpertLoads, path, root string) error {
	f, err := infile.Open(path, infile.ServerLog, infile.Opts{Root: root})
	if err != nil {
		return err
	}
	st, err := ReadLog(f, path, func(e model.ExpertLog) { x.Logs = append(x.Logs, e) })
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	if st.NonFinite > 0 {
		x.Notes = append(x.Notes, fmt.Sprintf("%s: %d expert-imbalance line(s) with nan/inf values ignored", path, st.NonFinite))
	}
	x.Files = append(x.Files, path)
	return nil
}

// isLogName reports whether a folder entry is read as a log.
func isLogName(n string) bool {
	l := strings.ToLower(n)
	return strings.HasSuffix(l, ".log") || strings.HasSuffix(l, ".txt") || strings.Contains(l, ".log.")
}

// loadDir reads a folder: dumps of one stage or one load CSV, plus logs.
func loadDir(dir string, opts Options, logs bool) (*model.ExpertLoads, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, errkind.Errorf(errkind.Input, "%s: %w", dir, err)
	}
	dumps := map[string][]string{}
	var csvs, logFiles []string
	for _, e := range ents {
		if e.IsDir() {
			continue
		}
		n := e.Name()
		if reDump().MatchString(n) || strings.HasSuffix(strings.ToLower(n), ".csv") || (logs && isLogName(n)) {
			// a FIFO, device or socket named like a load file is refused
			// before anything is opened; so is a link leading outside dir
			if err := infile.Check(filepath.Join(dir, n), infile.Opts{Root: dir}); err != nil {
				return nil, err
			}
		}
		switch {
		case reDump().MatchString(n):
			stage, _, _ := DumpName(n)
			dumps[stage] = append(dumps[stage], n)
		case strings.HasSuffix(strings.ToLower(n), ".csv"):
			if isLoadCSV(filepath.Join(dir, n)) {
				csvs = append(csvs, n)
			}
		case logs && isLogName(n):
			logFiles = append(logFiles, n)
		}
	}
	var x *model.ExpertLoads
	switch {
	case len(dumps) > 0:
		stage := opts.Stage
		if stage == "" {
			stage = "decode"
			if len(dumps["decode"]) == 0 {
				stage = "prefill"
			}
		}
		if len(dumps[stage]) == 0 {
			return nil, errkind.Errorf(errkind.Input, "%s: no %s_{rank}.csv dumps (found %s)", dir, stage, strings.Join(slices.Sorted(maps.Keys(dumps)), ", "))
		}
		x, err = loadDumps(dir, stage, dumps[stage])
		if err != nil {
			return nil, err
		}
		for s := range dumps {
			if s != stage {
				x.Notes = append(x.Notes, fmt.Sprintf("%s: %s dumps also present; read %s (choose with --stage)", dir, s, stage))
			}
		}
		if len(csvs) > 0 {
			x.Notes = append(x.Notes, fmt.Sprintf("%s: ignored %s: read the MindIE dumps", dir, strings.Join(csvs, ", ")))
		}
	case len(csvs) == 1:
		p := filepath.Join(dir, csvs[0])
		x, err = readFileWith(p, dir, func(r io.Reader) (*model.ExpertLoads, error) { return ReadLoadCSV(r, p) })
		if err != nil {
			return nil, errkind.Wrap(errkind.Input, err)
		}
		x.Files = []string{p}
		if err := csvConfig(x, dir); err != nil {
			return nil, err
		}
	case len(csvs) > 1:
		return nil, errkind.Errorf(errkind.Input, "%s: several layer,expert,tokens CSVs (%s): name one with --experts FILE", dir, strings.Join(csvs, ", "))
	default:
		x = &model.ExpertLoads{Format: model.ExpertFormatLog}
	}
	sort.Strings(logFiles)
	for _, n := range logFiles {
		if err := readLogFile(x, filepath.Join(dir, n), dir); err != nil {
			x.Notes = append(x.Notes, err.Error())
		}
	}
	if !x.HasLoads() && len(x.Logs) == 0 {
		return nil, errkind.Errorf(errkind.Input, "%s: no expert load files; %s", dir, expected)
	}
	return x, nil
}

// loadDumps reads the named dumps of one stage in dir with the folder's
// model_gen_config.json and {stage}_global_deployment.json when present.
func loadDumps(dir, stage string, names []string) (*model.ExpertLoads, error) {
	x := &model.ExpertLoads{Format: model.ExpertFormatMindIEDump, Stage: stage}
	dep, err := readSidecars(x, dir, stage)
	if err != nil {
		return nil, err
	}
	keep := 0
	switch {
	case x.Config != nil && x.Config.NumMoELayers > 0:
		keep = x.Config.NumMoELayers
	case dep != nil:
		keep = len(dep.Layers)
	default:
		x.Notes = append(x.Notes, fmt.Sprintf("%s: no model_gen_config.json: every dump line is read as one MoE layer (appended dumps cannot be told apart)", dir))
	}
	ds, err := readDumps(x, dir, names, keep)
	if err != nil {
		return nil, err
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i].rank < ds[j].rank })
	layers, slots := len(ds[0].rows), len(ds[0].rows[0])
	for _, d := range ds[1:] {
		if len(d.rows) != layers || len(d.rows[0]) != slots {
			return nil, errkind.Errorf(errkind.Input, "%s: rank %d has %d layers x %d slots, rank %d has %d x %d: dumps of different runs?",
				dir, ds[0].rank, layers, slots, d.rank, len(d.rows), len(d.rows[0]))
		}
	}
	for _, d := range ds {
		x.RankIDs = append(x.RankIDs, d.rank)
	}
	useDep := depFits(x, dep, ds, stage, layers, slots)
	if useDep {
		placeByDeployment(x, dep)
	} else {
		placeBySlots(x, ds[len(ds)-1].rank, layers, slots)
	}
	if layers*x.NumExperts > maxCells {
		return nil, errkind.Errorf(errkind.Input, "%s: %d layers x %d experts is more than npuprof holds", dir, layers, x.NumExperts)
	}
	sumLayers(x, ds, dep, useDep)
	return x, nil
}

// openRead opens p and calls read on it; a failure is an input error.
func openRead(p string, read func(f io.Reader) error) error {
	f, err := infile.Open(p, infile.ExpertLoads, infile.Opts{Root: filepath.Dir(p)})
	if err != nil {
		if errkind.Of(err) != errkind.Unknown {
			return err
		}
		return errkind.Errorf(errkind.Input, "%s: %w", p, err)
	}
	err = read(f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return errkind.Wrap(errkind.Input, err)
	}
	return nil
}

// csvConfig reads the model_gen_config.json beside a layer,expert,tokens
// CSV, when there is one: its num_of_experts is the model's expert count,
// and the experts past the CSV's highest id, which have no row, have an
// unknown load (not 0 tokens).
func csvConfig(x *model.ExpertLoads, dir string) error {
	p := filepath.Join(dir, "model_gen_config.json")
	if !fileExists(p) {
		return nil
	}
	if err := openRead(p, func(f io.Reader) (err error) {
		x.Config, err = ReadGenConfig(f, p)
		return err
	}); err != nil {
		return err
	}
	x.Files = append(x.Files, p)
	n, have := x.Config.NumExperts, x.NumExperts
	switch {
	case n > have:
		if len(x.Layers)*n > maxCells {
			return errkind.Errorf(errkind.Input, "%s: %d layers x %d experts is more than npuprof holds", p, len(x.Layers), n)
		}
		if x.Observed == nil {
			x.Observed = make([]bool, have)
			for e := range x.Observed {
				x.Observed[e] = true
			}
		}
		x.Observed = append(x.Observed, make([]bool, n-have)...)
		for i := range x.Layers {
			x.Layers[i].Tokens = append(x.Layers[i].Tokens, make([]int64, n-have)...)
		}
		x.NumExperts = n
		x.Notes = append(x.Notes, fmt.Sprintf("%s: num_of_experts is %d, the CSV's expert ids stop at %d: expert(s) %d..%d have no row, their load is unknown", p, n, have-1, have, n-1))
	case n > 0 && n < have:
		x.Notes = append(x.Notes, fmt.Sprintf("%s: num_of_experts is %d, but the CSV has expert ids up to %d: read %d experts", p, n, have-1, have))
	}
	return nil
}

// readSidecars reads the folder's model_gen_config.json (into x.Config)
// and the stage's global deployment (returned), when present.
func readSidecars(x *model.ExpertLoads, dir, stage string) (dep *model.Deployment, err error) {
	if p := filepath.Join(dir, "model_gen_config.json"); fileExists(p) {
		if err := openRead(p, func(f io.Reader) (err error) {
			x.Config, err = ReadGenConfig(f, p)
			return err
		}); err != nil {
			return nil, err
		}
		x.Files = append(x.Files, p)
	}
	if p := filepath.Join(dir, stage+"_global_deployment.json"); fileExists(p) {
		var notes []string
		if err := openRead(p, func(f io.Reader) (err error) {
			dep, notes, err = ReadDeployment(f, p)
			return err
		}); err != nil {
			return nil, err
		}
		x.Notes = append(x.Notes, notes...)
		x.Files = append(x.Files, p)
	}
	return dep, nil
}

// rankDump is one rank's dump: a row of slot loads per layer.
type rankDump struct {
	rank int
	rows [][]int64
}

// readDumps reads the named dumps, keeping the last keep lines of each
// (0: all), and checks the total token count.
func readDumps(x *model.ExpertLoads, dir string, names []string, keep int) ([]rankDump, error) {
	var ds []rankDump
	var droppedIn []string
	droppedLines := 0
	for _, n := range names {
		_, rank, _ := DumpName(n)
		p := filepath.Join(dir, n)
		var rows [][]int64
		var dropped int
		if err := openRead(p, func(f io.Reader) (err error) {
			rows, dropped, err = ReadDump(f, p, keep)
			return err
		}); err != nil {
			return nil, err
		}
		if dropped > 0 {
			droppedIn = append(droppedIn, n)
			droppedLines += dropped
		}
		if keep > 0 && len(rows) < keep {
			x.Notes = append(x.Notes, fmt.Sprintf("%s: %d lines, fewer than the %d MoE layers expected; read %d layers", p, len(rows), keep, len(rows)))
		}
		ds = append(ds, rankDump{rank, rows})
		x.Files = append(x.Files, p)
	}
	if len(droppedIn) > 0 {
		sort.Strings(droppedIn)
		list := strings.Join(droppedIn[:min(4, len(droppedIn))], ", ")
		if len(droppedIn) > 4 {
			list += ", …"
		}
		x.Notes = append(x.Notes, fmt.Sprintf("%s: appended dumps in %d file(s) (%s): kept the last %d lines of each, dropped %d earlier line(s)",
			dir, len(droppedIn), list, keep, droppedLines))
	}
	var total int64
	for _, d := range ds {
		for _, row := range d.rows {
			for _, v := range row {
				if total += v; total > MaxTokens {
					return nil, errkind.Errorf(errkind.Input, "%s: %w", dir, errTooManyTokens)
				}
			}
		}
	}
	return ds, nil
}

// depFits says whether the deployment (nil: none) maps the dumps' slots
// to experts; when it does not, a note says why and expert ids are the
// slot positions (rank*slots + slot), as MindStudio Insight does for
// dumps without a deployment.
func depFits(x *model.ExpertLoads, dep *model.Deployment, ds []rankDump, stage string, layers, slots int) bool {
	if dep == nil {
		x.Notes = append(x.Notes, fmt.Sprintf("no %s_global_deployment.json: expert ids are slot positions (rank x %d + slot)", stage, slots))
		return false
	}
	maxRank := ds[len(ds)-1].rank
	why := ""
	switch {
	case len(dep.Layers) != layers:
		why = fmt.Sprintf("it has %d layers, the dumps %d", len(dep.Layers), layers)
	case dep.Ranks() <= maxRank:
		why = fmt.Sprintf("it has %d devices, the dumps go up to rank %d", dep.Ranks(), maxRank)
	default:
		for _, l := range dep.Layers {
			for _, d := range ds {
				if len(l.Devices[d.rank]) != slots {
					why = fmt.Sprintf("layer %d device %d has %d slots, the dumps %d", l.ID, d.rank, len(l.Devices[d.rank]), slots)
					break
				}
			}
			if why != "" {
				break
			}
		}
	}
	if why != "" {
		x.Notes = append(x.Notes, fmt.Sprintf("%s_global_deployment.json does not match the dumps (%s): expert ids are slot positions (rank x %d + slot)", stage, why, slots))
		return false
	}
	return true
}

// placeByDeployment places the experts as the deployment says.
func placeByDeployment(x *model.ExpertLoads, dep *model.Deployment) {
	x.Placement = dep
	maxID := -1
	for _, l := range dep.Layers {
		for _, dev := range l.Devices {
			for _, e := range dev {
				maxID = max(maxID, e)
			}
		}
	}
	x.NumExperts = maxID + 1
	if x.Config != nil && x.Config.NumExperts > x.NumExperts {
		x.NumExperts = x.Config.NumExperts
	}
}

// placeBySlots makes each slot its own expert (rank*slots + slot).
func placeBySlots(x *model.ExpertLoads, maxRank, layers, slots int) {
	x.NumExperts = (maxRank + 1) * slots
	x.Placement = &model.Deployment{}
	x.PlacementFromSlots = true
	for l := 0; l < layers; l++ {
		dl := model.DeploymentLayer{ID: l, Devices: make([][]int, maxRank+1)}
		for r := range dl.Devices {
			for s := 0; s < slots; s++ {
				dl.Devices[r] = append(dl.Devices[r], r*slots+s)
			}
		}
		x.Placement.Layers = append(x.Placement.Layers, dl)
	}
	if x.Config != nil && x.Config.NumExperts > 0 && x.Config.NumExperts != x.NumExperts {
		x.Notes = append(x.Notes, fmt.Sprintf("model_gen_config.json says %d experts; the dumps cover %d slots (ranks %d..%d x %d slots)",
			x.Config.NumExperts, x.NumExperts, 0, maxRank, slots))
	}
}

// sumLayers adds up each layer's tokens per expert and per rank. An
// expert counts as observed when a dumped rank hosts it in every layer (a
// placement may move it between layers).
func sumLayers(x *model.ExpertLoads, ds []rankDump, dep *model.Deployment, useDep bool) {
	layers := len(ds[0].rows)
	seenIn := make([]int, x.NumExperts)
	for l := 0; l < layers; l++ {
		hosted := make([]bool, x.NumExperts)
		el := model.ExpertLayer{ID: l, Tokens: make([]int64, x.NumExperts), RankTokens: make([]int64, len(ds))}
		if useDep {
			el.ID = dep.Layers[l].ID
		}
		for i, d := range ds {
			devs := x.Placement.Layers[l].Devices[d.rank]
			for s, v := range d.rows[l] {
				e := devs[s]
				el.Tokens[e] += v
				el.RankTokens[i] += v
				hosted[e] = true
			}
		}
		for e, h := range hosted {
			if h {
				seenIn[e]++
			}
		}
		x.Layers = append(x.Layers, el)
	}
	observed := make([]bool, x.NumExperts)
	missing := 0
	for e, n := range seenIn {
		observed[e] = n == layers
		if !observed[e] {
			missing++
		}
	}
	if missing > 0 {
		x.Observed = observed
		x.Notes = append(x.Notes, fmt.Sprintf("%d of %d experts are on ranks without a dump: their load is unknown", missing, x.NumExperts))
	}
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir()
}

// notRegular: p exists and is neither a regular file nor a folder.
func notRegular(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.Mode().IsRegular() && !st.IsDir()
}
