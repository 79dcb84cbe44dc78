// Package parser finds the ranks under a path and reads one rank into the
// normalized model (package model): Detect maps a path to rank sources or
// says what it found and what it expected; ParseRank reads one source.
// Gathering the ranks (reading them at once, numbering, deduplicating) is
// package internal/pipeline/gather's.
package parser

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/npuprof/npuprof/internal/errkind"
	"github.com/npuprof/npuprof/internal/lazyre"
	"github.com/npuprof/npuprof/internal/parser/model"
	"github.com/npuprof/npuprof/internal/parser/parquetio"
)

// Source is one rank's input, as found by Detect.
type Source struct {
	// Root is the rank's folder (*_ascend_pt, or PROF_* for msprof) or, for
	// a bare file or a bare ASCEND_PROFILER_OUTPUT folder, that path.
	Root   string
	Format model.Format
	// Output is the folder holding the torch_npu export
	// (ASCEND_PROFILER_OUTPUT), "" when the source is a single file or an
	// msprof folder.
	Output string
	// TraceFile is set when the user named a trace file directly (Root is
	// then the rank folder around it, when it sits in one, for its
	// profiler_info and profiler_metadata; else the file).
	TraceFile string
	// DB is the profiler database (ascend_pytorch_profiler_{rank}.db or
	// msprof_{ts}.db) of the DB formats.
	DB string
	// Prof is the PROF_* folder of the msprof formats; it is Root itself
	// unless the PROF_* folder sits inside a *_ascend_pt folder whose
	// ASCEND_PROFILER_OUTPUT is missing (torch_npu's parsing failed or was
	// skipped), in which case Root is the *_ascend_pt folder.
	Prof string
	// Parquet is the folder of an npuprof Parquet export the rank is read
	// back from (RankHint is then its rank), "" otherwise.
	Parquet string
	// RankHint is the rank from the file or folder name, -1 when unknown.
	RankHint int
	// Timestamp is the folder-name timestamp used to pick the newest of
	// duplicate ranks.
	Timestamp string
	// TraceParts is how many goroutines may read the rank's (plain,
	// uncompressed) trace file at once (traceview.ReadFile); 0 or 1 reads
	// it sequentially. internal/pipeline/gather sets it from the CPUs left over by
	// the ranks read in parallel.
	TraceParts int
	// SkipCommunication leaves communication.json (an export's comm_ops)
	// unread, Rank.Communication empty, unless the rank needs it
	// (model.Rank.NeedsCommOps): no analysis pass reads it, only `npuprof
	// export` keeps it.
	SkipCommunication bool
	// SkipFramework leaves an npuprof Parquet export's framework_ops and
	// links unread (Rank.FrameworkOps and Rank.Links empty); the ledger and
	// workload passes read what model.Rank.ReduceFramework keeps of them,
	// so analyze reads them. Trace files are read whole either way (their
	// flows are joined through the framework ops).
	SkipFramework bool
	// ReduceFramework has a trace's framework ops and links reduced to
	// what the analysis reads of them as soon as the trace is read
	// (model.Rank.ReduceFrameworkEarly), so they are not held while the
	// summaries are: for analyze, which exports nothing.
	ReduceFramework bool
	// BytesRead, when set, counts the bytes read from the rank's text and
	// trace files while it is read (a compressed file counts what is read
	// from disk; databases and Parquet exports are not counted).
	BytesRead *atomic.Int64
	// Unparsed: a *_ascend_pt folder torch_npu collected but never
	// parsed (FRAMEWORK/ and raw PROF_*/device_*/data only): reading it
	// is a usage error that says how to parse it.
	Unparsed bool
}

const (
	profilerOutput = "ASCEND_PROFILER_OUTPUT"
	msprofOutput   = "mindstudio_profiler_output"
)

var (
	reWorkerRank = lazyre.New(`(?:^|_)rank(\d+)(?:_|$)`)
	// device_{id}
	reDeviceDir = lazyre.New(`^device_(\d{1,2})$`)
)

