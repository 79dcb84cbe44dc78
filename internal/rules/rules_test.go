package rules

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/npuprof/npuprof/internal/analysis"
	"github.com/npuprof/npuprof/internal/deploy"
	"github.com/npuprof/npuprof/internal/lang"
	"github.com/npuprof/npuprof/internal/pipeline"
	"github.com/npuprof/npuprof/internal/results"
	"github.com/npuprof/npuprof/internal/testutil"
	"github.com/npuprof/npuprof/internal/tracegen"
)

var (
	resMu   sync.Mutex
	resByID = map[string]*analysis.Result{}
)

// analyzed generates a built-in tracegen scenario once per test binary
// and returns its analysis.
func analyzed(t testing.TB, name string) *analysis.Result {
	t.Helper()
	sc, ok := tracegen.Lookup(name)
	require.True(t, ok, name)
	return analyzedScenario(t, sc)
}

// analyzedScenario generates sc once per test binary (by sc.Name) and
// returns its analysis.
func analyzedScenario(t testing.TB, sc tracegen.Scenario) *analysis.Result {
	t.Helper()
	name := sc.Name
	resMu.Lock()
	defer resMu.Unlock()
	if r, ok := resByID[name]; ok {
		return r
	}
	dir, err := os.MkdirTemp("", "npuprof-rules-"+name)
	require.NoError(t, err)
	defer os.RemoveAll(dir)
	_, err = tracegen.Generate(dir, sc)
	require.NoError(t, err)
	res, err := pipeline.Analyze(context.Background(), dir, pipeline.Options{TimelineSample: true})
	require.NoError(t, err)
	resByID[name] = res
	return res
}

func evaluate(t *testing.T, set *Set, res *analysis.Result, script *deploy.Script, facts ...string) *Report {
	t.Helper()
	fs, err := BuildFacts(res, deployment(script), facts)
	require.NoError(t, err)
	rep := Evaluate(set, &Input{Result: res, Facts: fs})
	if script != nil {
		rep.ApplyFixes(script, nil)
	}
	require.Empty(t, rep.Failed(), "no rule may fail")
	return rep
}

// deployment is what script says, as rules read it (nil: no script).
func deployment(script *deploy.Script) *Deployment {
	if script == nil {
		return nil
	}
	facts, invalid := script.FactsChecked()
	return NewDeployment(script.Path, facts, invalid)
}

func builtin(t *testing.T) *Set {
	t.Helper()
	set, err := Load()
	require.NoError(t, err)
	return set
}

func status(rep *Report, id string) results.Outcome {
	for _, o := range rep.Outcomes {
		if o.Rule == id {
			return o
		}
	}
	return results.Outcome{}
}

func finding(rep *Report, id string) *Fired {
	for i := range rep.Findings {
		if rep.Findings[i].Rule == id {
			return &rep.Findings[i]
		}
	}
	return nil
}

// The built-in rule ids are a public contract.
func TestBuiltinRuleIDs(t *testing.T) {
	set := builtin(t)
	var ids []string
	for _, r := range set.Rules {
		ids = append(ids, r.ID)
		require.True(t, r.Builtin)
		require.NotEmpty(t, r.Why, r.ID)
		require.NotEmpty(t, r.Docs, r.ID)
	}
	require.ElementsMatch(t, []string{"comm-ep-flashcomm", "moe-routing-cumsum", "graph-capture-sizes", "expert-imbalance",
		"event-wait-skew", "host-bound-free", "parallel-strategy", "env-hygiene", "vllm-ascend-upgrade", "prefix-cache", "mm-cache",
		"comm-bound", "host-bound", "aicpu-kernels", "moe-dispatch-combine",
		"service-dp-idle", "service-prefill-interference", "service-kv-pressure", "service-queueing", "service-cache-hit"}, ids)
}

// The acceptance scenarios of issue 3 on generated traces.
func TestScenarioFindings(t *testing.T) {
	set := builtin(t)
	for _, c := range []struct {
		scenario   string
		fire, hush []string
	}{
		{"ep-fc1-cumsum", []string{"comm-ep-flashcomm", "moe-routing-cumsum"}, []string{"env-hygiene", "expert-imbalance", "host-bound-free"}},
		{"ep-fc1-cumsum-steps", []string{"comm-ep-flashcomm", "moe-routing-cumsum"}, nil},
		{"ep-fc1", []string{"comm-ep-flashcomm"}, []string{"moe-routing-cumsum"}},
		{"noep-cumsum", []string{"moe-routing-cumsum"}, []string{"comm-ep-flashcomm"}},
		{"clean", nil, []string{"comm-ep-flashcomm", "moe-routing-cumsum", "expert-imbalance", "event-wait-skew", "host-bound-free"}},
		{"clean-steps", nil, []string{"comm-ep-flashcomm", "moe-routing-cumsum", "expert-imbalance"}},
		// the hot rank bounds each step and waits for no one: the others'
		// waits for it are expert-imbalance's, not event-wait-skew's
		{"hot-rank", []string{"expert-imbalance"}, []string{"comm-ep-flashcomm", "moe-routing-cumsum", "event-wait-skew"}},
		{"uncaptured-batch", []string{"graph-capture-sizes"}, []string{"comm-ep-flashcomm", "moe-routing-cumsum"}},
		{"captured-batch", nil, []string{"graph-capture-sizes", "comm-ep-flashcomm", "moe-routing-cumsum", "host-bound-free"}},
		{"host-bound", []string{"host-bound-free"}, []string{"comm-ep-flashcomm", "moe-routing-cumsum", "expert-imbalance"}},
	} {
		t.Run(c.scenario, func(t *testing.T) {
			rep := evaluate(t, set, analyzed(t, c.scenario), nil)
			for _, id := range c.fire {
				require.Equalf(t, results.StatusFired, status(rep, id).Status, "%s: %s", id, status(rep, id).Reason)
			}
			for _, id := range c.hush {
				require.Equalf(t, results.StatusClear, status(rep, id).Status, "%s: %s", id, status(rep, id).Reason)
			}
			// every rule has exactly one outcome, and findings are sorted by saving
			require.Len(t, rep.Outcomes, len(set.Rules))
			for i := 1; i < len(rep.Findings); i++ {
				a, _ := rep.Findings[i-1].Saving() // no estimate orders as 0
				b, _ := rep.Findings[i].Saving()
				require.GreaterOrEqual(t, a, b)
			}
		})
	}
}

