package rulefmt

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/npuprof/npuprof/internal/errkind"
)

// A case file reads into its cases: metrics on every rank, per rank and of
// the cluster, facts as --fact takes them, and what is expected.
func TestParseCases(t *testing.T) {
	cf, err := ParseCases("c.yaml", []byte(`rule: expert-imbalance
cases:
  - name: hot rank
    ranks: 2
    metrics: {moe.gmm.time_us: 1000}
    per_rank:
      1: {moe.gmm.time_us: 1500}
    cluster: {skew.moe.gmm.max_over_mean: 1.3}
    facts:
      expert_parallel: true
      capture_sizes: [1, 2, 4]
      env.HCCL_BUFFSIZE: "200"
    expect: {status: fired, severity: low, saving_us: 250, ranks: [1], title: rank 1}
  - name: none
    expect: {status: fired, saving_us: none}
`))
	require.NoError(t, err)
	require.Equal(t, "expert-imbalance", cf.Rule)
	require.Equal(t, 1, cf.Line)
	require.Len(t, cf.Cases, 2)
	c := cf.Cases[0]
	require.Equal(t, 3, c.Line)
	require.Equal(t, 2, c.Ranks)
	require.Equal(t, map[string]float64{"moe.gmm.time_us": 1000}, c.Metrics)
	require.Equal(t, map[int]map[string]float64{1: {"moe.gmm.time_us": 1500}}, c.PerRank)
	require.Equal(t, map[string]float64{"skew.moe.gmm.max_over_mean": 1.3}, c.Cluster)
	require.Equal(t, []string{"expert_parallel=true", "capture_sizes=1,2,4", "env.HCCL_BUFFSIZE=200"}, c.Facts)
	require.Equal(t, "fired", c.Expect.Status)
	require.Equal(t, 250.0, *c.Expect.SavingUs)
	require.Equal(t, []int{1}, c.Expect.Ranks)
	require.Equal(t, 1, cf.Cases[1].Ranks, "one rank unless said")
	require.True(t, cf.Cases[1].Expect.NoSaving)
}

// Every problem of a case file is named at its file:line:col.
func TestParseCasesProblems(t *testing.T) {
	_, err := ParseCases("c.yaml", []byte(`rule: x
cases:
  - name: a
    ranks: 2
    metrics: {moe.gmm.time_uss: 1, skew.moe.gmm.max_rank: 1}
    per_rank:
      2: {moe.gmm.time_us: 1}
    cluster: {moe.gmm.time_us: 1}
    facts: {concurency: 2}
    expect: {status: clear, severity: high}
  - name: b
    expct: {status: fired}
  - name: c
    expect: {status: fire}
`))
	require.Equal(t, []string{
		`c.yaml:5:15: case "a": metrics: unknown metric "moe.gmm.time_uss" (closest: moe.gmm.time_us, moe.cumsum.time_us, moe.gmm.tokens)`,
		`c.yaml:5:36: case "a": metrics: skew.moe.gmm.max_rank is a cluster metric: give it under cluster`,
		`c.yaml:7:7: case "a": per_rank: rank "2": expected 0..1 (ranks: 2)`,
		`c.yaml:8:15: case "a": cluster: moe.gmm.time_us is a per-rank metric: give it under metrics or per_rank`,
		`c.yaml:9:13: case "a": unknown fact "concurency" (closest: concurrency, model, ranks)`,
		`c.yaml:10:13: case "a": expect: severity, saving_us, ranks and title are a finding's: only with status fired`,
		`c.yaml:12:5: case #2: unknown key "expct" (expected one of name, ranks, metrics, per_rank, cluster, facts, expect; did you mean expect?)`,
		`c.yaml:11:5: case "b": missing expect`,
		`c.yaml:14:13: case "c": expect: status "fire" (expected one of fired, clear, not_applicable, not_evaluated, failed)`,
	}, errkind.Problems(err))

	_, err = ParseCases("c.yaml", []byte("rule: x\ncases:\n  - name: a\n    metrics: {a: 1\n"))
	require.Equal(t, []string{"c.yaml:4:14: a mapping opened with { is not closed with } (quote a text that holds {{ }})"}, errkind.Problems(err))
}