// The names every detection reads are matched by hand (compiling their
// regexps cost ~0.2 M instructions a run); TestNameMatchersAreRegexps
// holds each to the regexp in its comment.
var (
	// `^profiler_info_(\d+)\.json$`
	nameProfilerInfo nameMatcher = func(s string) (string, bool) {
		rest, ok1 := strings.CutPrefix(s, "profiler_info_")
		d, ok2 := strings.CutSuffix(rest, ".json")
		return d, ok1 && ok2 && allDigits(d)
	}
	// `_ascend_(pt|ms)$`: *_ascend_pt (torch_npu) and *_ascend_ms
	// (MindSpore 2.3+: the same layout, {worker}_{pid}_{ts}_ascend_{framework})
	nameAscendPT nameMatcher = func(s string) (string, bool) {
		if strings.HasSuffix(s, "_ascend_pt") {
			return "pt", true
		}
		return "ms", strings.HasSuffix(s, "_ascend_ms")
	}
	// `_ascend_ms$`
	nameAscendMS nameMatcher = func(s string) (string, bool) { return "", strings.HasSuffix(s, "_ascend_ms") }
	// `^PROF_\d+_(\d+)_[0-9a-zA-Z]+$`: PROF_{n}_{YYYYmmddHHMMSSfff}_{random}
	// (docs/formats.md#folder-names)
	nameProfDir nameMatcher = func(s string) (string, bool) {
		p := strings.Split(s, "_")
		return p[min(2, len(p)-1)], len(p) == 4 && p[0] == "PROF" && allDigits(p[1]) && allDigits(p[2]) && alnum(p[3])
	}
	// `^ascend_pytorch_profiler(?:_(\d+))?\.db$`: ascend_pytorch_profiler_{rank}.db
	// (no _{rank} in single-card runs)
	nameTorchDB nameMatcher = func(s string) (string, bool) {
		rest, ok1 := strings.CutPrefix(s, "ascend_pytorch_profiler")
		mid, ok2 := strings.CutSuffix(rest, ".db")
		if !ok1 || !ok2 {
			return "", false
		}
		if mid == "" {
			return "", true
		}
		d, ok := strings.CutPrefix(mid, "_")
		return d, ok && allDigits(d)
	}
	// `^msprof_\d+\.db$`: msprof_{ts}.db
	nameMsprofDB nameMatcher = func(s string) (string, bool) {
		rest, ok1 := strings.CutPrefix(s, "msprof_")
		d, ok2 := strings.CutSuffix(rest, ".db")
		return d, ok1 && ok2 && allDigits(d)
	}
)

// nameMatcher matches a name, giving the submatch of its one group; its
// methods are the regexp's that the detection uses.
type nameMatcher func(s string) (sub string, ok bool)

// MatchString reports whether s matches.
func (m nameMatcher) MatchString(s string) bool {
	_, ok := m(s)
	return ok
}

// FindStringSubmatch is s and its group's submatch, or nil.
func (m nameMatcher) FindStringSubmatch(s string) []string {
	sub, ok := m(s)
	if !ok {
		return nil
	}
	return []string{s, sub}
}

// alnum: s is one or more ASCII letters or digits ([0-9a-zA-Z]+).
func alnum(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i] | 0x20; (c < 'a' || c > 'z') && (s[i] < '0' || s[i] > '9') {
			return false
		}
	}
	return s != ""
}

// textFiles are the files that make a folder a torch_npu text export.
var textFiles = []string{"trace_view.json", "kernel_details.csv", "step_trace_time.csv"}

