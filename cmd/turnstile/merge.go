package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/turnstile-dev/turnstile/conformance"
	"github.com/turnstile-dev/turnstile/explore"
)

func mergeCmd() *cobra.Command {
	var o mergeFlags
	cmd := &cobra.Command{
		Use:   "merge INPUT...",
		Short: "Combine the outputs of several conform or explore runs (shards, machines) into one",
		Long: `Merge combines what several runs wrote (the shards of a CI matrix, of several machines) into
one. The inputs are all of one kind: explore --out folders (merged into a new --out folder,
causes with one signature made one), conform --format json reports or conform --junit files
(merged to --out or stdout). Exit code 1 when the merged runs failed, as conform and explore
would have said of one run of the whole.

Details: docs/CLI.md#merge`,
		Example: `  turnstile merge --out failures shard-1/ shard-2/ shard-3/ shard-4/
  turnstile merge --out report.json --junit report.xml conform-*.json
  turnstile merge --out conform.xml conform-1.xml conform-2.xml`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			kind, err := inputKind(args)
			if err != nil {
				return usage(err)
			}
			switch kind {
			case "explore":
				return o.explore(args, cmd.OutOrStdout())
			case "json":
				return o.reports(args, cmd.OutOrStdout())
			default:
				return o.junits(args, cmd.OutOrStdout())
			}
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.out, "out", "", "where the merge goes: a new folder, or a file (default: stdout)")
	f.StringVar(&o.junit, "junit", "", "with conform JSON reports: also write JUnit XML to this file")
	f.StringVar(&o.format, "format", "", "with conform JSON reports: json (default) or text")
	return cmd
}

// mergeFlags are the flags of turnstile merge.
type mergeFlags struct{ out, junit, format string }

// explore merges explore --out folders into a new --out folder.
func (o *mergeFlags) explore(args []string, stdout io.Writer) error {
	if o.out == "" {
		return usage(errors.New("merging explore folders needs --out, a new folder for the merged causes"))
	}
	if o.junit != "" || o.format != "" {
		return usage(errors.New("--junit and --format merge conform reports, not explore folders"))
	}
	r, err := explore.Merge(args, o.out)
	if err != nil {
		return usage(err)
	}
	fmt.Fprint(stdout, explore.MergeSummary(r, o.out))
	if r.Failed() {
		return failed(fmt.Errorf("the merged explorations found %d distinct failures", len(r.Causes)))
	}
	return nil
}

// reports merges conform JSON reports into one, as JSON or text, and as JUnit with --junit.
func (o *mergeFlags) reports(args []string, stdout io.Writer) error {
	var reports []conformance.Report
	for _, name := range args {
		f, err := os.Open(name)
		if err != nil {
			return usage(err)
		}
		r, err := conformance.ReadJSON(f)
		f.Close()
		if err != nil {
			return usage(fmt.Errorf("%s: %w", name, err))
		}
		reports = append(reports, r)
	}
	merged, err := conformance.Merge(reports, args)
	if err != nil {
		return usage(err)
	}
	var buf bytes.Buffer
	switch o.format {
	case "", "json":
		err = merged.WriteJSON(&buf)
	case "text":
		fmt.Fprintf(&buf, "conformance of %s, profile %s, %d scenarios (%d reports merged)\n", merged.Implementation, merged.Profile,
			len(merged.Results), len(reports))
		err = merged.WriteSummary(&buf)
	default:
		return usage(fmt.Errorf("--format must be json or text, not %q", o.format))
	}
	if err != nil {
		return failed(err)
	}
	if err := writeOutput(o.out, stdout, buf.Bytes()); err != nil {
		return usage(err)
	}
	if o.junit != "" {
		var x bytes.Buffer
		if err := conformance.WriteJUnit(&x, merged); err != nil {
			return usage(err)
		}
		if err := os.WriteFile(o.junit, x.Bytes(), 0o644); err != nil {
			return usage(err)
		}
	}
	if !merged.OK() {
		return failed(fmt.Errorf("%d %s failed", merged.Failed, plural(merged.Failed, "scenario", "scenarios")))
	}
	return nil
}

// junits merges conform JUnit files into one.
func (o *mergeFlags) junits(args []string, stdout io.Writer) error {
	if o.junit != "" || o.format != "" {
		return usage(errors.New("JUnit inputs merge into JUnit: give --out (or nothing, for stdout), not --junit or --format"))
	}
	var docs [][]byte
	for _, name := range args {
		data, err := os.ReadFile(name)
		if err != nil {
			return usage(err)
		}
		docs = append(docs, data)
	}
	var buf bytes.Buffer
	failures, err := conformance.MergeJUnit(&buf, docs, args)
	if err != nil {
		return usage(err)
	}
	if err := writeOutput(o.out, stdout, buf.Bytes()); err != nil {
		return usage(err)
	}
	if failures > 0 {
		return failed(fmt.Errorf("%d %s failed", failures, plural(failures, "testcase", "testcases")))
	}
	return nil
}

// inputKind says what the inputs of merge are: "explore" (folders), "json" or "junit"
// (files), all of one kind.
func inputKind(args []string) (string, error) {
	kind := ""
	for _, a := range args {
		info, err := os.Stat(a)
		if err != nil {
			return "", err
		}
		k := ""
		switch {
		case info.IsDir():
			k = "explore"
		case strings.EqualFold(filepath.Ext(a), ".xml"):
			k = "junit"
		default:
			head := make([]byte, 512)
			f, err := os.Open(a)
			if err != nil {
				return "", err
			}
			n, _ := io.ReadFull(f, head)
			f.Close()
			switch t := bytes.TrimSpace(head[:n]); {
			case bytes.HasPrefix(t, []byte("{")):
				k = "json"
			case bytes.HasPrefix(t, []byte("<")):
				k = "junit"
			default:
				return "", fmt.Errorf("%s: neither an explore --out folder, a conform JSON report nor a JUnit XML file", a)
			}
		}
		if kind != "" && k != kind {
			return "", fmt.Errorf("%s is %s, the inputs before it %s: merge inputs of one kind", a, kindName[k], kindName[kind])
		}
		kind = k
	}
	return kind, nil
}

var kindName = map[string]string{"explore": "an explore folder", "json": "a conform JSON report", "junit": "a JUnit XML file"}

// writeOutput writes data to the file out, or to w when out is "".
func writeOutput(out string, w io.Writer, data []byte) error {
	if out == "" {
		_, err := w.Write(data)
		return err
	}
	return os.WriteFile(out, data, 0o644)
}
