package driver

// npuprof rules test: a rule's cases run against the rule set.

import (
	"fmt"
	"io"

	"github.com/npuprof/npuprof/internal/errkind"
	"github.com/npuprof/npuprof/internal/infile"
	"github.com/npuprof/npuprof/internal/rules"
)

// TestRuleCases runs the cases of every case file (docs/rules.md, "Testing
// a rule") against the built-in rules and the rule files, writing each
// case's ok or FAIL with how its outcome differs, then a count. It returns
// the cases run and failed; an unreadable or invalid case file is an
// error.
func TestRuleCases(w io.Writer, files, caseFiles []string, lang string) (n, failed int, err error) {
	set, err := LoadRules(RuleSelection{Files: files})
	if err != nil {
		return 0, 0, err
	}
	for _, f := range caseFiles {
		data, err := infile.ReadFile(f, infile.RuleCases, infile.Opts{})
		if err != nil {
			if errkind.Of(err) != errkind.Unknown {
				return n, failed, err // refused by the rule of internal/infile
			}
			return n, failed, errkind.Errorf(errkind.Input, "%v", err)
		}
		got, err := rules.RunCaseFile(set, f, data, lang)
		if err != nil {
			return n, failed, err
		}
		for _, c := range got {
			n++
			if len(c.Problems) == 0 {
				fmt.Fprintf(w, "ok    %s  %s\n", c.Where, c.Case.Name)
				continue
			}
			failed++
			fmt.Fprintf(w, "FAIL  %s  %s\n", c.Where, c.Case.Name)
			for _, p := range c.Problems {
				fmt.Fprintf(w, "        %s\n", p)
			}
		}
	}
	fmt.Fprintf(w, "%d case(s): %d passed, %d failed\n", n, n-failed, failed)
	return n, failed, nil
}