// Detect maps path to the rank sources it holds: a trace file or database,
// an ASCEND_PROFILER_OUTPUT folder, a *_ascend_pt folder (text or db
// export, or with only a nested PROF_* folder), an msprof PROF_* folder
// (text or db export), or a cluster folder holding any mix of those, up to
// two levels down.
func Detect(path string) ([]Source, error) {
	if path == "" {
		// an unset shell variable ("npuprof analyze $DIR"): os.Stat would
		// say ": no such file or directory"
		return nil, errkind.New(errkind.Usage, "the profile path is empty: expected a trace file, a profiler database, a rank folder or a folder of ranks")
	}
	st, err := os.Stat(path)
	if err != nil {
		if os.IsNotExist(err) {
			return nil, errkind.Errorf(errkind.Usage, "%s: no such file or directory", path)
		}
		// the error names the path already ("stat PATH: not a directory")
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return nil, errkind.Errorf(errkind.Usage, "%s: %v", path, err)
	}
	// A symlink under another name ("out0" -> rank0_ascend_pt/
	// ASCEND_PROFILER_OUTPUT, "t.json" -> .../trace_view.json): names
	// decide what a folder or file is and where its rank folder is, so
	// detection follows the link to what it names.
	if lst, err := os.Lstat(path); err == nil && lst.Mode()&os.ModeSymlink != 0 {
		if real, err := filepath.EvalSymlinks(path); err == nil && filepath.Base(real) != dirName(path) {
			path = real
		}
	}
	if !st.IsDir() {
		if err := checkFile(path); err != nil {
			return nil, err
		}
		srcs, err := detectFile(path)
		if err == nil {
			err = checkSources(srcs)
		}
		return srcs, err
	}
	if err := checkDir(path); err != nil {
		return nil, err
	}
	if parquetio.IsExport(path) {
		return detectExport(path)
	}
	if src, ok := asRank(path); ok {
		if err := checkSources([]Source{src}); err != nil {
			return nil, err
		}
		return []Source{src}, nil
	}
	// A cluster: rank folders below path (two levels, as gathered from
	// several hosts).
	var found []Source
	var denied error
	walkRanks(path, 0, &found, &denied)
	if denied != nil {
		return nil, denied
	}
	if len(found) == 0 {
		return nil, errkind.New(errkind.Usage, noProfileMessage(path))
	}
	if err := checkSources(found); err != nil {
		return nil, err
	}
	// natural order: ranks without a rank in their files are numbered in
	// this order, and test_rank_2 comes before test_rank_10
	sort.SliceStable(found, func(i, j int) bool { return naturalLess(found[i].Root, found[j].Root) })
	return found, nil
}

// naturalLess orders strings with their digit runs compared as numbers
// ("rank_2" < "rank_10"), ties broken by plain order.
func naturalLess(a, b string) bool {
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		ca, cb := a[i], b[j]
		if isDigit(ca) && isDigit(cb) {
			si, sj := i, j
			for i < len(a) && isDigit(a[i]) {
				i++
			}
			for j < len(b) && isDigit(b[j]) {
				j++
			}
			na := strings.TrimLeft(a[si:i], "0")
			nb := strings.TrimLeft(b[sj:j], "0")
			if len(na) != len(nb) {
				return len(na) < len(nb)
			}
			if na != nb {
				return na < nb
			}
			continue
		}
		if ca != cb {
			return ca < cb
		}
		i++
		j++
	}
	if len(a)-i != len(b)-j {
		return len(a)-i < len(b)-j
	}
	return a < b
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// dirName is the name of a folder as its parent lists it, also for "."
// and ".." (filepath.Base would return those): folder names tell what a
// folder is (ASCEND_PROFILER_OUTPUT, *_ascend_pt, PROF_*).
func dirName(dir string) string {
	if abs, err := filepath.Abs(dir); err == nil {
		return filepath.Base(abs)
	}
	return filepath.Base(dir)
}

// parentDir is the folder above dir, named so that it works for relative
// paths too ("x" for "x/ASCEND_PROFILER_OUTPUT", ".." for ".").
func parentDir(dir string) string { return filepath.Join(dir, "..") }

// reCompanion matches the files of a rank folder that are read with its
// trace, never alone.
var reCompanion = lazyre.New(`^(profiler_info(_\d+)?\.json|profiler_metadata\.json|communication(_matrix)?\.json|kernel_details\.csv|step_trace_time\.csv|operator_details\.csv|op_statistic\.csv|api_statistic\.csv|analysis\.db)(\.gz|\.zst|\.xz)?$`)

