package main

import (
	"context"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// options are a command's flags, as gh's cmdutil splits a command: the
// options type registers its flags and checks their values (taking in the
// positional arguments) before any input is read; the command's xxxRun
// then reads as a straight line.
type options interface {
	register(cmd *cobra.Command)
	check(io *streams, cmd *cobra.Command, args []string) error
}

// newCommand gives cmd (its help and positional arguments) the flags of
// o, and a run that checks them and calls run.
func newCommand[O options](io *streams, cmd *cobra.Command, o O, run func(context.Context, *streams, O) error) *cobra.Command {
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if err := o.check(io, cmd, args); err != nil {
			return err
		}
		return run(cmd.Context(), io, o)
	}
	o.register(cmd)
	return cmd
}

// Help of the shared flags.
const (
	usageOutput     = "write the output to `FILE` instead of standard output"
	usageWorkers    = "ranks parsed at once (0 = number of CPUs)"
	usageWorkersMem = usageWorkers + "; memory grows with this"
)

// outputFlags are -o, --workers and -q, of every command that reads
// profiles: where the output goes, how many ranks are parsed at once, and
// no progress display.
type outputFlags struct {
	Output  string
	Workers int
	Quiet   bool
}

// register defines the flags; output and workers are the help of -o and
// --workers.
func (o *outputFlags) register(f *pflag.FlagSet, output, workers string) {
	f.StringVarP(&o.Output, "output", "o", "", output)
	workersFlag(f, &o.Workers, workers)
	f.BoolVarP(&o.Quiet, "quiet", "q", false, "no progress on standard error")
}
