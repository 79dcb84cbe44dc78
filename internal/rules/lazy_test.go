package rules

import (
	"sync"
	"testing"
	"testing/fstest"

	"github.com/npuprof/npuprof/internal/errkind"
	"github.com/npuprof/npuprof/internal/results"
	"github.com/npuprof/npuprof/internal/rules/rulefmt"

	"github.com/stretchr/testify/require"
)

// builtinEager loads the built-in rules compiling every expression and
// template at load time, as user rule files are.
func builtinEager(t *testing.T) *Set {
	t.Helper()
	b := builtinRules
	b.Eager = true
	set, err := rulefmt.Load(&b)
	require.NoError(t, err)
	require.Len(t, set.Rules, len(Builtin()), "one rule per built-in file")
	return set
}

// Compiling on first use changes nothing in what rules report, and is safe
// when one rule set is evaluated from several goroutines at once.
func TestLazyCompileSameReportConcurrently(t *testing.T) {
	for _, name := range []string{"ep-fc1-cumsum", "hot-rank", "clean"} {
		t.Run(name, func(t *testing.T) {
			res := analyzed(t, name)
			want := evaluate(t, builtinEager(t), res, nil)
			require.NotEmpty(t, want.Outcomes)
			set := builtin(t) // nothing compiled yet: the goroutines race to it
			reps := make([]*Report, 4)
			var wg sync.WaitGroup
			for i := range reps {
				wg.Go(func() {
					fs, err := BuildFacts(res, nil, nil)
					if err == nil {
						reps[i] = Evaluate(set, &Input{Result: res, Facts: fs})
					}
				})
			}
			wg.Wait()
			for _, rep := range reps {
				require.NotNil(t, rep)
				require.Equal(t, untimed(want), untimed(rep))
			}
		})
	}
}

// A built-in rule whose template does not compile still fails: at load
// time when compiled eagerly (the test above), and as a failed rule with
// file:line:col when it fires.
func TestLazyCompileErrorFailsTheRule(t *testing.T) {
	src := []byte(`rules:
  - id: broken-title
    title: "off by {{ pct(metric(\"hccl.total.time_us\") }}"
    when: "true"
    fix: "nothing"
`)
	files := fstest.MapFS{"builtin/broken.yaml": {Data: src}}
	_, err := rulefmt.Load(&rulefmt.Builtin{FS: files, Dir: "builtin", Prefix: "internal/rules/", Eager: true})
	problems := errkind.Problems(err)
	require.Len(t, problems, 1)
	require.Contains(t, problems[0], "rules/builtin/broken.yaml:3:")

	lazySet, err := rulefmt.Load(&rulefmt.Builtin{FS: files, Dir: "builtin", Prefix: "internal/rules/"})
	require.NoError(t, err)
	rep := Evaluate(lazySet, &Input{Result: analyzed(t, "clean")})
	require.Len(t, rep.Outcomes, 1)
	require.Equal(t, results.StatusFailed, rep.Outcomes[0].Status)
	require.Contains(t, rep.Outcomes[0].Reason, problems[0])
}

// untimed is rep without the evaluation times, which differ run to run.
func untimed(rep *Report) *Report {
	c := *rep
	c.Times = nil
	return &c
}