// detectFile recognises a single trace file or database: the first row of
// fileFormats that matches its name makes its source.
func detectFile(path string) ([]Source, error) {
	base := filepath.Base(path)
	if reCompanion().MatchString(base) {
		dir := filepath.Dir(path)
		if dirName(dir) == profilerOutput {
			dir = parentDir(dir)
		}
		return nil, errkind.Errorf(errkind.Usage, "%s: read with the rank's other files, not alone: give the rank folder (npuprof analyze %s), or its trace_view.json or ascend_pytorch_profiler_*.db", path, dir)
	}
	for _, f := range fileFormats {
		if f.match(base) {
			return []Source{f.source(path, base)}, nil
		}
	}
	return nil, errkind.Errorf(errkind.Usage, "%s: not a profile: expected a trace_view.json or msprof_*.json file, an ascend_pytorch_profiler_*.db or msprof_*.db database, an %s folder, a *_ascend_pt or PROF_* folder, or a folder of those", path, profilerOutput)
}

// fileFormats are the files Detect reads when named alone, in the order
// their names are tried: match takes the file's name, source makes the
// rank it is (ParseRank reads it by its row of formats).
var fileFormats = []struct {
	match  func(base string) bool
	source func(path, base string) Source
}{
	{nameTorchDB.MatchString, torchDBFile},
	{nameMsprofDB.MatchString, func(path, _ string) Source {
		src := Source{Root: path, Format: model.FormatMsprofDB, DB: path, RankHint: -1}
		// msprof_{ts}.db sits in the PROF_* folder, whose device info
		// says which rank it is
		msprofRank(&src, filepath.Dir(path))
		return src
	}},
	{func(base string) bool { return strings.HasSuffix(base, ".db") }, func(path, _ string) Source {
		return Source{Root: path, Format: model.FormatTorchNPUDB, DB: path, RankHint: -1}
	}},
	{isChromeTrace, func(path, _ string) Source { return chromeSource(path) }},
	{func(base string) bool { return strings.HasPrefix(base, "msprof") && isJSON(base) }, func(path, _ string) Source {
		src := Source{Root: path, Format: model.FormatMsprofText, TraceFile: path, RankHint: -1}
		// only the named file is measured, but the PROF_* folder around
		// its mindstudio_profiler_output still says which rank it is
		if out := filepath.Dir(path); dirName(out) == msprofOutput {
			msprofRank(&src, parentDir(out))
		}
		return src
	}},
	{isJSON, func(path, _ string) Source {
		src := Source{Root: path, Format: model.FormatTorchNPUText, TraceFile: path, RankHint: -1}
		// a trace in a rank folder's ASCEND_PROFILER_OUTPUT: only the named
		// file is measured, but the rank folder's profiler_info and
		// profiler_metadata still say which rank it is and its groups
		if out := filepath.Dir(path); dirName(out) == profilerOutput {
			if root := parentDir(out); hasProfilerInfo(root) || nameAscendPT.MatchString(dirName(root)) {
				src.Root, src.RankHint, src.Timestamp = root, rankHint(root), dirTimestamp(dirName(root))
			}
		}
		return src
	}},
}

// isJSON reports whether a file name is a JSON file, plain or compressed.
func isJSON(base string) bool {
	return strings.HasSuffix(base, ".json") || strings.HasSuffix(base, ".json.gz") || strings.HasSuffix(base, ".json.zst") || strings.HasSuffix(base, ".json.xz")
}

// torchDBFile is the rank an ascend_pytorch_profiler_{rank}.db named
// alone is: the *_ascend_pt folder above it holds its metadata.
func torchDBFile(path, base string) Source {
	src := Source{Root: path, Format: model.FormatTorchNPUDB, DB: path, RankHint: -1}
	if m := nameTorchDB.FindStringSubmatch(base); m[1] != "" {
		src.RankHint, _ = strconv.Atoi(m[1])
	}
	// metadata (profiler_info) lives in the *_ascend_pt folder above
	if out := filepath.Dir(path); dirName(out) == profilerOutput {
		src.Root, src.Output = parentDir(out), out
		if h := rankHint(src.Root); h >= 0 {
			src.RankHint = h
		}
		src.Timestamp = dirTimestamp(dirName(src.Root))
	}
	return src
}

