package rules

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/npuprof/npuprof/internal/analysis"
	"github.com/npuprof/npuprof/internal/deploy"
	"github.com/npuprof/npuprof/internal/results"
)

// The version table: vLLM-Ascend's compatibility matrix lines the rules
// name, each with its source.
func TestVersionTable(t *testing.T) {
	rc1, ok := LookupRelease("v0.13.0rc1")
	require.True(t, ok)
	require.Equal(t, [3]string{"8.3.RC2", "2.8.0", "v0.13.0"}, [3]string{rc1.CANN, rc1.TorchNPU, rc1.VLLM})
	rc2, ok := LookupRelease("0.13.0rc2")
	require.True(t, ok)
	require.Equal(t, [4]string{"8.5.0", "2.8.0", "2.8.0.post1", "2026-01-24"}, [4]string{rc2.CANN, rc2.Torch, rc2.TorchNPU, rc2.Date})
	var prs []int
	for _, c := range rc2.Changes {
		prs = append(prs, c.PR)
		require.Contains(t, c.Source, "vllm-ascend.md")
	}
	require.Subset(t, prs, []int{5848, 5962})
	require.Contains(t, rc2.Source, "versioning_policy.md")
	prev := ""
	for _, r := range Releases() {
		require.NotEmpty(t, r.Source, r.Version)
		require.NotEmpty(t, r.Date, r.Version)
		if prev != "" {
			c, err := CompareVersions(prev, r.Version)
			require.NoError(t, err)
			require.Equal(t, -1, c, "%s before %s", prev, r.Version)
		}
		prev = r.Version
	}
	_, ok = LookupRelease("v0.12.5")
	require.False(t, ok)

	for _, bad := range []string{
		"sources: {m: x}\nreleases: [{version: v1.0.0, vllm: v1, cann: '8', torch_npu: '2', source: nope}]",
		"sources: {m: x}\nreleases: [{version: latest, vllm: v1, cann: '8', torch_npu: '2', source: m}]",
		"sources: {m: x}\nreleases: [{version: v1.0.0, vllm: v1, torch_npu: '2', source: m}]",
		"sources: {m: x}\nreleases: [{version: v1.0.0, vllm: v1, cann: '8', torch_npu: '2', source: m}, {version: 1.0.0, vllm: v1, cann: '8', torch_npu: '2', source: m}]",
		// a change without its path, with an unknown dispatcher, shrinking no metric
		"sources: {m: x}\nreleases: [{version: v1.0.0, vllm: v1, cann: '8', torch_npu: '2', source: m, changes: [{pr: 1, what: w, source: m}]}]",
		"sources: {m: x}\nreleases: [{version: v1.0.0, vllm: v1, cann: '8', torch_npu: '2', source: m, changes: [{pr: 1, what: w, dispatchers: [mc3], models: [any], kernels: [k], source: m}]}]",
		"sources: {m: x}\nreleases: [{version: v1.0.0, vllm: v1, cann: '8', torch_npu: '2', source: m, changes: [{pr: 1, what: w, dispatchers: [any], models: [any], kernels: [k], shrinks: [moe.nope], source: m}]}]",
	} {
		_, err := parseVersionTable([]byte(bad))
		require.Error(t, err, bad)
	}
}

// withoutVersions is res with no version on any rank (a mid-era
// profiler_info), so the running stack comes from the table.
func withoutVersions(res *analysis.Result) *analysis.Result {
	out := *res
	out.Ranks = nil
	for _, rr := range res.Ranks {
		c := *rr
		c.CANN, c.TorchNPU = "", ""
		out.Ranks = append(out.Ranks, &c)
	}
	return &out
}