func TestCumsumFinding(t *testing.T) {
	res := analyzed(t, "noep-cumsum")
	f := finding(evaluate(t, builtin(t), res, nil), "moe-routing-cumsum")
	require.NotNil(t, f)
	require.Contains(t, f.Title, "on the AI CPU")
	require.Contains(t, f.Fix, "TokenDispatcherWithAllGather.token_dispatch")
	require.Contains(t, f.Fix, "expert_tokens_num_type=0")
	require.Contains(t, f.Fix, "group_list_type = 0")
	// saving = the Cumsum time, mean over ranks
	var sum float64
	for _, rr := range res.Ranks {
		sum += rr.Metrics["moe.cumsum.time_us"]
	}
	require.InDelta(t, sum/float64(len(res.Ranks)), *f.SavingUs, 0.001)
	require.Equal(t, "high", f.Severity) // > 5% of the window
}

// comm-ep-flashcomm counts only the collectives that repeat in every MoE
// layer: the per-step logits all-gather does not make it fire, even with a
// zero threshold on all-gathers alone.
func TestFlashcommIgnoresLogitsAllGather(t *testing.T) {
	res := analyzed(t, "clean")
	for _, rr := range res.Ranks {
		require.Positive(t, rr.Metrics["hccl.allgather.count"], "the logits all-gather is there")
		_, ok := rr.Metrics["hccl.per_layer.allgather.count"]
		require.False(t, ok, "but it is not a per-layer collective")
	}
	set, err := Parse("strict.yaml", []byte(`rules:
  - id: any-allgather-per-layer
    title: t
    when: metric("hccl.per_layer.allgather.count") > 0
    fix: f
`))
	require.NoError(t, err)
	rep := evaluate(t, set, res, nil)
	require.Equal(t, results.StatusClear, status(rep, "any-allgather-per-layer").Status)
}

func TestGraphCaptureSizesNames25(t *testing.T) {
	set := builtin(t)
	res := analyzed(t, "uncaptured-batch")
	for _, facts := range [][]string{nil, {"max_num_seqs=25", "capture_sizes=1,2,4,8,16,24"}} {
		rep := evaluate(t, set, res, nil, facts...)
		f := finding(rep, "graph-capture-sizes")
		require.NotNil(t, f, "facts %v", facts)
		require.Contains(t, f.Fix, `--compilation-config '{"cudagraph_mode":"FULL_DECODE_ONLY","cudagraph_capture_sizes":[25]}'`)
		require.Contains(t, f.Title, "25")
	}
	// with 25 captured, it stays silent even when the profile looks eager
	rep := evaluate(t, set, res, nil, "capture_sizes=1,2,4,8,16,24,25")
	require.Equal(t, results.StatusClear, status(rep, "graph-capture-sizes").Status)
}

func TestExpertImbalanceNamesHotRank(t *testing.T) {
	sc, _ := tracegen.Lookup("hot-rank")
	f := finding(evaluate(t, builtin(t), analyzed(t, "hot-rank"), nil), "expert-imbalance")
	require.NotNil(t, f)
	require.Equal(t, []int{sc.HotRank}, f.Ranks)
	require.Contains(t, f.Title, "rank 5 ")
	require.Contains(t, f.Fix, "eplb_config")
	require.Contains(t, f.Fix, "dynamic_eplb")
	require.Contains(t, f.Fix, "expert_map_path")
	var hot *results.Evidence
	for i, e := range f.Evidence {
		if e.Metric == "moe.gmm.time_us" && e.Rank != nil {
			hot = &f.Evidence[i]
		}
	}
	require.NotNil(t, hot)
	require.Equal(t, 5, *hot.Rank)
}

// With the first field report's deployment script, the findings' edits
// render as one diff that, applied, gives the report's final command.
func TestFieldReportDiff(t *testing.T) {
	script, err := deploy.ReadFile("../../testdata/deploy/field-report-1.sh")
	require.NoError(t, err)
	rep := evaluate(t, builtin(t), analyzed(t, "ep-fc1-cumsum"), script)
	for _, id := range []string{"comm-ep-flashcomm", "graph-capture-sizes"} {
		f := finding(rep, id)
		require.NotNil(t, f, id)
		require.NotEmpty(t, f.Diff, id)
		_, err := testutil.ApplyUnifiedDiff(script.Text(), f.Diff)
		require.NoError(t, err, id)
	}
	after, err := testutil.ApplyUnifiedDiff(script.Text(), rep.Diff)
	require.NoError(t, err)
	require.NotContains(t, after, "--enable-expert-parallel")
	require.NotContains(t, after, "FLASHCOMM1")
	require.Contains(t, after, `--compilation-config '{"cudagraph_mode":"FULL_DECODE_ONLY","cudagraph_capture_sizes":[25]}'`)
	// the rest of the command is untouched
	for _, keep := range []string{"--tensor-parallel-size 8", "--max-num-seqs 25", "vllm serve /models/Qwen3-235B-A22B-W8A8", "export HCCL_OP_EXPANSION_MODE=AIV"} {
		require.Contains(t, after, keep)
	}
	s2, err := deploy.Parse("after.sh", after)
	require.NoError(t, err)
	require.Nil(t, s2.Serve.Lookup("--enable-expert-parallel"))
	require.Len(t, s2.Serve.Flags, len(script.Serve.Flags)-1)
}