// msprofRank sets the rank and timestamp of a file named inside the
// msprof PROF_* folder prof, when prof is one.
func msprofRank(src *Source, prof string) {
	if !isProfDir(prof) {
		return
	}
	src.RankHint, src.Timestamp = profRank(prof), profTimestamp(dirName(prof))
}

// walkRanks appends the rank folders below dir to out; the first folder
// that cannot be listed for lack of permission goes to denied.
func walkRanks(dir string, depth int, out *[]Source, denied *error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		if errors.Is(err, fs.ErrPermission) && *denied == nil {
			*denied = errkind.Errorf(errkind.Usage, "%s: permission denied: the folder cannot be listed", dir)
		}
		return
	}
	for _, e := range ents {
		p := filepath.Join(dir, e.Name())
		if e.Type().IsRegular() && isChromeTrace(e.Name()) {
			// tensorboard_trace_handler's folder: one file per worker
			*out = append(*out, chromeSource(p))
			continue
		}
		if !e.IsDir() {
			// rank folders gathered by symlinks count too
			st, err := os.Stat(p)
			if e.Type()&os.ModeSymlink == 0 || err != nil || !st.IsDir() {
				continue
			}
		}
		if src, ok := asRank(p); ok {
			*out = append(*out, src)
			continue
		}
		if depth < 2 {
			walkRanks(p, depth+1, out, denied)
		}
	}
}

// checkFile refuses a file named as the input that is not regular or
// cannot be opened for lack of permission (a regular file opens without
// blocking).
func checkFile(path string) error {
	if err := checkRegular(path); err != nil {
		return err
	}
	f, err := os.Open(path)
	if err != nil {
		if errors.Is(err, fs.ErrPermission) {
			return permissionError(path)
		}
		return nil
	}
	f.Close()
	return nil
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

func hasTextFiles(dir string) bool {
	for _, f := range textFiles {
		if findInput(dir, f) != "" {
			return true
		}
	}
	return false
}

// findDB returns the first file in dir whose name matches re, or "".
func findDB(dir string, re nameMatcher) string {
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if !e.IsDir() && re.MatchString(e.Name()) {
			return filepath.Join(dir, e.Name())
		}
	}
	return ""
}

// asRank recognises a single rank folder.
func asRank(dir string) (Source, bool) {
	base := dirName(dir)
	torch := func(root, out string) Source {
		src := Source{Root: root, Format: model.FormatTorchNPUText, Output: out, RankHint: rankHint(root), Timestamp: dirTimestamp(dirName(root))}
		if nameAscendMS.MatchString(dirName(root)) {
			src.Format = model.FormatMindSporeText
		}
		if !hasTextFiles(out) {
			if db := findDB(out, nameTorchDB); db != "" {
				src.Format, src.DB = model.FormatTorchNPUDB, db
				if src.RankHint < 0 {
					if m := nameTorchDB.FindStringSubmatch(filepath.Base(db)); m[1] != "" {
						src.RankHint, _ = strconv.Atoi(m[1])
					}
				}
			}
		}
		return src
	}
	switch {
	case base == profilerOutput:
		// The parent holds profiler_info/profiler_metadata when it is a
		// *_ascend_pt folder.
		if parent := parentDir(dir); hasProfilerInfo(parent) || nameAscendPT.MatchString(dirName(parent)) {
			return torch(parent, dir), true
		}
		return torch(dir, dir), true
	case base == msprofOutput || base == "analyze":
		if parent := parentDir(dir); isProfDir(parent) {
			return asProf(parent, parent)
		}
	case isProfDir(dir):
		return asProf(dir, dir)
	}
	out := filepath.Join(dir, profilerOutput)
	if hasTextFiles(out) || findDB(out, nameTorchDB) != "" {
		return torch(dir, out), true
	}
	if hasTextFiles(dir) || findDB(dir, nameTorchDB) != "" {
		return torch(dir, dir), true
	}
	ascendPT := nameAscendPT.MatchString(base)
	if ascendPT && !exists(out) && isUnparsed(dir) {
		return Source{Root: dir, Format: model.FormatTorchNPUText, Output: out, RankHint: rankHint(dir), Timestamp: dirTimestamp(base), Unparsed: true}, true
	}
	if ascendPT || hasProfilerInfo(dir) {
		// torch_npu's own parsing failed or was skipped: read the raw
		// PROF_* folder's msprof export when there is one.
		if prof := nestedProf(dir); prof != "" {
			if src, ok := asProf(dir, prof); ok {
				return src, true
			}
		}
	}
	if exists(out) || (ascendPT && hasProfilerInfo(dir)) {
		// a rank whose export is missing: reported, with nothing to measure
		return torch(dir, out), true
	}
	return Source{}, false
}

