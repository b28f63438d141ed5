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
every problem as file:line:col: message. It exits 1 when a file is invalid.`,
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
