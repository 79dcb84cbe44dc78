package main

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/npuprof/npuprof/internal/parser/model"
	"github.com/npuprof/npuprof/internal/pipeline/gather"
	"github.com/npuprof/npuprof/internal/results"
	"github.com/npuprof/npuprof/internal/testutil"
	"github.com/stretchr/testify/require"
)

var brokenDir = filepath.Join(testutil.RepoRoot(), "testdata", "broken")

// brokenRank is the one rank of a corpus entry's JSON document.
type brokenRank struct {
	t   *testing.T
	doc *results.Document
	r   *results.RankDoc
}

func (b brokenRank) warning(substr string) model.Warning {
	b.t.Helper()
	for _, w := range b.r.Warnings {
		if strings.Contains(w.Message, substr) {
			return w
		}
	}
	b.t.Fatalf("no warning containing %q in %+v", substr, b.r.Warnings)
	return model.Warning{}
}

func (b brokenRank) metric(name string, want float64) {
	b.t.Helper()
	got, ok := b.r.Metrics[name]
	require.Truef(b.t, ok, "%s not measured (unavailable: %q)", name, b.r.Unavailable[name])
	require.Equal(b.t, want, got, name)
}

func (b brokenRank) unavailable(name, substr string) {
	b.t.Helper()
	_, measured := b.r.Metrics[name]
	require.Falsef(b.t, measured, "%s reported as measured", name)
	require.Contains(b.t, b.r.Unavailable[name], substr, name)
}

func (b brokenRank) complete() {
	b.t.Helper()
	require.False(b.t, b.r.Partial)
	require.Empty(b.t, b.r.PartialReason)
	require.Empty(b.t, b.r.PartialMetrics)
	require.Empty(b.t, b.doc.Errors)
}