func TestFactsInferredAndOverridden(t *testing.T) {
	res := analyzed(t, "ep-fc1-cumsum")
	fs, err := BuildFacts(res, nil, []string{"concurrency=25", "tp=4"})
	require.NoError(t, err)
	get := func(n string) results.FactValue { v, ok := fs.Get(n); require.True(t, ok, n); return v }
	require.Equal(t, true, get("expert_parallel").Value)
	require.Contains(t, get("expert_parallel").Source, "collectives on the ep group")
	require.Equal(t, true, get("flashcomm1").Value)
	require.Contains(t, get("flashcomm1").Source, "per MoE layer")
	// the profile's tp wins over --fact: what ran; the conflict is warned
	require.Equal(t, 8, get("tp").Value)
	require.Equal(t, "profile: parallel_group_info group tp has 8 ranks", get("tp").Source)
	require.Equal(t, []string{"conflict: tp is 8 in the profile (profile: parallel_group_info group tp has 8 ranks) but 4 in --fact tp=4; the rules use 8, what ran"}, fs.Warnings())
	require.Equal(t, 25, get("concurrency").Value)
	require.Equal(t, "decode", get("phase").Value)
	v, ok := fs.Env("HCCL_OP_EXPANSION_MODE")
	require.True(t, ok)
	require.Equal(t, "AIV", v)

	fs, err = BuildFacts(analyzed(t, "noep-cumsum"), nil, nil)
	require.NoError(t, err)
	fc1, _ := fs.Get("flashcomm1")
	require.Equal(t, false, fc1.Value)
	// an ep group alone (vLLM makes one for every MoE model) says nothing:
	// no MC2/all-to-all dispatch and no ep collectives leave it unknown
	_, known := fs.Get("expert_parallel")
	require.False(t, known)

	_, err = BuildFacts(res, nil, []string{"concurency=25"})
	require.ErrorContains(t, err, "unknown fact (closest: concurrency")
	_, err = BuildFacts(res, nil, []string{"tp=eight"})
	require.ErrorContains(t, err, "expected int")
}

func TestNotEvaluatedSaysWhy(t *testing.T) {
	set := builtin(t)
	res := analyzed(t, "noep-cumsum")
	rep := evaluate(t, set, res, nil)
	o := status(rep, "vllm-ascend-upgrade")
	require.Equal(t, results.StatusNotEvaluated, o.Status)
	require.Contains(t, o.Reason, "fact vllm_ascend_version unknown")
	rep = evaluate(t, set, res, nil, "vllm_ascend_version=v0.13.0rc1")
	require.Equal(t, results.StatusFired, status(rep, "vllm-ascend-upgrade").Status)
	rep = evaluate(t, set, res, nil, "vllm_ascend_version=v0.13.0")
	require.Equal(t, results.StatusClear, status(rep, "vllm-ascend-upgrade").Status)
	// parallel-strategy needs dp: inferred from the dp group (1 here) -> clear;
	// single request with DP 2 -> fires with the TP/DP swap
	require.Equal(t, results.StatusClear, status(evaluate(t, set, res, nil), "parallel-strategy").Status)
	rep = evaluate(t, set, withoutGroups(res), nil, "dp=4", "tp=4", "concurrency=1")
	f := finding(rep, "parallel-strategy")
	require.NotNil(t, f)
	require.Contains(t, f.Fix, "TP8xDP2 instead of TP4xDP4")
}

func TestEnvHygiene(t *testing.T) {
	set := builtin(t)
	res := analyzed(t, "clean")
	script, err := deploy.Parse("run.sh", "export HCCL_BUFFSIZE=200\nexport OMP_NUM_THREADS=8\nexport HCCL_OP_EXPANSION_MODE=AIV\nvllm serve m --tensor-parallel-size 8\n")
	require.NoError(t, err)
	rep := evaluate(t, set, res, script)
	f := finding(rep, "env-hygiene")
	require.NotNil(t, f)
	require.Contains(t, f.Title, "HCCL_BUFFSIZE")
	require.Contains(t, f.Title, "OMP_NUM_THREADS")
	require.NotContains(t, f.Title, "HCCL_OP_EXPANSION_MODE") // the script sets it
	after, err := testutil.ApplyUnifiedDiff(script.Text(), f.Diff)
	require.NoError(t, err)
	require.Contains(t, after, "export HCCL_BUFFSIZE=512\n")
	require.Contains(t, after, "export OMP_NUM_THREADS=1\n")
}

// A user rule with an unknown metric name fails to load with the file,
// line, column, rule id and the closest known names.
func TestUnknownMetricInUserRule(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "team.yaml")
	require.NoError(t, os.WriteFile(path, []byte(`rules:
  - id: allgather-budget
    title: too many all-gathers
    when: |
      metric("hccl.total.count") > 0 &&
        metric("hccl.allgathr.time_us") > 100
    fix: check FLASHCOMM1
`), 0o644))
	_, err := Load(path)
	require.Error(t, err)
	msg := err.Error()
	require.Contains(t, msg, path+":6:16: rule allgather-budget: when: unknown metric \"hccl.allgathr.time_us\"")
	require.Contains(t, msg, "closest: hccl.allgather.time_us")
}

