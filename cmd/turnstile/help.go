package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// mainFlags keeps a command's --help on one screen: only the named flags are listed with
// their descriptions; the others, still accepted, are named on a line after them, and
// docs/CLI.md (the Long text's Details pointer) describes them.
func mainFlags(cmd *cobra.Command, names ...string) {
	cmd.InitDefaultHelpFlag()
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		f.Hidden = !slices.Contains(names, f.Name)
	})
	cmd.SetUsageFunc(compactUsage)
}

// compactUsage is cobra's usage text with the hidden flags named, not described.
func compactUsage(c *cobra.Command) error {
	w := c.OutOrStderr()
	fmt.Fprintf(w, "Usage:\n  %s\n", c.UseLine())
	if c.HasExample() {
		fmt.Fprintf(w, "\nExamples:\n%s\n", c.Example)
	}
	fmt.Fprintf(w, "\nFlags:\n%s", c.LocalFlags().FlagUsages())
	var others []string
	c.LocalFlags().VisitAll(func(f *pflag.Flag) {
		if f.Hidden && f.Name != "help" {
			others = append(others, "--"+f.Name)
		}
	})
	if len(others) > 0 {
		fmt.Fprintf(w, "\n%s\n", wrap("Also: "+strings.Join(others, ", ")+" (see Details)", 100, "  "))
	}
	return nil
}

// wrap breaks text at spaces into lines of at most width, the lines after the first indented.
func wrap(text string, width int, indent string) string {
	var lines []string
	line := ""
	for _, word := range strings.Fields(text) {
		if line != "" && len(line)+1+len(word) > width {
			lines = append(lines, line)
			line = indent + word
			continue
		}
		if line != "" && line != indent {
			line += " "
		}
		line += word
	}
	return strings.Join(append(lines, line), "\n")
}
