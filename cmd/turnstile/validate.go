package main

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/turnstile-dev/turnstile/scenarios"
)

func validateCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "validate PATH…",
		Short: "Check scenario files without running them",
		Long: `Validate reads each scenario file (or every file under a directory) strictly and reports
its problems as file:line:col: message, in two passes. First every problem of form: YAML
syntax, unknown keys, values of the wrong type or out of range, unknown rule ids. Once the
form is right, every problem of reference: a tool call naming a tool that tools: does not
define, a toolCalls: or hook answer for a call id no response makes, a trigger that can
never fire. (References are not checked in a file with errors of form, whose half-read
parts would give false ones.)

Exit 0 when every file is valid, 1 when one is not (the check failed), 2 when a path cannot
be read. turnstile run and conform refuse an invalid file as an input error (exit 2).`,
		Example: `  turnstile validate scenarios
  turnstile validate my-case.yaml`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			files, err := scenarios.Load(args)
			if err != nil {
				var es scenarios.Errors
				if errors.As(err, &es) || len(files) > 0 {
					return failed(err)
				}
				return usage(err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%d scenario files are valid\n", len(files))
			return nil
		},
	}
}

func schemaCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "schema",
		Short: "Print the JSON Schema of scenario files",
		Long: `Schema prints the JSON Schema of scenario files, for editors: with the YAML language
server, put "# yaml-language-server: $schema=PATH" at the top of a file.`,
		Example: `  turnstile schema > scenario.schema.json`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := cmd.OutOrStdout().Write(scenarios.Schema())
			return err
		},
	}
}