func TestLoadErrors(t *testing.T) {
	for _, c := range []struct{ name, yaml, want string }{
		{"unknown key", "rules:\n  - id: a-b\n    title: t\n    whn: true\n    fix: f\n", `bad.yaml:4:5: rule #1: unknown key "whn"`},
		{"did you mean", "rules:\n  - id: a-b\n    title: t\n    whn: true\n    fix: f\n", "did you mean when?"},
		{"missing when", "rules:\n  - id: a-b\n    title: t\n    fix: f\n", "bad.yaml:2:5: rule a-b: missing when"},
		{"bad id", "rules:\n  - id: A_B\n    title: t\n    when: true\n    fix: f\n", `rule id "A_B"`},
		{"severity", "rules:\n  - id: a-b\n    title: t\n    severity: urgent\n    when: true\n    fix: f\n", `bad.yaml:4:15: rule a-b: severity "urgent"`},
		{"type error", "rules:\n  - id: a-b\n    title: t\n    when: metric(\"hccl.total.count\") > \"x\"\n    fix: f\n", "bad.yaml:4:38: rule a-b: when: invalid operation: > (mismatched types float64 and string)"},
		{"not bool", "rules:\n  - id: a-b\n    title: t\n    when: metric(\"hccl.total.count\")\n    fix: f\n", "expected bool"},
		{"unknown fact", "rules:\n  - id: a-b\n    title: t\n    when: fact.flashcom1\n    fix: f\n", `bad.yaml:4:16: rule a-b: when: unknown fact "flashcom1" (closest: flashcomm1`},
		{"unknown threshold", "rules:\n  - id: a-b\n    title: t\n    thresholds: {x: 1}\n    when: 2 > threshold.y\n    fix: f\n", `unknown threshold "y" (this rule's thresholds: x)`},
		{"dynamic name", "rules:\n  - id: a-b\n    title: t\n    when: metric(\"hccl.\" + \"total.count\") > 0\n    fix: f\n", "needs the metric name as a string literal"},
		{"template metric", "rules:\n  - id: a-b\n    title: t\n    when: true\n    fix: 'saves {{ us(metric(\"moe.cumsum.tme_us\")) }}'\n", `bad.yaml:5:30: rule a-b: fix: unknown metric "moe.cumsum.tme_us" (closest: moe.cumsum.time_us`},
		{"evidence metric", "rules:\n  - id: a-b\n    title: t\n    when: true\n    fix: f\n    evidence:\n      - metric: moe.cumsm.count\n", `bad.yaml:7:17: rule a-b: unknown metric "moe.cumsm.count" in evidence`},
		{"edit op", "rules:\n  - id: a-b\n    title: t\n    when: true\n    fix: f\n    edits:\n      - {op: delete_flag, name: --x}\n", `edit op "delete_flag"`},
		{"budget metric", "budgets:\n  - hccl.allgathr.time_us <= baseline * 1.05\n", `bad.yaml:2:5: budget: unknown metric "hccl.allgathr.time_us" (closest: hccl.allgather.time_us`},
		{"budget form", "budgets:\n  - hccl.allgather.time_us is small\n", "expected METRIC OP EXPRESSION"},
		{"baseline outside budget", "rules:\n  - id: a-b\n    title: t\n    when: baseline > 1\n    fix: f\n", "`baseline` is only defined in budgets"},
		{"yaml syntax", "rules: [\n", "bad.yaml:1:8: a list opened with [ is not closed with ]"},
		{"top key", "rule:\n  - id: a\n", `unknown key "rule"`},
		{"duplicate id", "rules:\n  - {id: a-b, title: t, when: 'true', fix: f}\n  - {id: a-b, title: t, when: 'true', fix: f}\n", "id already defined at bad.yaml:2"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse("bad.yaml", []byte(c.yaml))
			require.Error(t, err)
			require.Contains(t, err.Error(), c.want)
		})
	}
	// a user rule may not reuse a built-in id
	dir := t.TempDir()
	p := filepath.Join(dir, "dup.yaml")
	require.NoError(t, os.WriteFile(p, []byte("rules:\n  - {id: moe-routing-cumsum, title: t, when: 'true', fix: f}\n"), 0o644))
	_, err := Load(p)
	require.ErrorContains(t, err, "id already defined at internal/rules/builtin/moe-routing-cumsum.yaml")
}

func TestRuleThatFailsIsReported(t *testing.T) {
	set, err := Parse("x.yaml", []byte(`rules:
  - id: divides
    title: t
    when: int("x" + string(metric("moe.cumsum.count"))) > 1
    fix: f
  - id: needs-eventwait-on-rank-99
    title: t
    when: rank_metric("event_wait.time_us", 99) > 0
    fix: f
`))
	require.NoError(t, err)
	fs, _ := BuildFacts(analyzed(t, "clean"), nil, nil)
	rep := Evaluate(set, &Input{Result: analyzed(t, "clean"), Facts: fs})
	require.Equal(t, results.StatusFailed, status(rep, "divides").Status)
	require.Contains(t, status(rep, "divides").Reason, "x.yaml:2")
	o := status(rep, "needs-eventwait-on-rank-99")
	require.Equal(t, results.StatusNotEvaluated, o.Status)
	require.Contains(t, o.Reason, "unavailable on rank 99")
}

func TestBudgets(t *testing.T) {
	set, err := Parse("b.yaml", []byte(`budgets:
  - hccl.allgather.time_us <= baseline * 1.05
  - id: cumsum-free
    budget: moe.cumsum.count <= baseline
    severity: medium
`))
	require.NoError(t, err)
	res := analyzed(t, "ep-fc1-cumsum")
	fs, _ := BuildFacts(res, nil, nil)
	mean := func(m string) float64 {
		s := 0.0
		for _, rr := range res.Ranks {
			s += rr.Metrics[m]
		}
		return s / float64(len(res.Ranks))
	}
	// no baseline: not evaluated, with the reason
	rep := Evaluate(set, &Input{Result: res, Facts: fs})
	require.Equal(t, results.StatusNotEvaluated, rep.Outcomes[0].Status)
	require.Contains(t, rep.Outcomes[0].Reason, "--baseline")
	// a baseline 20% faster on all-gathers: over budget; cumsum equal: ok
	base := &results.Baseline{Path: "old.json", Metrics: map[string]float64{
		"hccl.allgather.time_us": mean("hccl.allgather.time_us") / 1.2, "moe.cumsum.count": mean("moe.cumsum.count")}}
	rep = Evaluate(set, &Input{Result: res, Facts: fs, Baseline: base})
	require.Equal(t, results.StatusFired, rep.Outcomes[0].Status)
	require.Equal(t, "budget/hccl.allgather.time_us", rep.Outcomes[0].Rule)
	require.Equal(t, results.StatusClear, rep.Outcomes[1].Status)
	f := finding(rep, "budget/hccl.allgather.time_us")
	require.Equal(t, results.SeverityHigh, f.Severity)
	require.InDelta(t, mean("hccl.allgather.time_us")-mean("hccl.allgather.time_us")/1.2*1.05, *f.SavingUs, 0.01)
}

