package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/npuprof/npuprof/internal/driver"
)

// newRulesTestCmd is `rules test`: a rule's cases (docs/rules.md,
// "Testing a rule"), each ok or FAIL with how the outcome differs.
func newRulesTestCmd(io *streams) *cobra.Command {
	return rulesSubcommand(io, &cobra.Command{
		Use:   "test CASES.yaml...",
		Short: "Run rules on the cases of case files: given metrics and facts, the expected outcome",
		Long: `Each case file names a rule and gives cases: metrics per rank and of the
cluster, facts, and the outcome expected (fired or clear, severity, saving,
ranks). Exit code 1 when a case fails ('npuprof docs rules', "Testing a rule").`,
		Example: `  $ npuprof rules test --rules team-rules.yaml tests/team-allgather.yaml
  $ npuprof rules test rules/builtin/tests/*.yaml`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usageErr("rules test: expected CASES.yaml (one or more case files), got no argument; see '%s --help'", cmd.CommandPath())
			}
			return nil
		},
	}, func(files []string, lang string, args []string) error {
		n, failed, err := driver.TestRuleCases(io.out, files, args, lang)
		if err != nil {
			return err
		}
		if failed > 0 {
			return &exitError{code: ExitFindings, err: fmt.Errorf("%d of %d case(s) failed", failed, n)}
		}
		return nil
	})
}