// brokenCases is the table of testdata/broken/README.md: each corpus entry,
// the exit code, and the message users get (stderr for exit 2; for exit 0
// the check looks in the JSON document).
var brokenCases = []struct {
	entry  string
	code   int
	stderr string // substring of the single stderr line, for exit 2
	check  func(b brokenRank)
}{
	{entry: "truncated-mid-event", check: func(b brokenRank) {
		require.True(b.t, b.r.Partial)
		require.Equal(b.t, filepath.Join(brokenDir, "truncated-mid-event", "trace_view.json")+" is truncated: it ends inside an event at byte 1143; analyzed the 10 complete events before it", b.r.PartialReason)
		b.warning("is truncated: it ends inside an event at byte 1143")
		require.Contains(b.t, b.r.PartialMetrics, "kernel.compute.count")
		require.Len(b.t, b.r.PartialMetrics, len(b.r.Metrics), "every metric comes from the truncated trace")
		b.metric("kernel.compute.count", 3) // MatMul, routing, Cumsum; the GroupedMatmul came after the cut
		b.metric("moe.cumsum.count", 1)
		b.metric("hccl.total.count", 0) // the only collective is the event that was cut
	}},
	{entry: "truncated-before-device-metadata", check: func(b brokenRank) {
		require.True(b.t, b.r.Partial)
		// device metrics come, complete, from kernel_details.csv, but its
		// window has no EVENT_WAIT task (the cut trace held them)
		require.Equal(b.t, []string{"device.window.time_us", "overlap.free.time_us"}, b.r.PartialMetrics)
		b.warning("EVENT_WAIT and the other non-kernel tasks of the device timeline are not in it")
		b.metric("kernel.compute.count", 4)
		b.metric("hccl.total.count", 1)
		b.unavailable("event_wait.count", "is truncated at byte 1155, before the Ascend Hardware process metadata, so no device task can be identified")
	}},
	{entry: "garbage-between-events", check: func(b brokenRank) {
		// the read goes on at the next event: everything else is measured,
		// and partial
		require.True(b.t, b.r.Partial)
		require.Contains(b.t, b.r.PartialReason, "trace_view.json is malformed at byte 484 (expected '{' or ']' at byte 484, found '1'): skipped 7 byte(s) holding 0 event(s) in 1 place(s), going on each time at the next event boundary; analyzed the other 12 events")
		b.metric("kernel.compute.count", 4)
		b.metric("hccl.total.count", 1)
		require.Contains(b.t, b.r.PartialMetrics, "kernel.compute.count")
	}},
	{entry: "symlink-outside-tree", check: func(b brokenRank) {
		// refused unread: its content is never quoted
		b.warning("kernel_details.csv is a symbolic link that leads outside ")
		b.warning(": not read (npuprof reads only what the profile holds)")
		for _, w := range b.r.Warnings {
			require.NotContains(b.t, w.Message, "root:")
		}
		b.metric("kernel.compute.count", 4) // from the trace
	}},
	{entry: "no-device-data.json", check: func(b brokenRank) {
		// analyze says so (one line in text); check refuses it (exit 2)
		b.unavailable("kernel.compute.count", "no-device-data.json has no device tasks")
		b.warning(`skipped 1 event(s) without a known phase`)
	}},
	{entry: "damaged-quotes", check: func(b brokenRank) {
		// two damaged quotes once made the args skipper walk over the
		// events between them as if they were strings
		require.True(b.t, b.r.Partial)
		require.Contains(b.t, b.r.PartialReason, "trace_view.json is malformed at byte 107 (the event at byte 107 is not a JSON object of \"key\": value pairs): skipped 232 byte(s) holding 2 event(s) in 2 place(s), going on each time at the next event boundary; analyzed the other 10 events")
		b.metric("kernel.compute.count", 4)
		b.metric("hccl.total.count", 0) // the collective's own event was damaged
		require.Contains(b.t, b.r.PartialMetrics, "kernel.compute.count")
	}},
	{entry: "empty-trace.json", code: ExitUsage, stderr: `empty-trace.json: not a trace: expected a JSON array of events ('[' ...) or an object with "traceEvents"`},
	{entry: "not-json.json", code: ExitUsage, stderr: "not-json.json: not a trace: expected a JSON array of events"},
	{entry: "trace-not-an-array.json", code: ExitUsage, stderr: "trace-not-an-array.json: not a trace: expected a JSON array of events"},
	{entry: "empty-trace-in-folder", check: func(b brokenRank) {
		b.complete()
		b.warning("trace_view.json: not a trace")
		b.unavailable("event_wait.count", "trace_view.json: not a trace")
		b.metric("kernel.compute.count", 4)
		b.metric("hccl.total.count", 1)
		b.metric("moe.cumsum.aicpu.count", 1)
	}},
	{entry: "kernel-details-bad-header", check: func(b brokenRank) {
		b.warning(`kernel_details.csv: unknown header: no "Name" column (found 3 column(s), 19 byte(s), none of them one npuprof knows; the line is not quoted: this may not be a profile file)`)
		b.unavailable("kernel.compute.count", `unknown header: no "Name" column`)
		b.unavailable("hccl.total.count", `unknown header: no "Name" column`)
		require.Empty(b.t, b.r.Metrics, "nothing is measured, nothing is reported as 0")
	}},
	{entry: "kernel-details-renamed-columns", check: func(b brokenRank) {
		b.complete()
		b.warning(`unknown header version; columns identified by name: core: "task_type", dur: "duration (us)", name: "op_name", start: "start_time (us)", stream: "stream_id", type: "op_type"`)
		b.metric("kernel.compute.count", 2)
		b.metric("kernel.compute.time_us", 33.25)
		b.metric("cumsum.other.count", 1)
	}},
	{entry: "csv-wrong-cell-count", check: func(b brokenRank) {
		w := b.warning("skipped malformed rows (wrong number of cells: 3)")
		require.Equal(b.t, 3, w.Count)
		require.Equal(b.t, []int{3, 5, 7}, w.Lines)
		b.metric("kernel.compute.count", 3)
		// skipped rows make what the file feeds partial (no trace here)
		require.True(b.t, b.r.Partial)
		require.Contains(b.t, b.r.PartialReason, "kernel_details.csv has 3 malformed row(s), skipped; the metrics from it cover the 3 rows read")
		require.Contains(b.t, b.r.PartialMetrics, "kernel.compute.count")
	}},
	{entry: "csv-non-numeric-time", check: func(b brokenRank) {
		w := b.warning("skipped malformed rows (non-numeric time: 3)")
		require.Equal(b.t, 3, w.Count)
		require.Equal(b.t, []int{3, 4, 5}, w.Lines)
		b.metric("kernel.compute.count", 2)
		require.True(b.t, b.r.Partial)
		require.Contains(b.t, b.r.PartialMetrics, "kernel.compute.count")
	}},
	{entry: "kernel-details-cut", check: func(b brokenRank) {
		// cut inside the last cell of a row: every cell is there, but
		// the file ends without a newline
		require.True(b.t, b.r.Partial)
		require.Contains(b.t, b.r.PartialReason, "kernel_details.csv ends inside line 4, without a newline (cut short?); the metrics from it cover the 3 rows read")
		b.warning("the file ends inside line 4, without a newline: it may have been cut there")
		b.metric("kernel.compute.count", 3)
		require.Contains(b.t, b.r.PartialMetrics, "kernel.compute.count")
	}},
	{entry: "step-trace-bad-rows", check: func(b brokenRank) {
		w := b.warning("skipped malformed rows (non-numeric time: 1, wrong number of cells: 1)")
		require.Equal(b.t, 2, w.Count)
		require.Equal(b.t, []int{3, 4}, w.Lines)
		b.metric("kernel.compute.count", 4)
	}},
	{entry: "step-trace-disagree", check: func(b brokenRank) {
		// a repeated step and a row whose Stage is not the sum of its
		// parts: warned, and the rank (whose device data it is) partial
		b.warning("1 step row(s) repeat a step already listed (first: step 6)")
		b.warning(`whose columns disagree (Communication is not Communication(Not Overlapped) + Overlapped, or Stage is not Computing + Communication(Not Overlapped) + Free; first: step "7")`)
		require.True(b.t, b.r.Partial)
		require.Contains(b.t, b.r.PartialReason, "holds rows that repeat a step or whose columns disagree")
	}},
	{entry: "communication-damaged", check: func(b brokenRank) {
		// the collectives come from communication.json alone: an op whose
		// time info key is damaged and one whose elapsed time is not
		// transit + wait + idle are left out and named, never counted
		b.warning(`skipped 2 op(s) that fail validation (first "step5/collective/hcom_allReduce__2_0_1@9: no Communication Time Info")`)
		b.metric("hccl.total.count", 1)
		require.True(b.t, b.r.Partial)
		require.Contains(b.t, b.r.PartialReason, "communication.json has ops that fail validation")
	}},
	{entry: "trace-gz-bad-crc", check: func(b brokenRank) {
		// the trace is read whole, but its gzip CRC does not match: what
		// was read may be wrong, so the rank is partial
		b.warning("trace_view.json.gz: the gzip content is damaged (gzip: invalid checksum)")
		require.True(b.t, b.r.Partial)
		require.Contains(b.t, b.r.PartialReason, "the gzip content is damaged")
	}},
	{entry: "trace-xz-bad-check", check: func(b brokenRank) {
		// xz and zstd are checked as gzip is: a check that does not match
		// makes the rank partial
		b.warning("trace_view.json.xz: the xz content is damaged (xz: checksum error for block)")
		require.True(b.t, b.r.Partial)
		require.Contains(b.t, b.r.PartialReason, "the xz content is damaged")
	}},
	{entry: "trace-zst-bad-checksum", check: func(b brokenRank) {
		b.warning("trace_view.json.zst: the zstd content is damaged (CRC check failed)")
		require.True(b.t, b.r.Partial)
		require.Contains(b.t, b.r.PartialReason, "the zstd content is damaged")
	}},
	{entry: "profiler-info-gz-over-limit", check: func(b brokenRank) {
		// 17 MiB once decompressed: over the limit, refused with the
		// reason; the rank still comes from the (compressed) file's name
		b.warning("profiler_info_3.json.gz: expected a profiler_info JSON object: file too large: larger than the 16 MiB npuprof reads")
		require.Equal(b.t, 3, b.r.Rank)
	}},
	{entry: "communication-trailing-data", check: func(b brokenRank) {
		// two writes of communication.json one after the other: the
		// second object would be lost without a word; the file is
		// refused, and the collective metrics say why
		b.warning("communication.json: expected communication.json ({step: {collective|p2p: {op@group: ...}}}): at byte 254: more data after the object ends (a damaged brace?)")
		b.unavailable("hccl.total.count", "communication.json: expected communication.json")
		b.unavailable("hccl.total.count", "more data after the object ends")
	}},
	{entry: "kernel-details-header-only", check: func(b brokenRank) {
		// a header and no row: no kernel and no collective was measured,
		// which is not 0; the overlap metrics come from step_trace_time.csv
		b.complete()
		for _, m := range []string{"kernel.compute.count", "kernel.compute.time_us", "kernel.aicpu.count", "hccl.total.count", "hccl.total.time_us"} {
			b.unavailable(m, "kernel_details.csv holds only its header: no kernel or collective row, so none was measured from it")
		}
		b.metric("overlap.computing.time_us", 95.75)
	}},
	{entry: "step-trace-no-overlapped", check: func(b brokenRank) {
		// no Overlapped column: the overlapped time was not measured, and
		// Communication cannot disagree with a missing column
		b.complete()
		b.unavailable("overlap.overlapped.time_us", "step_trace_time.csv has no Overlapped value (no Overlapped column, or every value empty or NULL): the overlapped time was not measured")
		b.unavailable("steps.overlapped_us", "has no Overlapped value")
		b.metric("overlap.communication.time_us", 20)
		b.metric("overlap.communication_not_overlapped.time_us", 14)
		for _, s := range b.r.Steps {
			require.Nil(b.t, s.OverlappedUs, "step %d", s.Step)
			require.NotNil(b.t, s.CommunicationUs, "step %d", s.Step)
		}
	}},
	{entry: "metadata-groups-mismatch", check: func(b brokenRank) {
		// the groups no longer match the ops (another run's metadata):
		// the collectives it does not list are named, not dropped silently
		b.warning("collectives name 1 group(s) that parallel_group_info does not list (586): they are left out of the hccl.group.* metrics (a damaged or mismatched profiler_metadata.json?)")
		b.metric("hccl.total.count", 1)
	}},
	{entry: "metadata-trailing-data", check: func(b brokenRank) {
		// a damaged brace closed the object before parallel_group_info:
		// the file is refused with the reason, not read in part
		b.warning("profiler_metadata.json: expected a JSON object: more data after the object ends at byte 52 (a damaged brace?)")
		require.Contains(b.t, b.r.Unavailable["hccl.group.*"], "more data after the object")
		b.metric("hccl.total.count", 1)
	}},
	{entry: "env-secret", check: func(b brokenRank) {
		// credentials in the profile's ENV_VARIABLES reach no output
		b.complete()
		for _, args := range [][]string{{"--format", "json"}, {"--detail", "all"}} {
			_, out, errs := run(append([]string{"analyze", filepath.Join(brokenDir, "env-secret")}, args...)...)
			for _, secret := range []string{"hf_corpusSECRET1", "wandbSECRET2", "pipSECRET3"} {
				require.NotContains(b.t, out+errs, secret)
			}
		}
	}},
	{entry: "step-trace-cut", check: func(b brokenRank) {
		// the only device data, cut inside its last row's last cell
		require.True(b.t, b.r.Partial)
		require.Contains(b.t, b.r.PartialReason, "step_trace_time.csv ends inside line 3, without a newline (cut short?); the metrics from it cover the 2 rows read")
		b.warning("the file ends inside line 3, without a newline: it may have been cut there")
		b.metric("overlap.free.time_us", 69.5)
		require.Contains(b.t, b.r.PartialMetrics, "overlap.free.time_us")
		require.Contains(b.t, b.r.PartialMetrics, "device.window.time_us")
	}},
	{entry: "profiler-info-not-json", check: func(b brokenRank) {
		b.warning("profiler_info_3.json: expected a profiler_info JSON object: unexpected EOF")
		require.Equal(b.t, 3, b.r.Rank)
		b.metric("kernel.compute.count", 4)
	}},
	{entry: "metadata-no-groups", check: func(b brokenRank) {
		b.complete()
		require.Equal(b.t, "collectives cannot be attributed to tp/ep/dp groups: "+filepath.Join(brokenDir, "metadata-no-groups", "profiler_metadata.json")+" has no parallel_group_info", b.r.Unavailable["hccl.group.*"])
		b.metric("hccl.total.count", 1)
	}},
	{entry: "communication-not-json", check: func(b brokenRank) {
		// analyze does not read communication.json (no pass uses it)...
		b.complete()
		for _, w := range b.r.Warnings {
			require.NotContains(b.t, w.Message, "communication.json")
		}
		b.metric("hccl.total.count", 1)
		// ...npuprof export, which keeps it, reads it and says what is wrong
		p, err := gather.Models(context.Background(), filepath.Join(brokenDir, "communication-not-json"), gather.Options{})
		require.NoError(b.t, err)
		found := false
		for _, w := range p.Ranks[0].Warnings {
			found = found || strings.Contains(w.Message, "communication.json: expected communication.json ({step: {collective|p2p: {op@group: ...}}}): unexpected EOF")
		}
		require.True(b.t, found, "%+v", p.Ranks[0].Warnings)
	}},
	{entry: "missing-profiler-output", check: func(b brokenRank) {
		b.warning("missing: torch_npu wrote no ASCEND_PROFILER_OUTPUT (its own parsing failed or was skipped); timeline metrics are unavailable")
		require.Equal(b.t, 0, b.r.Rank)
		b.unavailable("kernel.compute.count", "no device data: torch_npu wrote no ")
		b.unavailable("event_wait.count", "torch_npu wrote no ")
		require.Empty(b.t, b.r.Metrics)
	}},
	{entry: "no-profile-folder", code: ExitUsage, stderr: "no-profile-folder: no profile found; looked for trace_view.json, kernel_details.csv or step_trace_time.csv, ascend_pytorch_profiler_*.db, an ASCEND_PROFILER_OUTPUT/ folder, *_ascend_pt/ folders, msprof PROF_*/ folders (mindstudio_profiler_output/ or msprof_*.db), up to two levels down; found notes.txt"},
	{entry: "not-a-profile.txt", code: ExitUsage, stderr: "not-a-profile.txt: not a profile: expected a trace_view.json or msprof_*.json file, an ascend_pytorch_profiler_*.db or msprof_*.db database, an ASCEND_PROFILER_OUTPUT folder, a *_ascend_pt or PROF_* folder, or a folder of those"},
	{entry: "duplicated-events", check: func(b brokenRank) {
		b.complete()
		w := b.warning("counted exact duplicates once: 5 device task(s), 1 HCCL op(s), 0 framework op(s), 0 step(s) appeared more than once")
		require.Equal(b.t, 6, w.Count)
		b.metric("kernel.compute.count", 4)
		b.metric("kernel.compute.time_us", 45.25)
		b.metric("hccl.total.count", 1)
		b.metric("event_wait.count", 1)
	}},
	{entry: "numbers-out-of-range", check: func(b brokenRank) {
		w := b.warning("skipped 3 complete (ph X) event(s) whose ts or ts+dur is outside the int64 nanosecond range (first at byte 351)")
		require.Equal(b.t, 3, w.Count)
		b.metric("kernel.compute.count", 4)
		b.metric("device.window.time_us", 50)
	}},
	{entry: "deeply-nested-args", check: func(b brokenRank) {
		b.complete()
		require.Empty(b.t, b.r.Warnings)
		b.metric("kernel.compute.count", 4)
	}},
	{entry: "hostile-names", check: func(b brokenRank) {
		b.complete()
		b.metric("kernel.compute.count", 5)
		b.metric("hccl.group.tp\x1b[2J<b>\"\n.count", 1) // JSON carries the name exactly, escaped
	}},
}