// Every metric an analysis produces is in the catalog, so rules can name it.
func TestCatalogCoversAnalysis(t *testing.T) {
	for _, name := range []string{"ep-fc1-cumsum", "hot-rank", "captured-batch", "hot-experts"} {
		res := analyzed(t, name)
		for _, rr := range res.Ranks {
			for m := range rr.Metrics {
				_, ok := LookupMetric(m)
				require.True(t, ok, "metric %s is not in the catalog", m)
			}
			for m := range rr.Unavailable {
				// pass errors, metric families, and the per-step list and
				// its fields (JSON fields of ranks[].steps, not metrics)
				if strings.HasPrefix(m, "pass.") || strings.HasSuffix(m, ".*") || m == "steps" || strings.HasPrefix(m, "steps.") {
					continue
				}
				_, ok := LookupMetric(m)
				require.True(t, ok, "unavailable metric %s is not in the catalog", m)
			}
		}
		for m := range res.Cluster.Metrics {
			d, ok := LookupMetric(m)
			require.True(t, ok, m)
			require.True(t, d.IsCluster(), m)
		}
	}
}

func TestHostBoundFree(t *testing.T) {
	res := analyzed(t, "host-bound")
	script, err := deploy.Parse("serve.sh", "vllm serve m \\\n  --tensor-parallel-size 8\n")
	require.NoError(t, err)
	f := finding(evaluate(t, builtin(t), res, script), "host-bound-free")
	require.NotNil(t, f)
	// only the host launch gaps count: the ledger's host_gap, over its
	// steps, which the finding claims (ledger_entries)
	cm := res.Cluster.Metrics
	require.GreaterOrEqual(t, cm[analysis.MetricLedgerHostGapShare], 0.2)
	require.InDelta(t, cm[analysis.MetricLedgerHostGapUs]*cm[analysis.MetricLedgerStepsCount], *f.SavingUs, 0.01)
	require.Len(t, f.LedgerEntries, 1)
	require.Equal(t, "host_gap", f.LedgerEntries[0].Cause)
	require.InDelta(t, cm[analysis.MetricLedgerHostGapUs], f.LedgerEntries[0].TimeUs, 0.01)
	require.Len(t, f.LedgerEntries[0].StepsUs, int(cm[analysis.MetricLedgerStepsCount]))
	require.True(t, strings.HasPrefix(f.Title, "The device waits for the host's launches 44.7% of each step (host bound)"), f.Title)
	after, err := testutil.ApplyUnifiedDiff(script.Text(), f.Diff)
	require.NoError(t, err)
	require.Contains(t, after, "--async-scheduling")
	require.Contains(t, after, `--compilation-config '{"cudagraph_mode":"FULL_DECODE_ONLY"}'`)
	require.Contains(t, after, `--additional-config '{"enable_cpu_binding":true}'`)
}

// parallel-strategy compares the requests in flight over every replica
// with its threshold: the concurrency is a total; without it, one rank's
// decode batch times DP.
func TestParallelStrategyCountsAllReplicas(t *testing.T) {
	set := builtin(t)
	res := withoutGroups(analyzed(t, "noep-cumsum")) // --fact dp/tp: no profile groups to win
	require.Equal(t, 25.0, res.Ranks[0].Metrics["decode.batch.observed"])
	// 8 requests over DP 2: 4 per replica, but 8 in flight > 4 -> clear
	require.Equal(t, results.StatusClear, status(evaluate(t, set, res, nil, "dp=2", "tp=4", "concurrency=8"), "parallel-strategy").Status)
	// 4 in flight over DP 2 -> fires
	f := finding(evaluate(t, set, res, nil, "dp=2", "tp=4", "concurrency=4"), "parallel-strategy")
	require.NotNil(t, f)
	require.Contains(t, f.Title, "4 request(s) in flight over DP=2")
	// no concurrency: 25 per rank x DP 2 is far above 4 -> clear
	require.Equal(t, results.StatusClear, status(evaluate(t, set, res, nil, "dp=2", "tp=4"), "parallel-strategy").Status)

	// a 2-token decode batch: 2 x DP 2 = 4 in flight at most -> fires; DP 4 -> 8, clear
	sc, ok := tracegen.Lookup("noep-cumsum")
	require.True(t, ok)
	sc.Name, sc.Batch = "noep-cumsum-batch2", 2
	small := withoutGroups(analyzedScenario(t, sc))
	require.Equal(t, 2.0, small.Ranks[0].Metrics["decode.batch.observed"])
	f = finding(evaluate(t, set, small, nil, "dp=2", "tp=4"), "parallel-strategy")
	require.NotNil(t, f)
	require.Contains(t, f.Title, "4 request(s) in flight over DP=2")
	require.Contains(t, f.Fix, "(at most: 2 per rank x DP 2)")
	require.Equal(t, results.StatusClear, status(evaluate(t, set, small, nil, "dp=4", "tp=4"), "parallel-strategy").Status)
}

