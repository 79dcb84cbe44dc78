package rules

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// A rule's vars are compiled once and bound by value (rulefmt.VarFuncs):
// the rule evaluates as it would with every var's source written in
// place, in declaration order: the same outcomes, reasons and texts,
// when it fires, when an input is missing, when a var fails and when a
// var's value is not of its checked type.
func TestVarsEvaluateAsTheirSources(t *testing.T) {
	const withVars = `rules:
  - id: vars-fire
    vars:
      total: 'metric("hccl.total.time_us")'
      half: 'total / 2'
      some: 'half > 0 || total >= 0'
      label: 'some ? "yes" : "no"'
    title: '{{ label }} {{ fixed(half, 1) }} of {{ us(total) }}'
    when: 'some && total >= 0'
    fix: '{{ half >= 0 ? label : "" }}'
  - id: vars-missing
    vars:
      seen: 'metric("hccl.total.time_us")'
      gone: 'metric("service.ttft.p50_ms")'
      both: 'seen + gone'
    title: 't'
    when: 'both > 0'
    fix: 'f'
  - id: vars-fail
    vars:
      zero: 'metric("hccl.total.time_us") * 0'
      ratio: '1 / zero'
    title: 't'
    when: 'ratio > 0'
    fix: 'f'
  - id: vars-dynamic
    vars:
      small: 'min(metric("hccl.total.time_us") + 2, 1)'
      same: 'small'
    title: '{{ same }} {{ small }} {{ string(small) }}'
    when: 'small >= 0'
    fix: 'f'
`
	const inline = `rules:
  - id: vars-fire
    title: '{{ let total = metric("hccl.total.time_us"); let half = total / 2; let some = half > 0 || total >= 0; some ? "yes" : "no" }} {{ let total = metric("hccl.total.time_us"); fixed(total / 2, 1) }} of {{ us(metric("hccl.total.time_us")) }}'
    when: 'let total = metric("hccl.total.time_us"); let half = total / 2; (half > 0 || total >= 0) && total >= 0'
    fix: '{{ let total = metric("hccl.total.time_us"); let half = total / 2; let some = half > 0 || total >= 0; half >= 0 ? (some ? "yes" : "no") : "" }}'
  - id: vars-missing
    title: 't'
    when: 'let seen = metric("hccl.total.time_us"); let gone = metric("service.ttft.p50_ms"); seen + gone > 0'
    fix: 'f'
  - id: vars-fail
    title: 't'
    when: 'let zero = metric("hccl.total.time_us") * 0; 1 / zero > 0'
    fix: 'f'
  - id: vars-dynamic
    title: '{{ let small = min(metric("hccl.total.time_us") + 2, 1); small }} {{ min(metric("hccl.total.time_us") + 2, 1) }} {{ string(min(metric("hccl.total.time_us") + 2, 1)) }}'
    when: 'min(metric("hccl.total.time_us") + 2, 1) >= 0'
    fix: 'f'
`
	res := analyzed(t, "clean")
	a, err := Parse("rules.yaml", []byte(withVars))
	require.NoError(t, err)
	b, err := Parse("rules.yaml", []byte(inline))
	require.NoError(t, err)
	ra := Evaluate(a, &Input{Result: res})
	rb := Evaluate(b, &Input{Result: res})
	require.Len(t, ra.Outcomes, 4)
	require.Len(t, rb.Outcomes, 4)
	for i := range ra.Outcomes {
		require.Equal(t, rb.Outcomes[i].Status, ra.Outcomes[i].Status, ra.Outcomes[i].Rule)
		if ra.Outcomes[i].Rule != "vars-fail" { // the failure names the line and the source
			require.Equal(t, rb.Outcomes[i].Reason, ra.Outcomes[i].Reason, ra.Outcomes[i].Rule)
		}
	}
	require.Equal(t, "fired", ra.Outcomes[0].Status)
	require.Equal(t, "not_evaluated", ra.Outcomes[1].Status)
	require.Contains(t, ra.Outcomes[1].Reason, "service.ttft.p50_ms")
	require.Equal(t, "failed", ra.Outcomes[2].Status)
	// the same error, at the rule's own line and source
	msg := func(r string) string { return strings.SplitN(strings.SplitN(r, ": ", 2)[1], " (in ", 2)[0] }
	require.Equal(t, "when: division by zero in 1 / zero: zero is 0", msg(ra.Outcomes[2].Reason))
	require.Equal(t, msg(rb.Outcomes[2].Reason), msg(ra.Outcomes[2].Reason))
	require.Len(t, ra.Findings, 2)
	title := map[string]string{}
	for i := range ra.Findings {
		require.Equal(t, rb.Findings[i].Title, ra.Findings[i].Title)
		require.Equal(t, rb.Findings[i].Fix, ra.Findings[i].Fix)
		title[ra.Findings[i].Rule] = ra.Findings[i].Title
	}
	require.Contains(t, title["vars-fire"], "yes ")
	// min(x, 1) is typed as x (a float) and returns the int 1: the value,
	// not the type, is what the var's source in place gives
	require.Equal(t, "1 1 1", title["vars-dynamic"])
}
