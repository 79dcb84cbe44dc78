package main

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/npuprof/npuprof/internal/testutil"
)

// vllmWords are what a finding on a job that is not vLLM serving must not
// name: vLLM itself, its flags, variables and config keys, its tutorials,
// and the models the vLLM rules were written for.
var vllmWords = regexp.MustCompile(`(?i)vllm|qwen|--compilation-config|--additional-config|--async-scheduling|cudagraph|enable_cpu_binding|multistream_overlap|flashcomm|tutorial`)

// On the real all-reduce training samples (text level0 and level1, DB
// level1) the workload is training, a communication finding names the
// all-reduce and its share of the window, and no finding speaks of vLLM.
func TestRealTrainingSamplesContext(t *testing.T) {
	for _, dir := range []string{"text/level0", "text/level1", "db/level1"} {
		t.Run(dir, func(t *testing.T) {
			in := testutil.Sample(t, "Ascend-msinsight/test/data/pytorch/"+dir)
			code, out, errs := run("analyze", in, "--format", "json")
			require.Equal(t, ExitOK, code, errs)
			var doc struct {
				Context struct {
					Workload string   `json:"workload"`
					Evidence []string `json:"evidence"`
				} `json:"context"`
				Findings []struct {
					Rule, Title, Fix string
					Evidence         []struct{ Metric, Note string }
				} `json:"findings"`
				Rules []struct{ Rule, Status, Reason string } `json:"rules"`
			}
			require.NoError(t, json.Unmarshal([]byte(out), &doc))
			require.Equal(t, "training", doc.Context.Workload)
			require.NotEmpty(t, doc.Context.Evidence)
			require.Contains(t, strings.Join(doc.Context.Evidence, "\n"), "Optimizer.step#SGD.step")
			comm := false
			for _, f := range doc.Findings {
				text := f.Title + "\n" + f.Fix
				for _, e := range f.Evidence {
					text += "\n" + e.Metric + " " + e.Note
				}
				require.Falsef(t, vllmWords.MatchString(text), "finding %s names vLLM: %q", f.Rule, vllmWords.FindString(text))
				if strings.Contains(f.Rule, "comm") {
					comm = true
					require.Regexp(t, `all-reduce .* [0-9.]+% of the window`, f.Title)
				}
			}
			require.True(t, comm, "no communication finding")
			for _, o := range doc.Rules {
				if o.Rule == "host-bound-free" || o.Rule == "event-wait-skew" {
					require.Equal(t, "not_applicable", o.Status, o.Rule)
					require.Contains(t, o.Reason, "workload training")
				}
			}
			// the summary's header says it too
			_, text, _ := run("analyze", in)
			require.Contains(t, text, "\n  workload: training (")
		})
	}
}