// --fact values that no size, count or rate can have are usage errors.
// NaN and Inf (which strconv.ParseFloat accepts) used to pass, and then
// the JSON document could not be written: exit 3, "json: unsupported
// value: NaN", for a typo.
func TestFactOverrideRejectsImpossibleNumbers(t *testing.T) {
	res := analyzed(t, "ep-fc1-cumsum")
	for _, kv := range []string{"serving.output_tps=NaN", "serving.concurrency=Inf", "serving.ttft_ms=-Inf",
		"serving.kv_cache_usage=-0.5", "concurrency=-5", "tp=-8", "capture_sizes=1,-2,4"} {
		_, err := BuildFacts(res, nil, []string{kv})
		require.ErrorContains(t, err, "expected a finite", kv)
		require.ErrorContains(t, err, "--fact "+kv, kv)
	}
	for _, kv := range []string{"serving.output_tps=1234.5", "concurrency=0", "capture_sizes=1,2,4"} {
		_, err := BuildFacts(res, nil, []string{kv})
		require.NoError(t, err, kv)
	}
}

// A rule file that cannot be read is named once, and an empty name (an
// unset shell variable) says so instead of ": cannot read rule file: open
// : no such file or directory".
func TestLoadUnreadableRuleFile(t *testing.T) {
	dir := t.TempDir()
	_, err := Load(dir)
	require.EqualError(t, err, dir+": cannot read rule file: is a directory")
	_, err = Load(filepath.Join(dir, "none.yaml"))
	require.EqualError(t, err, filepath.Join(dir, "none.yaml")+": cannot read rule file: no such file or directory")
	_, err = Load("")
	require.EqualError(t, err, "--rules: the file name is empty: expected a rule FILE (YAML, see docs/rules.md)")
}

// join_ints joins integers from any list an expression makes: a fact
// ([]int), a list literal or filter()'s result ([]any of numbers). A list
// literal was refused at load time ("cannot use []interface {} as
// argument (type []int)").
func TestJoinIntsTakesAnyIntegerList(t *testing.T) {
	set, err := Parse("j.yaml", []byte(`rules:
  - id: joins
    title: 'sizes {{ join_ints([1, 2, 3], ",") }}; big {{ join_ints(filter(fact.capture_sizes, # > 4), "+") }}; ranks {{ join_ints(ranks, " ") }}'
    when: "true"
    fix: f
`))
	require.NoError(t, err)
	res := analyzed(t, "clean")
	rep := evaluate(t, set, res, nil, "capture_sizes=1,2,4,8,16")
	f := finding(rep, "joins")
	require.NotNil(t, f)
	require.Equal(t, "sizes 1,2,3; big 8+16; ranks 0 1 2 3 4 5 6 7", f.Title)

	set, err = Parse("j.yaml", []byte(`rules:
  - id: joins-text
    title: '{{ join_ints(["a"], ",") }}'
    when: "true"
    fix: f
`))
	require.NoError(t, err)
	fs, _ := BuildFacts(res, nil, nil)
	rep = Evaluate(set, &Input{Result: res, Facts: fs})
	require.Equal(t, results.StatusFailed, status(rep, "joins-text").Status)
	require.Contains(t, status(rep, "joins-text").Reason, "join_ints: element 0 is not an integer")
}

// A --fact vllm_ascend_version that is not a version is the user's typo:
// refused when given (exit 2), not left to make vllm-ascend-upgrade fail
// at run time (exit 3, "internal error").
func TestFactOverrideRejectsBadVersionAndPhase(t *testing.T) {
	res := analyzed(t, "ep-fc1-cumsum")
	_, err := BuildFacts(res, nil, []string{"vllm_ascend_version=banana"})
	require.ErrorContains(t, err, `--fact vllm_ascend_version=banana: version "banana": expected vMAJOR.MINOR.PATCH[rcN]`)
	_, err = BuildFacts(res, nil, []string{"phase=train"})
	require.ErrorContains(t, err, "--fact phase=train: expected decode or prefill")
	for _, kv := range []string{"vllm_ascend_version=v0.13.0rc2", "vllm_ascend_version=0.11.0", "phase=prefill"} {
		fs, err := BuildFacts(res, nil, []string{kv})
		require.NoError(t, err, kv)
		rep := Evaluate(builtin(t), &Input{Result: res, Facts: fs})
		require.Empty(t, rep.Failed(), kv)
	}
}

// A finding whose edits the script cannot take keeps firing, without a
// diff and saying why; the combined diff leaves its edits out.
func TestFindingSurvivesAnUneditableScript(t *testing.T) {
	set := builtin(t)
	res := analyzed(t, "ep-fc1-cumsum")
	script, err := deploy.Parse("run.sh", "#!/bin/bash\nexport VLLM_ASCEND_ENABLE_FLASHCOMM1=1\nvllm serve m --tensor-parallel-size 8 --enable-expert-parallel --compilation-config '[1,2]'\n")
	require.NoError(t, err)
	rep := evaluate(t, set, res, script)
	f := finding(rep, "graph-capture-sizes")
	require.NotNil(t, f, "the finding stands")
	require.Empty(t, f.Diff)
	require.Contains(t, f.DiffError, "--compilation-config value: not a JSON object")
	require.Equal(t, results.StatusFired, status(rep, "graph-capture-sizes").Status)
	require.Empty(t, rep.Failed())
	// the other findings' edits still make the combined diff
	fc := finding(rep, "comm-ep-flashcomm")
	require.NotNil(t, fc)
	require.NotEmpty(t, fc.Diff)
	require.Empty(t, fc.DiffError)
	require.Contains(t, rep.Diff, "-export VLLM_ASCEND_ENABLE_FLASHCOMM1=1")
	require.NotContains(t, rep.Diff, "cudagraph_capture_sizes")
}

