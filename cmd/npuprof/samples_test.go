package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/npuprof/npuprof/internal/parser"
	"github.com/npuprof/npuprof/internal/testutil"
)

// profile files npuprof accepts on their own
var reProfileFile = regexp.MustCompile(`^(trace_view\.json|msprof(_slice_\d+)?_\d+\.json|ascend_pytorch_profiler(_\d+)?\.db|msprof_\d+\.db)$`)

// Every profile in the real samples (each rank folder, each trace or
// database file on its own, and the torch_npu captures as one mixed
// cluster) is
// analyzed without error: exit 0, a JSON document, no failed pass.
func TestEverySampleProfileAnalyzes(t *testing.T) {
	root := testutil.SamplesDir(t)
	var paths []string
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			if reProfileFile.MatchString(d.Name()) {
				paths = append(paths, p)
			}
			return nil
		}
		if srcs, err := parser.Detect(p); err == nil && len(srcs) == 1 && srcs[0].Root == p {
			paths = append(paths, p)
		}
		return nil
	})
	require.NoError(t, err)
	// the torch_npu captures (text and db, levels 0-2) as one mixed cluster
	mixed := filepath.Join(root, "Ascend-msinsight", "test", "data", "pytorch")
	paths = append(paths, mixed)
	formats := map[string]bool{}
	for _, p := range paths {
		rel, _ := filepath.Rel(root, p)
		t.Run(rel, func(t *testing.T) {
			code, out, errs := run("analyze", p, "--format", "json", "--quiet")
			require.Equalf(t, ExitOK, code, "stderr: %s", errs)
			var doc struct {
				Input struct {
					Formats map[string]string `json:"formats"`
				} `json:"input"`
				Ranks  []json.RawMessage `json:"ranks"`
				Errors []any             `json:"errors"`
				Notes  []string          `json:"notes"`
			}
			require.NoError(t, json.Unmarshal([]byte(out), &doc))
			require.NotEmpty(t, doc.Ranks)
			require.Empty(t, doc.Errors)
			for _, f := range doc.Input.Formats {
				formats[f] = true
			}
			if p == mixed {
				require.Contains(t, strings.Join(doc.Notes, "\n"), "appears twice", "the sample tree holds several captures of ranks 0 and 1")
			}
		})
	}
	require.True(t, formats["torch_npu_text"])
	require.True(t, formats["torch_npu_db"])
	require.GreaterOrEqual(t, len(paths), 12)
}

// A database named by a relative path (as a user types it) opens: SQLite
// takes a file: URI, where a relative path's first element would be read
// as the URI's authority ("invalid uri authority: db").
func TestDBSampleRelativePath(t *testing.T) {
	root := testutil.Sample(t, "Ascend-msinsight/test/data/pytorch")
	t.Chdir(root)
	for _, rel := range []string{"db/level1", "db/level1/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/ascend_pytorch_profiler_0.db"} {
		var out, errb bytes.Buffer
		code := Main([]string{"analyze", rel, "--format", "json", "-q"}, nil, &out, &errb)
		require.Equal(t, ExitOK, code, "%s: %s", rel, errb.String())
		require.NotContains(t, errb.String(), "not a readable SQLite database")
		require.Contains(t, out.String(), `"kind": "torch_npu_db"`, rel)
	}
}