// isUnparsed reports whether the *_ascend_pt folder dir holds only what
// torch_npu collects before its own parsing: FRAMEWORK/ or a PROF_* folder
// with raw device_*/data and no msprof export.
func isUnparsed(dir string) bool {
	if exists(filepath.Join(dir, "FRAMEWORK")) {
		return true
	}
	prof := nestedProf(dir)
	if prof == "" || exists(filepath.Join(prof, msprofOutput)) || findDB(prof, nameMsprofDB) != "" {
		return false
	}
	raw, _ := filepath.Glob(filepath.Join(prof, "device_*", "data"))
	return len(raw) > 0
}

// unparsedMessage says how to parse the unparsed *_ascend_pt folder dir:
// the torch_npu offline-analysis call with the folder's absolute path
// filled in, quoted for a POSIX shell. npuprof never runs it.
func unparsedMessage(dir string) string {
	abs, err := filepath.Abs(dir)
	if err != nil {
		abs = dir
	}
	py := fmt.Sprintf("from torch_npu.profiler.profiler import analyse; analyse(profiler_path=%s)", strconv.Quote(abs))
	return fmt.Sprintf("%s: torch_npu collected this profile but never parsed it (it holds FRAMEWORK/ and the raw PROF_*/device_*/data, no %s/): parse it first, where torch_npu and CANN are installed (it writes %s/ into the folder; npuprof never runs it itself): python3 -c %s, then run npuprof on %s again", dir, profilerOutput, profilerOutput, shellQuote(py), dir)
}

// shellQuote quotes s as one POSIX shell word.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// isProfDir reports whether dir is an msprof PROF_* folder: its name, or
// an msprof export inside it.
func isProfDir(dir string) bool {
	if nameProfDir.MatchString(dirName(dir)) {
		return true
	}
	return exists(filepath.Join(dir, msprofOutput)) || findDB(dir, nameMsprofDB) != ""
}

// nestedProf returns the PROF_* folder inside a *_ascend_pt folder.
func nestedProf(dir string) string {
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if e.IsDir() && strings.HasPrefix(e.Name(), "PROF_") {
			return filepath.Join(dir, e.Name())
		}
	}
	return ""
}

// asProf builds the source of an msprof PROF_* folder (root is the folder
// the rank is named after: prof itself, or the *_ascend_pt around it).
// The text export is preferred when both exports are present.
func asProf(root, prof string) (Source, bool) {
	src := Source{Root: root, Prof: prof, RankHint: -1, Timestamp: profTimestamp(dirName(prof))}
	if root != prof {
		src.RankHint = rankHint(root)
		if ts := dirTimestamp(dirName(root)); ts != "" {
			src.Timestamp = ts
		}
	}
	out := filepath.Join(prof, msprofOutput)
	switch {
	case hasMsprofText(out):
		src.Format = model.FormatMsprofText
	case findDB(prof, nameMsprofDB) != "":
		src.Format, src.DB = model.FormatMsprofDB, findDB(prof, nameMsprofDB)
	default:
		if !nameProfDir.MatchString(dirName(prof)) {
			return Source{}, false
		}
		// raw data only (msprof --export was never run): reported as a
		// rank with nothing to measure
		src.Format = model.FormatMsprofText
	}
	if src.RankHint < 0 {
		src.RankHint = profRank(prof)
	}
	return src, true
}

