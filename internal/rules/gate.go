package rules

import (
	"fmt"

	"github.com/npuprof/npuprof/internal/errkind"
	"github.com/npuprof/npuprof/internal/lazyre"
)

// reBudgetPos is the file:line:col prefix of a problem in a --budget.
var reBudgetPos = lazyre.New(`^--budget:\d+:\d+: `)

// AddBudgets parses budgets given one by one (check's --budget
// 'METRIC OP EXPR') into set. Each is parsed alone, and its problems, and
// those found while it runs, are named by its text rather than by a
// line:col of the YAML it is wrapped in; problems are a usage error that
// lists every one.
func AddBudgets(set *Set, budgets []string) error {
	var problems []string
	for _, x := range budgets {
		extra, err := Parse("--budget", fmt.Appendf(nil, "budgets:\n  - %q\n", x))
		switch {
		case errkind.Problems(err) != nil:
			for _, p := range errkind.Problems(err) {
				problems = append(problems, reBudgetPos().ReplaceAllLiteralString(p, "--budget '"+x+"': "))
			}
		case err != nil:
			return errkind.Wrap(errkind.Usage, err)
		default:
			for i := range extra.Budgets {
				extra.Budgets[i].File, extra.Budgets[i].Line = "--budget '"+x+"'", 0
			}
			set.Budgets = append(set.Budgets, extra.Budgets...)
		}
	}
	if len(problems) > 0 {
		return errkind.List(errkind.Usage, problems)
	}
	return nil
}