// The upgrade names the target with its CANN and torch_npu pair from the
// table, from what runs now: the profile's versions, else the running
// release's line.
func TestUpgradeNamesTheStackPair(t *testing.T) {
	set := builtin(t)
	res := analyzed(t, "noep-cumsum")
	rep := evaluate(t, set, withoutVersions(res), nil, "vllm_ascend_version=v0.13.0rc1")
	f := finding(rep, "vllm-ascend-upgrade")
	require.NotNil(t, f, "%+v", status(rep, "vllm-ascend-upgrade"))
	require.Equal(t, "vLLM-Ascend v0.13.0rc1: v0.13.0rc2 has fixes for this MoE decode", f.Title)
	require.Contains(t, f.Fix, "to v0.13.0rc2 or later, with CANN 8.3.RC2 → 8.5.0, torch_npu 2.8.0 → 2.8.0.post1 and triton-ascend 3.2.0\n(vLLM v0.13.0")
	require.Contains(t, f.Fix, "#5332 MoeInitRoutingCustom routing kernel (AllGather dispatcher; op added by #5251) (MoeInitRoutingV2, MoeInitRoutingCustom; would shrink moe.routing.time_us ")
	require.Contains(t, f.Fix, "#5848 FLASHCOMM1 for Qwen3-VL")
	require.Contains(t, f.Fix, "Not for this profile: #5962 (nothing to shrink: event_wait.main_stream.kernel.time_us, ledger.stream_wait.time_us measured 0)")
	require.Contains(t, f.Fix, "v0.13.0 (CANN 8.5.0, torch_npu 2.8.0.post2) adds #6258")

	// the profile's profiler_info says what runs (tracegen writes 8.1.RC1 / 2.5.1.post1)
	rep = evaluate(t, set, res, nil, "vllm_ascend_version=v0.13.0rc1")
	require.Contains(t, finding(rep, "vllm-ascend-upgrade").Fix, "CANN 8.1.RC1 → 8.5.0, torch_npu 2.5.1.post1 → 2.8.0.post1 and triton-ascend 3.2.0")
	// --fact names them too; a version already there says so
	rep = evaluate(t, set, withoutVersions(res), nil, "vllm_ascend_version=v0.12.0rc1", "cann_version=8.5.0")
	require.Contains(t, finding(rep, "vllm-ascend-upgrade").Fix, "CANN 8.5.0 (already), torch_npu 2.8.0 → 2.8.0.post1 and triton-ascend 3.2.0")
	// a release the table does not hold: the pair of the target only
	rep = evaluate(t, set, withoutVersions(res), nil, "vllm_ascend_version=v0.12.5")
	fx := finding(rep, "vllm-ascend-upgrade").Fix
	require.Contains(t, fx, "with CANN 8.5.0, torch_npu 2.8.0.post1 and triton-ascend 3.2.0\n")
	require.Contains(t, fx, "#5332 MoeInitRoutingCustom")
}

// Versions come from every place the capture carries them, with their
// source; the profile's (what ran) win over the script's, with a conflict.
func TestVersionFactsAndConflicts(t *testing.T) {
	res := analyzed(t, "noep-cumsum")
	script, err := deploy.Parse("serve.sh", `#!/bin/bash
# pip list
# vllm-ascend          0.13.0rc1
# torch-npu            2.8.0
source /usr/local/Ascend/ascend-toolkit/8.3.RC2/set_env.sh
pip install vllm==0.13.0
vllm serve /models/Qwen3-235B-A22B --tensor-parallel-size 4
`)
	require.NoError(t, err)
	fs, err := BuildFacts(res, deployment(script), nil)
	require.NoError(t, err)
	get := func(n string) results.FactValue { v, ok := fs.Get(n); require.True(t, ok, n); return v }
	require.Equal(t, results.FactValue{Name: "vllm_ascend_version", Value: "v0.13.0rc1", Source: "serve.sh:3 (pip list: vllm-ascend 0.13.0rc1)"}, get("vllm_ascend_version"))
	require.Equal(t, results.FactValue{Name: "vllm_version", Value: "v0.13.0", Source: "serve.sh:6 (vllm==0.13.0)"}, get("vllm_version"))
	// profiler_info wins: it is what ran
	require.Equal(t, results.FactValue{Name: "cann_version", Value: "8.1.RC1", Source: "profile: rank 0 profiler_info"}, get("cann_version"))
	require.Equal(t, "2.5.1.post1", get("torch_npu_version").Value)
	warned := fs.Warnings()
	require.Contains(t, warned, "conflict: cann_version is 8.1.RC1 in the profile (profile: rank 0 profiler_info) but 8.3.RC2 in serve.sh:5 (CANN toolkit); the rules use 8.1.RC1, what ran")
	require.Contains(t, warned, "conflict: torch_npu_version is 2.5.1.post1 in the profile (profile: rank 0 profiler_info) but 2.8.0 in serve.sh:4 (pip list: torch-npu 2.8.0); the rules use 2.5.1.post1, what ran")

	// profiler_metadata.json: what the job wrote with add_metadata
	md := withoutVersions(res)
	for _, rr := range md.Ranks {
		rr.MetaVersions = map[string]string{"vllm_ascend_version": "0.13.0rc2", "cann_version": "8.5.0"}
	}
	fs, err = BuildFacts(md, deployment(script), nil)
	require.NoError(t, err)
	require.Equal(t, results.FactValue{Name: "vllm_ascend_version", Value: "v0.13.0rc2", Source: "profile: rank 0 profiler_metadata.json vllm_ascend_version"}, get("vllm_ascend_version"))
	require.Equal(t, "8.5.0", get("cann_version").Value)
}