// Every entry of the corpus gives its documented exit code and message,
// in both output formats; the README documents every case.
func TestBrokenCorpus(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join(brokenDir, "README.md"))
	require.NoError(t, err)
	ents, err := os.ReadDir(brokenDir)
	require.NoError(t, err)
	var onDisk, inTable []string
	for _, e := range ents {
		if e.Name() != "README.md" {
			onDisk = append(onDisk, e.Name())
		}
	}
	for _, c := range brokenCases {
		inTable = append(inTable, c.entry)
	}
	sort.Strings(inTable)
	require.Equal(t, onDisk, inTable, "every corpus entry has a case, every case an entry")

	for _, c := range brokenCases {
		t.Run(c.entry, func(t *testing.T) {
			// the README row names the entry, its exit code and message
			row := ""
			for _, line := range strings.Split(string(readme), "\n") {
				if strings.HasPrefix(line, "| `"+c.entry) {
					row = line
				}
			}
			require.NotEmptyf(t, row, "README.md has no row for %s", c.entry)
			cells := strings.Split(row, " | ")
			require.GreaterOrEqual(t, len(cells), 4, row)
			require.Equal(t, string(rune('0'+c.code)), strings.TrimSpace(cells[2]), "README exit code for %s", c.entry)
			if c.stderr != "" {
				require.Contains(t, strings.ReplaceAll(row, `\|`, "|"), c.stderr, "README message for %s", c.entry)
			}

			path := filepath.Join(brokenDir, c.entry)
			for _, format := range []string{"text", "json"} {
				code, out, errs := run("analyze", path, "--format", format)
				require.Equal(t, c.code, code, "%s --format %s: %s", c.entry, format, errs)
				if c.code == ExitUsage {
					require.Empty(t, out)
					require.Equal(t, 1, strings.Count(errs, "\n"), errs)
					require.Contains(t, errs, c.stderr)
					require.True(t, strings.HasPrefix(errs, "npuprof: "+path), errs)
					continue
				}
				require.Empty(t, errs)
				if format == "text" {
					requireNoControl(t, out)
					continue
				}
				doc, err := results.Read(strings.NewReader(out), c.entry)
				require.NoError(t, err)
				require.Len(t, doc.Ranks, 1)
				c.check(brokenRank{t: t, doc: doc, r: &doc.Ranks[0]})
			}
		})
	}
}

