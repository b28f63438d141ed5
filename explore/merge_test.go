package explore

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/turnstile-dev/turnstile/sim"
)

// causeCounts are the runs of each cause key of a record, an alias counted with its cause.
func causeCounts(r Record) map[string]int {
	out := map[string]int{}
	for _, c := range r.Causes {
		out[strings.Join(slices.Sorted(slices.Values(c.keys())), " | ")] = c.Count
	}
	return out
}

// TestFourShardsMergedAreTheWholeExploration: an exploration split into four shards, the four
// --out folders merged, finds the causes the whole exploration finds, each with as many runs,
// and the runs and failures add up; each merged cause keeps the smallest minimal scenario of
// the shards', and the merged folder is complete (README, scenario, cause.json, causes.txt).
func TestFourShardsMergedAreTheWholeExploration(t *testing.T) {
	for _, name := range []string{"drops-a-tool-result", "ignores-finish-turn-end"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			fl := faultNamed(t, name)
			opts := Options{Impl: func() sim.Implementation { return &faulty{fault: fl} }, Seed: 41, Runs: 400}
			whole := opts
			whole.Out = t.TempDir()
			res := Run(context.Background(), whole)
			if len(res.Failures) == 0 {
				t.Fatal("the whole exploration finds nothing")
			}
			want, err := readRecord(whole.Out)
			if err != nil {
				t.Fatal(err)
			}
			var dirs []string
			var shards []Record
			for k := range 4 {
				part := opts
				part.Shard, part.Out = Shard{k, 4}, filepath.Join(t.TempDir(), fmt.Sprintf("shard-%d", k+1))
				Run(context.Background(), part)
				r, err := readRecord(part.Out)
				if err != nil {
					t.Fatal(err)
				}
				dirs, shards = append(dirs, part.Out), append(shards, r)
			}
			out := filepath.Join(t.TempDir(), "merged")
			got, err := Merge(dirs, out)
			if err != nil {
				t.Fatal(err)
			}
			t.Log(MergeSummary(got, out))
			if got.Runs != want.Runs || got.Failing != want.Failing || len(got.Explorations) != 4 {
				t.Errorf("merged %d runs, %d failing, %d explorations; the whole exploration %d runs, %d failing", got.Runs, got.Failing,
					len(got.Explorations), want.Runs, want.Failing)
			}
			if g, w := causeCounts(got), causeCounts(want); !maps.Equal(g, w) {
				t.Errorf("merged causes %v, the whole exploration's %v", g, w)
			}
			for _, c := range got.Causes {
				for _, s := range shards {
					for _, d := range s.Causes {
						if slices.Contains(c.keys(), d.Signature) && d.smaller(c) {
							t.Errorf("cause %s: a shard has a smaller minimal scenario (%s) than the merged one (%s)", c.Signature, d.Minimal, c.Minimal)
						}
					}
				}
				for _, file := range []string{"README.md", "minimal.yaml", causeFile} {
					if _, err := os.Stat(filepath.Join(out, c.Dir, file)); err != nil {
						t.Error(err)
					}
				}
				readme, _ := os.ReadFile(filepath.Join(out, c.Dir, "README.md"))
				if !strings.Contains(string(readme), fmt.Sprintf("; %s show", plural(c.Count, "failing run"))) || !strings.Contains(string(readme), "Merged from 4 explorations") {
					t.Errorf("the README of %s does not give the merged count %d:\n%s", c.Signature, c.Count, readme)
				}
			}
			list, err := os.Open(filepath.Join(out, "causes.txt"))
			if err != nil {
				t.Fatal(err)
			}
			defer list.Close()
			sigs, _ := ReadSignatures(list)
			for _, c := range got.Causes {
				if !sigs[c.Signature] {
					t.Errorf("causes.txt lacks %s", c.Signature)
				}
			}
			if _, err := Merge(dirs, out); err == nil {
				t.Error("merging into a folder that is not empty is accepted")
			}
		})
	}
}