// --fact cudagraph_mode takes vLLM's CUDAGraphMode names (any case, stored
// upper case) and refuses anything else naming the closest valid one; a
// deployment script's unknown value is a warning and the fact unknown.
func TestCUDAGraphModeFact(t *testing.T) {
	fs := NewFactSet()
	require.NoError(t, fs.SetString("cudagraph_mode=full_decode_only", "--fact"))
	v, _ := fs.Get("cudagraph_mode")
	require.Equal(t, "FULL_DECODE_ONLY", v.Value)
	for raw, closest := range map[string]string{"FULL_DECODE": "FULL_DECODE_ONLY", "piecewse": "PIECEWISE", "FULL_AND_PIECEWIZE": "FULL_AND_PIECEWISE", "non": "NONE"} {
		err := NewFactSet().SetString("cudagraph_mode="+raw, "--fact")
		require.Error(t, err, raw)
		require.Contains(t, err.Error(), "--fact cudagraph_mode="+raw+": cudagraph_mode \""+raw+"\" is not a vLLM CUDAGraphMode (NONE, PIECEWISE, FULL, FULL_DECODE_ONLY, FULL_AND_PIECEWISE); closest: "+closest)
	}

	s, err := deploy.Parse("serve.sh", "vllm serve m --compilation-config '{\"cudagraph_mode\":\"FULL_DECODE\"}'\n")
	require.NoError(t, err)
	fs, err = BuildFacts(nil, deployment(s), nil)
	require.NoError(t, err)
	_, known := fs.Get("cudagraph_mode")
	require.False(t, known)
	require.Equal(t, []string{`serve.sh:1 (--compilation-config): cudagraph_mode "FULL_DECODE" is not a vLLM CUDAGraphMode (NONE, PIECEWISE, FULL, FULL_DECODE_ONLY, FULL_AND_PIECEWISE); closest: FULL_DECODE_ONLY; the fact is left unknown`}, fs.Warnings())
}

// The EPLB edit uses the keys the running vLLM-Ascend reads: top-level
// keys up to v0.13.0rc1, eplb_config from v0.13.0rc2 (#5533), and the
// newest form with a note when the version is unknown. The diff against a
// script carries the same form.
func TestExpertImbalanceEPLBKeysByVersion(t *testing.T) {
	res := analyzed(t, "hot-rank")
	script, err := deploy.Parse("serve.sh", "vllm serve /models/Qwen3-235B-A22B-W8A8 --tensor-parallel-size 8 --enable-expert-parallel\n")
	require.NoError(t, err)
	for _, c := range []struct {
		facts    []string
		want     string
		not      string
		noteHave string
	}{
		{[]string{"vllm_ascend_version=v0.13.0rc1"}, `{"dynamic_eplb":true,"init_redundancy_expert":8}`, "eplb_config", "v0.13.0rc1 reads the top-level EPLB keys"},
		{[]string{"vllm_ascend_version=v0.12.0rc1"}, `{"dynamic_eplb":true,"init_redundancy_expert":8}`, "eplb_config", "reads the top-level EPLB keys"},
		{[]string{"vllm_ascend_version=v0.13.0rc2"}, `{"eplb_config":{"dynamic_eplb":true,"num_redundant_experts":8}}`, "init_redundancy_expert", "v0.13.0rc2 reads the nested eplb_config"},
		{nil, `{"eplb_config":{"dynamic_eplb":true,"num_redundant_experts":8}}`, "", "the vLLM-Ascend version is unknown"},
	} {
		f := finding(evaluate(t, builtin(t), res, script, c.facts...), "expert-imbalance")
		require.NotNil(t, f, "%v", c.facts)
		require.Contains(t, f.Fix, "--additional-config '"+c.want+"'", "%v", c.facts)
		require.Contains(t, f.Fix, c.noteHave, "%v", c.facts)
		require.Contains(t, f.Diff, c.want, "%v", c.facts)
		if c.not != "" {
			require.NotContains(t, f.Diff, c.not, "%v", c.facts)
		}
	}
}

// FLASHCOMM1 off: the --additional-config key enable_flashcomm1 exists from
// v0.20.2rc1 (#9064); on v0.13 only the environment variable is unset.
func TestFlashcommEditByVersion(t *testing.T) {
	res := analyzed(t, "ep-fc1-cumsum")
	script, err := deploy.Parse("serve.sh", "export VLLM_ASCEND_ENABLE_FLASHCOMM1=1\nvllm serve /models/Qwen3-235B-A22B-W8A8 --tensor-parallel-size 8 --enable-expert-parallel --additional-config '{\"enable_cpu_binding\":true}'\n")
	require.NoError(t, err)
	f := finding(evaluate(t, builtin(t), res, script, "vllm_ascend_version=v0.13.0rc1"), "comm-ep-flashcomm")
	require.NotNil(t, f)
	require.Contains(t, f.Diff, "-export VLLM_ASCEND_ENABLE_FLASHCOMM1=1")
	require.NotContains(t, f.Diff, "enable_flashcomm1")
	f = finding(evaluate(t, builtin(t), res, script, "vllm_ascend_version=v0.20.2rc1"), "comm-ep-flashcomm")
	require.NotNil(t, f)
	require.Contains(t, f.Diff, `"enable_flashcomm1":false`)
	// every release with FLASHCOMM1 asserts expert parallel for MoE
	// (platform.py from v0.15.0rc1, #5632, until #13946 removed FLASHCOMM1)
	require.Contains(t, f.Fix, "\nFLASHCOMM1 on MoE requires --enable-expert-parallel, and on one A2\n")
	for _, r := range Releases() {
		for _, c := range r.Changes {
			require.NotContains(t, c.What, "no longer requires expert parallel", "#%d", c.PR)
		}
	}
}