// requireNoControl fails on any control character other than newline, and
// on invalid UTF-8, in terminal output.
func requireNoControl(t *testing.T, out string) {
	t.Helper()
	require.True(t, utf8.ValidString(out), "terminal output is not valid UTF-8")
	for i, r := range out {
		if r != '\n' && unicode.IsControl(r) {
			t.Fatalf("control character %U at byte %d: %q", r, i, out[max(0, i-40):min(len(out), i+40)])
		}
	}
}

// The hostile corpus entry, rendered: escaped in JSON, stripped in text,
// and the long name capped.
func TestHostileNamesRendered(t *testing.T) {
	path := filepath.Join(brokenDir, "hostile-names")
	_, out, _ := run("analyze", path, "--detail", "tables")
	requireNoControl(t, out)
	require.Contains(t, out, `<script>alert("x")</script>`, "the kernels table cuts names at 36 characters")
	require.Contains(t, out, "RED…")
	require.Contains(t, out, "tp [2J<b>\" ")
	require.NotContains(t, out, strings.Repeat("K", 61), "names are capped")

	_, js, _ := run("analyze", path, "--format", "json")
	require.True(t, utf8.ValidString(js))
	require.NotContains(t, js, "\x1b")
	require.Contains(t, js, `"hccl.group.tp\u001b[2J\u003cb\u003e\"\n.count": 1`, "metric keys from input are JSON-escaped")
}

// The terminal summary shows warnings with their first line numbers, and
// a PARTIAL line for a rank read from a file cut short.
func TestWarningsInTerminal(t *testing.T) {
	code, out, _ := run("analyze", filepath.Join(brokenDir, "csv-wrong-cell-count"), "--detail", "tables")
	require.Equal(t, ExitOK, code)
	requireText(t, out, "kernel_details.csv: skipped malformed rows (wrong number of cells: 3) (first at lines 3, 5, 7) (ranks 0)")

	path := filepath.Join(brokenDir, "truncated-mid-event")
	_, out, _ = run("analyze", path, "--detail", "tables")
	requireText(t, out, "  PARTIAL rank 0: "+filepath.Join(path, "trace_view.json")+" is truncated: it ends inside an event at byte 1143")
}
