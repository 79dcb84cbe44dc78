package rules

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

// per_step("m") is m per decode step, mean over ranks.
func TestPerStep(t *testing.T) {
	res := analyzed(t, "ep-fc1-cumsum")
	set, err := Parse("team.yaml", []byte(`rules:
  - id: cumsum-per-step
    title: "{{ fixed(per_step(\"moe.cumsum.time_us\"), 3) }} per step"
    when: per_step("moe.cumsum.count") > 0
    fix: none
`))
	require.NoError(t, err)
	f := finding(evaluate(t, set, res, nil), "cumsum-per-step")
	require.NotNil(t, f)
	want := 0.0
	for _, rr := range res.Ranks {
		want += rr.Metrics["moe.cumsum.time_us"] / rr.Metrics["decode.steps.count"]
	}
	want /= float64(len(res.Ranks))
	require.Contains(t, f.Title, " per step")
	require.InDelta(t, want, parseLead(t, f.Title), 0.001)
	// a typo in the metric name is a load error, as with metric()
	_, err = Parse("bad.yaml", []byte("rules:\n  - id: x\n    title: t\n    when: per_step(\"moe.cumsum.tim_us\") > 0\n    fix: f\n"))
	require.ErrorContains(t, err, `unknown metric "moe.cumsum.tim_us"`)
}

func parseLead(t *testing.T, s string) float64 {
	var v float64
	_, err := fmt.Sscan(s, &v)
	require.NoError(t, err)
	return v
}