// The first field report's final script (expert parallel off) on a capture
// of that deployment: no conflict about expert_parallel, although the
// profile has an ep group (vLLM creates one for every MoE model). A capture
// with the MC2 dispatcher says expert parallel ran.
func TestNoFalseExpertParallelConflict(t *testing.T) {
	script, err := deploy.ReadFile("../../testdata/deploy/field-report-1-final.sh")
	require.NoError(t, err)
	facts, invalid := script.FactsChecked()
	for _, name := range []string{"field-fixed", "noep-cumsum", "clean"} {
		res := analyzed(t, name)
		fs, err := BuildFacts(res, NewDeployment(script.Path, facts, invalid), nil)
		require.NoError(t, err)
		for _, w := range fs.Warnings() {
			require.NotContains(t, w, "expert_parallel", name)
		}
		ep, ok := fs.Get("expert_parallel")
		require.True(t, ok)
		require.Equal(t, false, ep.Value, name)
		require.Contains(t, ep.Source, "field-report-1-final.sh", "the script says it: %s", name)
	}
	fs, err := BuildFacts(analyzed(t, "a3-tp4dp4-rc1"), nil, nil)
	require.NoError(t, err)
	ep, ok := fs.Get("expert_parallel")
	require.True(t, ok)
	require.Equal(t, true, ep.Value)
	require.Contains(t, ep.Source, "mc2 dispatcher")
}

// Before v0.11.0rc0 vLLM-Ascend reads no dynamic EPLB key of either form
// (ascend_config.py at v0.10.2rc1 reads only expert_map_path): the fix
// offers the static map at the top level and the diff writes no EPLB key
// or DYNAMIC_EPLB; v0.11.0rc0 gets the top-level keys.
func TestExpertImbalanceNoDynamicEPLBBeforeV011(t *testing.T) {
	res := analyzed(t, "hot-rank")
	script, err := deploy.Parse("serve.sh", "vllm serve /models/Qwen3-235B-A22B-W8A8 --tensor-parallel-size 8 --enable-expert-parallel\n")
	require.NoError(t, err)
	f := finding(evaluate(t, builtin(t), res, script, "vllm_ascend_version=v0.10.2rc1"), "expert-imbalance")
	require.NotNil(t, f)
	require.Contains(t, f.Fix, "v0.10.2rc1 reads no dynamic EPLB keys (dynamic_eplb and init_redundancy_expert come with v0.11.0rc0): balance the experts with a static placement from a recorded map (\"expert_map_path\": \"/path/expert_map.json\" (top level))")
	require.NotContains(t, f.Fix, "--additional-config '")
	require.Empty(t, f.Actions)
	require.Empty(t, f.Diff)

	// v0.11.0rc0, and the v0.9.1 branch (dynamic_eplb from v0.9.1rc2):
	// the top-level keys
	for _, v := range []string{"v0.11.0rc0", "v0.9.1"} {
		f = finding(evaluate(t, builtin(t), res, script, "vllm_ascend_version="+v), "expert-imbalance")
		require.NotNil(t, f, v)
		require.Contains(t, f.Fix, "Balance the experts with EPLB:\n  --additional-config '{\"dynamic_eplb\":true,\"init_redundancy_expert\":8}'  (and export DYNAMIC_EPLB=true)\n("+v+" reads the top-level EPLB keys; eplb_config comes with v0.13.0rc2, #5533)\nor a static placement", v)
		require.Contains(t, f.Diff, "DYNAMIC_EPLB=true", v)
	}

	fs, err := BuildFacts(res, deployment(script), []string{"vllm_ascend_version=v0.10.2rc1"})
	require.NoError(t, err)
	zf := finding(Evaluate(builtin(t), &Input{Result: res, Facts: fs, Lang: lang.ZH}), "expert-imbalance")
	require.NotNil(t, zf)
	require.NotContains(t, zf.Fix, "--additional-config '")
	require.Contains(t, zf.Fix, "v0.10.2rc1 不读取动态 EPLB 键")
}

// The Cumsum fix names the running version's code: the folder
// (vllm_ascend/ops/moe/ before v0.12.0rc1), the routing op
// (MoeInitRoutingCustom from v0.13.0rc2 until v0.25.1rc1, else
// MoeInitRoutingV2), and says when the version predates the call
// (before v0.10.2rc1). An unknown version reads as v0.13.0rc2 to v0.24.x.
func TestCumsumFixNamesTheVersionsCode(t *testing.T) {
	res := analyzed(t, "field-cumsum")
	for _, c := range []struct{ version, dir, op, first string }{
		{"", "vllm_ascend/ops/fused_moe/", "MoeInitRoutingCustom", "In "},
		{"v0.10.0rc1", "vllm_ascend/ops/moe/", "MoeInitRoutingV2", "v0.10.0rc1 routes this path without expert_tokens_num_type: the change below is to the code of v0.10.2rc1 and later.\nIn "},
		{"v0.11.0", "vllm_ascend/ops/moe/", "MoeInitRoutingV2", "In "},
		{"v0.13.0rc1", "vllm_ascend/ops/fused_moe/", "MoeInitRoutingV2", "In "},
		{"v0.13.0", "vllm_ascend/ops/fused_moe/", "MoeInitRoutingCustom", "In "},
		{"v0.25.1rc1", "vllm_ascend/ops/fused_moe/", "MoeInitRoutingV2", "In "},
	} {
		var facts []string
		if c.version != "" {
			facts = []string{"vllm_ascend_version=" + c.version}
		}
		f := finding(evaluate(t, builtin(t), res, nil, facts...), "moe-routing-cumsum")
		require.NotNil(t, f, c.version)
		require.True(t, strings.HasPrefix(f.Fix, c.first+c.dir+"token_dispatcher.py, TokenDispatcherWithAllGather.token_dispatch:\n"), "%s: %s", c.version, f.Fix)
		require.Contains(t, f.Fix, "so "+c.op+" writes the cumulative token counts itself\nand cumsum_group_list ("+c.dir+"moe_mlp.py)", c.version)
	}
}
