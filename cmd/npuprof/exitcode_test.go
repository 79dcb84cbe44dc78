package main

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/npuprof/npuprof/internal/errkind"
)

// TestExitCodeByKind: the one map from an error's kind to the exit code.
func TestExitCodeByKind(t *testing.T) {
	for _, c := range []struct {
		err  error
		want int
	}{
		{errkind.New(errkind.Usage, "bad flag"), ExitUsage},
		{fmt.Errorf("reading: %w", errkind.New(errkind.Input, "bad file")), ExitUsage},
		{errkind.List(errkind.Input, []string{"a.yaml:1:1: x", "b.yaml:2:2: y"}), ExitUsage},
		{errkind.New(errkind.Internal, "internal error: panic"), ExitInternal},
		{errkind.Wrap(errkind.Usage, errkind.New(errkind.Internal, "inner")), ExitUsage},
		{errors.New("no kind"), ExitInternal},
		{errors.New("unknown flag: --nope"), ExitUsage},
		{&exitError{code: ExitFindings, err: errors.New("2 finding(s)")}, ExitFindings},
	} {
		require.Equal(t, c.want, exitCode(c.err), "%v", c.err)
	}
}
