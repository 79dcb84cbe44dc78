package parser

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/npuprof/npuprof/internal/errkind"
	"github.com/npuprof/npuprof/internal/parser/model"
	"github.com/npuprof/npuprof/internal/testutil"
)

// tinyRank generates a one-rank capture and returns its *_ascend_pt root
// and ASCEND_PROFILER_OUTPUT folder.
func tinyRank(t *testing.T) (root, out string) {
	out, root = testutil.GenerateTiny(t)
	return root, out
}

func loadOne(t *testing.T, path string) *model.Rank {
	t.Helper()
	ranks := readAll(t, path)
	require.Len(t, ranks, 1)
	return ranks[0]
}

func warningsText(r *model.Rank) string {
	var b strings.Builder
	for _, w := range r.Warnings {
		fmt.Fprintf(&b, "%s: %s\n", w.File, w.Message)
	}
	return b.String()
}

// An empty or broken trace_view.json inside a rank folder costs the
// timeline only: the rank is still read (kernel_details.csv measured), and
// the warning and TimelineNote say why.
func TestBrokenTraceInFolderIsAWarning(t *testing.T) {
	for _, c := range []struct{ name, content string }{
		{"empty", ""},
		{"not-json", "<html>502 Bad Gateway</html>"},
	} {
		t.Run(c.name, func(t *testing.T) {
			root, out := tinyRank(t)
			trace := filepath.Join(out, "trace_view.json")
			require.NoError(t, os.WriteFile(trace, []byte(c.content), 0o644))
			r := loadOne(t, root)
			require.False(t, r.Have.Timeline)
			require.True(t, r.Have.KernelDetails, "kernel_details.csv is still read")
			require.NotEmpty(t, r.Tasks)
			require.Contains(t, r.Have.TimelineNote, trace+": not a trace")
			require.Contains(t, warningsText(r), trace+": "+trace+": not a trace")
		})
	}
}

// A kernel_details.csv that yields nothing (empty, unknown header) is not
// "measured, zero kernels": Have.KernelDetails stays false with the reason.
func TestUnusableKernelDetailsIsNotMeasured(t *testing.T) {
	root, out := tinyRank(t)
	require.NoError(t, os.Remove(filepath.Join(out, "trace_view.json")))
	kd := filepath.Join(out, "kernel_details.csv")
	require.NoError(t, os.WriteFile(kd, nil, 0o644))
	r := loadOne(t, root)
	require.False(t, r.Have.KernelDetails)
	require.False(t, r.Have.Timeline)
	require.Empty(t, r.Tasks)
	require.Equal(t, kd+": empty file, expected a kernel_details.csv header", r.Have.KernelNote)
	require.Equal(t, out+" has no trace_view.json", r.Have.TimelineNote)

	require.NoError(t, os.WriteFile(kd, []byte("Foo,Bar\n1,2\n"), 0o644))
	r = loadOne(t, root)
	require.False(t, r.Have.KernelDetails)
	// no column of a kernel_details.csv: the line is not quoted (it may
	// not be a profile file at all)
	require.Contains(t, r.Have.KernelNote, `unknown header: no "Name" column (found 2 column(s), 7 byte(s), none of them one npuprof knows; the line is not quoted: this may not be a profile file)`)
	require.NotContains(t, r.Have.KernelNote, "Foo")

	// one column npuprof knows: a profile file of another version, quoted
	require.NoError(t, os.WriteFile(kd, []byte("Name,Bar\n1,2\n"), 0o644))
	r = loadOne(t, root)
	require.Contains(t, r.Have.KernelNote, `unknown header: no "Start Time(us)" column (found Name,Bar)`)
}

// Missing profiler_metadata.json: the groups note says so.
func TestGroupsNote(t *testing.T) {
	root, _ := tinyRank(t)
	md := filepath.Join(root, "profiler_metadata.json")
	r := loadOne(t, root)
	require.Empty(t, r.Have.GroupsNote)
	require.NotEmpty(t, r.Groups)

	require.NoError(t, os.WriteFile(md, []byte(`{"ENV_VARIABLES":{}}`), 0o644))
	r = loadOne(t, root)
	require.Equal(t, md+" has no parallel_group_info", r.Have.GroupsNote)

	require.NoError(t, os.WriteFile(md, []byte(`{`), 0o644))
	r = loadOne(t, root)
	require.Contains(t, r.Have.GroupsNote, md+": expected a JSON object")

	require.NoError(t, os.Remove(md))
	r = loadOne(t, root)
	require.Equal(t, root+" has no profiler_metadata.json", r.Have.GroupsNote)
}

// Exact duplicate events are counted once, with a warning.
func TestDuplicateEventsCountedOnce(t *testing.T) {
	root, out := tinyRank(t)
	trace := filepath.Join(out, "trace_view.json")
	clean := loadOne(t, root)
	b, err := os.ReadFile(trace)
	require.NoError(t, err)
	// repeat every event of the file: all duplicated
	body := strings.TrimSuffix(strings.TrimSpace(string(b)), "]")
	doubled := body + ", " + strings.TrimPrefix(strings.TrimSpace(string(b)), "[")
	require.NoError(t, os.WriteFile(trace, []byte(doubled), 0o644))
	r := loadOne(t, root)
	require.Equal(t, clean.Tasks, r.Tasks)
	require.Equal(t, clean.HCCL, r.HCCL)
	require.Equal(t, clean.Steps, r.Steps)
	require.Equal(t, clean.Links, r.Links)
	require.Equal(t, clean.FrameworkOps, r.FrameworkOps)
	msg := fmt.Sprintf("counted exact duplicates once: %d device task(s), %d HCCL op(s), %d framework op(s), %d step(s) appeared more than once",
		len(clean.Tasks), len(clean.HCCL), len(clean.FrameworkOps), len(clean.Steps))
	require.Contains(t, warningsText(r), trace+": "+msg)
}

// A panic while reading a rank is recovered: the rank is named and the
// error is internal (exit 3), never blamed on the input.
func TestReaderPanicIsInternal(t *testing.T) {
	_, root := testutil.GenerateTiny(t)
	srcs, err := Detect(root)
	require.NoError(t, err)
	require.Len(t, srcs, 1)
	TestHookParseRank = func(Source) { panic("boom") }
	defer func() { TestHookParseRank = nil }()
	_, err = ParseRank(srcs[0])
	require.True(t, errkind.Is(err, errkind.Internal), "%v", err)
	require.False(t, errkind.Is(err, errkind.Usage))
	require.Contains(t, err.Error(), "internal error: panic while reading "+srcs[0].Root+": boom")
}
