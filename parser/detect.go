// Package parser finds the profiles under a path and reads each rank into
// the normalized model (package model). Detection maps a path to rank
// sources or says what it found and what it expected; Load parses the
// ranks in parallel with a bounded worker pool.
package parser

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/npuprof/npuprof/parser/model"
)

// Source is one rank's input, as found by Detect.
type Source struct {
	// Root is the rank's folder (*_ascend_pt) or, for a bare file or a bare
	// ASCEND_PROFILER_OUTPUT folder, that path.
	Root   string
	Format model.Format
	// Output is the folder holding the text export (ASCEND_PROFILER_OUTPUT),
	// "" when the source is a single file.
	Output string
	// TraceFile is set when the user named a trace file directly.
	TraceFile string
	// RankHint is the rank from the file or folder name, -1 when unknown.
	RankHint int
	// Timestamp is the folder-name timestamp used to pick the newest of
	// duplicate ranks.
	Timestamp string
}

// UsageError is an input the user pointed at that npuprof cannot use (no
// profile, unknown layout, missing path). The CLI maps it to exit code 2.
type UsageError struct{ Msg string }

func (e *UsageError) Error() string { return e.Msg }

// IsUsage reports whether err is a UsageError.
func IsUsage(err error) bool {
	var u *UsageError
	return errors.As(err, &u)
}

const profilerOutput = "ASCEND_PROFILER_OUTPUT"

var (
	reProfilerInfo = regexp.MustCompile(`^profiler_info_(\d+)\.json$`)
	reWorkerRank   = regexp.MustCompile(`(?:^|_)rank(\d+)(?:_|$)`)
	reAscendPT     = regexp.MustCompile(`_ascend_pt$`)
)

// textFiles are the files that make a folder a torch_npu text export.
var textFiles = []string{"trace_view.json", "kernel_details.csv", "step_trace_time.csv"}

// Detect maps path to the rank sources it holds.
func Detect(path string) ([]Source, error) {
	st, err := os.Stat(path)
	if err != nil {
		if os.IsNotExist(err) {
			return nil, &UsageError{fmt.Sprintf("%s: no such file or directory", path)}
		}
		return nil, &UsageError{fmt.Sprintf("%s: %v", path, err)}
	}
	if !st.IsDir() {
		base := filepath.Base(path)
		if strings.HasSuffix(base, ".json") || strings.HasSuffix(base, ".json.gz") {
			return []Source{{Root: path, Format: model.FormatTorchNPUText, TraceFile: path, RankHint: -1}}, nil
		}
		return nil, &UsageError{fmt.Sprintf("%s: not a profile: expected a trace_view.json file, an %s folder, a *_ascend_pt folder, or a folder of *_ascend_pt folders", path, profilerOutput)}
	}
	if src, ok := asRank(path); ok {
		return []Source{src}, nil
	}
	// A cluster: rank folders below path (two levels, as gathered from
	// several hosts).
	var found []Source
	walkRanks(path, 0, &found)
	if len(found) == 0 {
		return nil, &UsageError{noProfileMessage(path)}
	}
	sort.Slice(found, func(i, j int) bool { return found[i].Root < found[j].Root })
	return found, nil
}

func walkRanks(dir string, depth int, out *[]Source) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		p := filepath.Join(dir, e.Name())
		if src, ok := asRank(p); ok {
			*out = append(*out, src)
			continue
		}
		if depth < 2 {
			walkRanks(p, depth+1, out)
		}
	}
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

func hasTextFiles(dir string) bool {
	for _, f := range textFiles {
		if exists(filepath.Join(dir, f)) {
			return true
		}
	}
	return false
}

// asRank recognises a single rank folder.
func asRank(dir string) (Source, bool) {
	base := filepath.Base(dir)
	mk := func(root, out string) Source {
		return Source{Root: root, Format: model.FormatTorchNPUText, Output: out, RankHint: rankHint(root), Timestamp: dirTimestamp(filepath.Base(root))}
	}
	switch {
	case base == profilerOutput:
		// The parent holds profiler_info/profiler_metadata when it is a
		// *_ascend_pt folder.
		if parent := filepath.Dir(dir); hasProfilerInfo(parent) || reAscendPT.MatchString(filepath.Base(parent)) {
			return mk(parent, dir), true
		}
		return mk(dir, dir), true
	case exists(filepath.Join(dir, profilerOutput)):
		return mk(dir, filepath.Join(dir, profilerOutput)), true
	case hasTextFiles(dir):
		return mk(dir, dir), true
	case reAscendPT.MatchString(base) && hasProfilerInfo(dir):
		// torch_npu's own parsing failed or was skipped: the rank exists
		// but has no text export.
		return mk(dir, filepath.Join(dir, profilerOutput)), true
	}
	return Source{}, false
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

// rankHint finds the rank in profiler_info_{rank}.json or the vLLM worker
// name (..._rank{r}_...).
func rankHint(dir string) int {
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if m := reProfilerInfo.FindStringSubmatch(e.Name()); m != nil {
			if v, err := strconv.Atoi(m[1]); err == nil {
				return v
			}
		}
	}
	if m := reWorkerRank.FindStringSubmatch(filepath.Base(dir)); m != nil {
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
	if len(parts) < 3 || !reAscendPT.MatchString(base) {
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
	return fmt.Sprintf("%s: no profile found; looked for trace_view.json, kernel_details.csv or step_trace_time.csv, an %s/ folder, *_ascend_pt/ folders (up to two levels down); found %s", path, profilerOutput, found)
}