func hasMsprofText(out string) bool {
	ents, _ := os.ReadDir(out)
	for _, e := range ents {
		n := e.Name()
		if strings.HasPrefix(n, "msprof_") || strings.HasPrefix(n, "op_summary_") || strings.HasPrefix(n, "task_time_") {
			return true
		}
	}
	return false
}

// profRank reads rank_id from PROF_*/device_{id}/info.json.{id}; -1 when
// absent or -1 (msprof then orders ranks by host and device).
func profRank(prof string) int {
	ents, _ := os.ReadDir(prof)
	for _, e := range ents {
		m := reDeviceDir().FindStringSubmatch(e.Name())
		if m == nil || !e.IsDir() {
			continue
		}
		data, err := readRegular(filepath.Join(prof, e.Name(), "info.json."+m[1]))
		if err != nil {
			continue
		}
		var info struct {
			RankID *int `json:"rank_id"`
		}
		if json.Unmarshal(data, &info) == nil && info.RankID != nil && *info.RankID >= 0 {
			return *info.RankID
		}
	}
	return -1
}

// profTimestamp returns the {YYYYmmddHHMMSSfff} field of a PROF_* name.
func profTimestamp(base string) string {
	if m := nameProfDir.FindStringSubmatch(base); m != nil {
		return m[1]
	}
	return ""
}

func hasProfilerInfo(dir string) bool {
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), "profiler_info") {
			return true
		}
	}
	return false
}

// rankHint finds the rank in profiler_info_{rank}.json (compressed too:
// gzip -r on a capture) or the vLLM worker
// name (..._rank{r}_...).
func rankHint(dir string) int {
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if m := nameProfilerInfo.FindStringSubmatch(trimCompressed(e.Name())); m != nil {
			if v, err := strconv.Atoi(m[1]); err == nil {
				return v
			}
		}
	}
	if m := reWorkerRank().FindStringSubmatch(dirName(dir)); m != nil {
		if v, err := strconv.Atoi(m[1]); err == nil {
			return v
		}
	}
	return -1
}

// dirTimestamp returns the {YYYYmmddHHMMSSmmm} field of a
// {worker}_{pid}_{ts}_ascend_pt name (3rd field from the end), or "".
func dirTimestamp(base string) string {
	parts := strings.Split(base, "_")
	if len(parts) < 3 || !nameAscendPT.MatchString(base) {
		return ""
	}
	ts := parts[len(parts)-3]
	if _, err := strconv.ParseUint(ts, 10, 64); err != nil {
		return ""
	}
	return ts
}

func noProfileMessage(path string) string {
	ents, _ := os.ReadDir(path)
	var names []string
	for i, e := range ents {
		if i == 8 {
			names = append(names, fmt.Sprintf("... (%d entries)", len(ents)))
			break
		}
		n := e.Name()
		if e.IsDir() {
			n += "/"
		}
		names = append(names, n)
	}
	found := "an empty folder"
	if len(names) > 0 {
		found = strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s: no profile found; looked for trace_view.json, kernel_details.csv or step_trace_time.csv, ascend_pytorch_profiler_*.db, an %s/ folder, *_ascend_pt/ folders, msprof PROF_*/ folders (%s/ or msprof_*.db), up to two levels down; found %s", path, profilerOutput, msprofOutput, found)
}

// detectExport lists the ranks of an npuprof Parquet export.
func detectExport(dir string) ([]Source, error) {
	ranks, err := parquetio.Ranks(dir)
	if err != nil || len(ranks) == 0 {
		return nil, errkind.Errorf(errkind.Usage, "%s: an npuprof Parquet export with no ranks: expected %s/rank=N/part-0.parquet (write one with npuprof export)", dir, parquetio.TableRanks)
	}
	if err := parquetio.CheckRuns(dir, ranks); err != nil {
		return nil, errkind.Wrap(errkind.Usage, err)
	}
	out := make([]Source, len(ranks))
	for i, r := range ranks {
		out[i] = Source{Root: parquetio.PartDir(dir, parquetio.TableRanks, r), Format: parquetio.SourceFormat, Parquet: dir, RankHint: r}
	}
	return out, nil
}
