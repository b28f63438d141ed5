package main

import (
	"fmt"
	"io/fs"
	"os"
	"path"
	"strings"

	"github.com/spf13/cobra"

	"github.com/turnstile-dev/turnstile/scenarios"
)

func showCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "show [NAME|PATH]",
		Short: "Print a scenario file, or list the embedded suite",
		Long: `Show prints a scenario file: a name of the embedded curated suite ("truncation/basic") or a
path. Given a family ("truncation"), or nothing, it lists the names of the embedded suite,
one a line, with each scenario's first comment line (the rule it pins down).

Details: docs/CLI.md#show`,
		Example: `  turnstile show                      # every scenario of the embedded suite
  turnstile show queues               # the scenarios of one family
  turnstile show truncation/basic     # print one, e.g. to start your own from it
  turnstile show truncation/basic > mine.yaml`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			out := cmd.OutOrStdout()
			if len(args) == 0 {
				return listSuite(cmd, ".")
			}
			name := args[0]
			if info, err := os.Stat(name); err == nil && !info.IsDir() {
				if !scenarios.IsScenarioFile(name) {
					return usage(fmt.Errorf("%s is not a scenario file (.yaml or .yml)", name))
				}
				data, err := os.ReadFile(name)
				if err != nil {
					return usage(err)
				}
				_, err = out.Write(data)
				return err
			}
			p, dir, ok := scenarios.SuitePath(name)
			if !ok {
				return usage(fmt.Errorf("%s: no such file or scenario of the embedded suite (turnstile show lists them)", name))
			}
			if dir {
				return listSuite(cmd, p)
			}
			data, err := fs.ReadFile(scenarios.SuiteFS(), p)
			if err != nil {
				return usage(err)
			}
			_, err = out.Write(data)
			return err
		},
	}
}

// listSuite prints the names of the embedded scenarios under root with their rule line.
func listSuite(cmd *cobra.Command, root string) error {
	out := cmd.OutOrStdout()
	return fs.WalkDir(scenarios.SuiteFS(), root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !scenarios.IsScenarioFile(p) {
			return err
		}
		data, err := fs.ReadFile(scenarios.SuiteFS(), p)
		if err != nil {
			return err
		}
		first, _, _ := strings.Cut(string(data), "\n")
		rule := ""
		if c, ok := strings.CutPrefix(first, "#"); ok {
			rule = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(c), "Rule:"))
		}
		fmt.Fprintf(out, "%-55s %s\n", strings.TrimSuffix(p, path.Ext(p)), rule)
		return nil
	})
}
