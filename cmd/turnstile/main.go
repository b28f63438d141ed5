// Command turnstile runs agent-loop scenarios in a deterministic simulator, compares them
// with golden traces, and verifies other loop implementations against pi's behaviour.
//
// Exit codes: 0 success; 1 a check failed (a scenario's expectations, a golden, a
// conformance verdict, a validation); 2 a usage or input error (bad flags, unreadable or
// invalid scenario files, an implementation that cannot be started).
package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"
)

// Exit codes.
const (
	exitFailed = 1
	exitUsage  = 2
)

// exitError carries the exit code of a failed command.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// failed is a check failure (exit 1); usage is a usage or input error (exit 2).
func failed(err error) error { return &exitError{exitFailed, err} }
func usage(err error) error  { return &exitError{exitUsage, err} }

func main() { os.Exit(execute(os.Args[1:], os.Stdout, os.Stderr)) }

// execute runs the command line and returns the exit code, printing an error once, plainly.
func execute(args []string, stdout, stderr io.Writer) int {
	root := &cobra.Command{
		Use:   "turnstile",
		Short: "Deterministic simulation and conformance testing for LLM agent loops",
		Long: `turnstile drives an agent loop — its built-in reference, which behaves like pi 1.6.0, or
any other loop through the conformance protocol — with a scripted model, scripted tools and
hooks, a simulated user and a virtual clock, and shows or checks what happened.

Without a path, commands use the curated suite compiled into the binary.

Exit codes: 0 success, 1 a check failed, 2 usage or input error.`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(runCmd(), validateCmd(), schemaCmd(), testCmd(), diffCmd(), conformCmd(), adapterCmd(), exploreCmd(), auditCmd())
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	if err := root.Execute(); err != nil {
		fmt.Fprintln(stderr, "turnstile:", err)
		var ee *exitError
		if errors.As(err, &ee) {
			return ee.code
		}
		// Cobra's own errors are flag and argument mistakes.
		return exitUsage
	}
	return 0
}
