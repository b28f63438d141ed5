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
		Long: `Validate reads each scenario file (or every file under a directory) strictly and reports its
problems as file:line:col: message: first those of form (syntax, keys, types, rule ids), then,
once the form is right, those of reference (tools, call ids, triggers that never fire). Exit
0 when every file is valid, 1 when one is not, 2 when a path cannot be read.

Details: docs/CLI.md#validate`,
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
server, put "# yaml-language-server: $schema=PATH" at the top of a file.

Details: docs/CLI.md#schema`,
		Example: `  turnstile schema > scenario.schema.json`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := cmd.OutOrStdout().Write(scenarios.Schema())
			return err
		},
	}
}
