package explore

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"
)

// recordFile is the name of the file an exploration writes into its --out folder: what it
// explored and found (Record), so that the folders of several explorations — shards, machines,
// seeds — can be merged into one (Merge).
const recordFile = "explore.json"

// causeFile is the name of the file in each cause's folder that says what the folder holds
// (CauseRecord).
const causeFile = "cause.json"

// Record is what an exploration, or a merge of several, explored and found.
type Record struct {
	// Explorations are the explorations merged: one for an exploration's own record.
	Explorations []Exploration `json:"explorations"`
	// Runs, Failing, Ignored and Hangs are summed over the explorations.
	Runs    int `json:"runs"`
	Failing int `json:"failing"`
	Ignored int `json:"ignored"`
	Hangs   int `json:"hangs,omitempty"`
	// Causes are the distinct causes found, in the order first found (explorations in their
	// order): each in its folder.
	Causes []CauseRecord `json:"causes"`
	// Shown counts the failing runs by the signatures of their possible causes, from which a
	// merge counts each cause's runs again.
	Shown []ShownRuns `json:"shown"`
}

// ShownRuns is how many failing runs had exactly these possible causes.
type ShownRuns struct {
	Signatures []string `json:"signatures"`
	Runs       int      `json:"runs"`
}

// shownKey is the key of a set of signatures in Result.shown: sorted, one a line.
func shownKey(set map[string]bool) string {
	return strings.Join(slices.Sorted(maps.Keys(set)), "\n")
}

// countShown is the number of runs of shown that showed one of keys.
func countShown(shown map[string]int, keys []string) int {
	n := 0
	for set, runs := range shown {
		if slices.ContainsFunc(strings.Split(set, "\n"), func(sig string) bool { return slices.Contains(keys, sig) }) {
			n += runs
		}
	}
	return n
}

// Exploration is one exploration of a Record.
type Exploration struct {
	Seed           uint64 `json:"seed"`
	Shard          string `json:"shard,omitempty"`
	Implementation string `json:"implementation"`
	Runs           int    `json:"runs"`
	ElapsedMs      int64  `json:"elapsedMs"`
	// From is the folder it was read from by a merge ("" in the exploration's own record).
	From string `json:"from,omitempty"`
}

// CauseRecord is one cause of a Record.
type CauseRecord struct {
	// Signature is the cause's key (Problem.Signature); Aliases the keys of causes that
	// turned out to be this one.
	Signature string   `json:"signature"`
	Aliases   []string `json:"aliases,omitempty"`
	Kind      string   `json:"kind"`
	Rule      string   `json:"rule,omitempty"`
	// Count is the number of runs that showed the cause.
	Count int  `json:"count"`
	Flaky bool `json:"flaky,omitempty"`
	// Dir is the cause's folder, relative to the record's.
	Dir string `json:"dir"`
	// Seed, Run and RunSeed say where the folder's generated scenario comes from.
	Seed    uint64 `json:"seed"`
	Run     int    `json:"run"`
	RunSeed uint64 `json:"runSeed"`
	// Shrunk says the minimal scenario was shrunk; Minimal is its size.
	Shrunk  bool `json:"shrunk"`
	Minimal Size `json:"minimal"`
}

// keys are the cause's signature and aliases.
func (c CauseRecord) keys() []string { return append([]string{c.Signature}, c.Aliases...) }

// smaller reports whether c's folder is a better minimal scenario than d's: reproducible
// before flaky, shrunk before not, then the fewer requests, operations or user actions,
// responses, tool calls, tools and hooks.
func (c CauseRecord) smaller(d CauseRecord) bool {
	if c.Flaky != d.Flaky {
		return !c.Flaky
	}
	if c.Shrunk != d.Shrunk {
		return c.Shrunk
	}
	a, b := c.Minimal, d.Minimal
	return cmp.Or(cmp.Compare(a.Requests, b.Requests), cmp.Compare(a.Operations+a.User, b.Operations+b.User),
		cmp.Compare(a.Responses, b.Responses), cmp.Compare(a.ToolCalls, b.ToolCalls), cmp.Compare(a.Tools, b.Tools),
		cmp.Compare(a.Hooks, b.Hooks)) < 0
}

// record is res as a Record, its causes in the folders under out.
func record(res Result, shard Shard) Record {
	e := Exploration{Seed: res.Seed, Implementation: res.Implementation, Runs: res.Runs, ElapsedMs: res.Elapsed.Milliseconds()}
	if shard.N > 1 {
		e.Shard = shard.String()
	}
	r := Record{Explorations: []Exploration{e}, Runs: res.Runs, Failing: res.Failing, Ignored: res.Ignored, Hangs: res.Hangs,
		Causes: []CauseRecord{}, Shown: []ShownRuns{}}
	for _, set := range slices.Sorted(maps.Keys(res.shown)) {
		r.Shown = append(r.Shown, ShownRuns{Signatures: strings.Split(set, "\n"), Runs: res.shown[set]})
	}
	for _, f := range res.Failures {
		if f.Dir == "" {
			continue
		}
		r.Causes = append(r.Causes, causeRecord(f))
	}
	return r
}

func causeRecord(f *Failure) CauseRecord {
	return CauseRecord{Signature: f.Signature(), Aliases: f.Aliases, Kind: f.Kind, Rule: f.Rule(), Count: f.Count, Flaky: f.Flaky,
		Dir: filepath.Base(f.Dir), Seed: f.Seed, Run: f.Run, RunSeed: f.RunSeed, Shrunk: f.Shrink.Tried > 0, Minimal: f.Shrink.After}
}

// writeJSON writes v as indented JSON to path.
func writeJSON(path string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(data, '\n'), 0o644)
}

// readRecord reads the record of an exploration's --out folder (or of a merge).
func readRecord(dir string) (Record, error) {
	var r Record
	data, err := os.ReadFile(filepath.Join(dir, recordFile))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return r, fmt.Errorf("%s: no %s: not the --out folder of a turnstile explore (one that wrote it)", dir, recordFile)
		}
		return r, err
	}
	if err := json.Unmarshal(data, &r); err != nil {
		return r, fmt.Errorf("%s: %w", filepath.Join(dir, recordFile), err)
	}
	return r, nil
}

// Merge combines the --out folders of several explorations (shards of one, or runs on
// several machines) into out, which must be new or empty: the runs and failures are summed;
// causes are one when they share a signature (or one's alias is the other's signature), their
// counts summed, and out holds for each the folder of the smallest minimal scenario (a
// reproducible one before a flaky one) with its count made the total; causes.txt lists every
// signature, as --ignore reads it.
func Merge(dirs []string, out string) (Record, error) {
	if len(dirs) == 0 {
		return Record{}, errors.New("nothing to merge")
	}
	if entries, err := os.ReadDir(out); err == nil && len(entries) > 0 {
		return Record{}, fmt.Errorf("%s is not empty: merge into a new folder", out)
	}
	m := merger{merged: Record{Causes: []CauseRecord{}}, shown: map[string]int{}, from: map[string]string{}, at: map[string]int{}}
	for _, dir := range dirs {
		r, err := readRecord(dir)
		if err != nil {
			return Record{}, err
		}
		m.add(dir, r)
	}
	m.recount()
	if err := m.write(out, len(dirs)); err != nil {
		return Record{}, err
	}
	return m.merged, writeCauseList(out, m.merged)
}

// merger sums exploration records into one.
type merger struct {
	merged Record
	shown  map[string]int    // failing runs by the set of signatures they show (shownKey)
	from   map[string]string // a merged cause's signature -> the folder its kept folder is in
	at     map[string]int    // every key -> index in merged.Causes
}

// add sums the record r of folder dir into the merged one.
func (m *merger) add(dir string, r Record) {
	for _, e := range r.Explorations {
		if e.From == "" {
			e.From = dir
		}
		m.merged.Explorations = append(m.merged.Explorations, e)
	}
	m.merged.Runs += r.Runs
	m.merged.Failing += r.Failing
	m.merged.Ignored += r.Ignored
	m.merged.Hangs += r.Hangs
	for _, sr := range r.Shown {
		set := map[string]bool{}
		for _, sig := range sr.Signatures {
			set[sig] = true
		}
		m.shown[shownKey(set)] += sr.Runs
	}
	for _, c := range r.Causes {
		m.addCause(dir, c)
	}
}

// addCause merges cause c of folder dir with the cause sharing one of its keys, keeping the
// smaller minimal scenario, or adds it as a new one.
func (m *merger) addCause(dir string, c CauseRecord) {
	k, known := -1, false
	for _, key := range c.keys() {
		if i, ok := m.at[key]; ok {
			k, known = i, true
			break
		}
	}
	if !known {
		m.at[c.Signature] = len(m.merged.Causes)
		for _, a := range c.Aliases {
			m.at[a] = len(m.merged.Causes)
		}
		m.merged.Causes = append(m.merged.Causes, c)
		m.from[c.Signature] = dir
		return
	}
	kept := &m.merged.Causes[k]
	count := kept.Count + c.Count
	aliases := kept.Aliases
	for _, key := range c.keys() {
		if key != kept.Signature && !slices.Contains(aliases, key) {
			aliases = append(aliases, key)
		}
		m.at[key] = k
	}
	if c.smaller(*kept) {
		sig := kept.Signature
		*kept = c
		kept.Signature = sig
		m.from[sig] = dir
	}
	kept.Count, kept.Aliases = count, slices.DeleteFunc(aliases, func(a string) bool { return a == kept.Signature })
}

// recount counts each cause's runs again over every exploration's failing runs (a run of one
// shard may show a cause another shard found) and lists the shown sets.
func (m *merger) recount() {
	for i := range m.merged.Causes {
		c := &m.merged.Causes[i]
		c.Count = countShown(m.shown, c.keys())
	}
	m.merged.Shown = []ShownRuns{}
	for _, set := range slices.Sorted(maps.Keys(m.shown)) {
		m.merged.Shown = append(m.merged.Shown, ShownRuns{Signatures: strings.Split(set, "\n"), Runs: m.shown[set]})
	}
}

// write copies each cause's kept folder into out and writes the merged record there.
func (m *merger) write(out string, explorations int) error {
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	for i := range m.merged.Causes {
		c := &m.merged.Causes[i]
		src := filepath.Join(m.from[c.Signature], c.Dir)
		c.Dir = causeDir(c.Signature)
		if err := copyCause(src, filepath.Join(out, c.Dir), *c, explorations); err != nil {
			return err
		}
	}
	return writeJSON(filepath.Join(out, recordFile), m.merged)
}

// countLine is the README's sentence with a cause's run count (readme).
var countLine = regexp.MustCompile(`; (\d+ failing runs show|1 failing run shows) this cause\.`)

// copyCause copies a cause's folder to dst, its count made c's total, its README saying so.
func copyCause(src, dst string, c CauseRecord, explorations int) error {
	entries, err := os.ReadDir(src)
	if err != nil {
		return fmt.Errorf("the folder of cause %s: %w", c.Signature, err)
	}
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return err
	}
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		data, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			return err
		}
		if e.Name() == "README.md" {
			runs := fmt.Sprintf("%d failing runs show", c.Count)
			if c.Count == 1 {
				runs = "1 failing run shows"
			}
			text := countLine.ReplaceAllString(string(data), "; "+runs+" this cause.")
			text += fmt.Sprintf("\nMerged from %d explorations (turnstile merge): %s in all show this cause; this folder is the smallest minimal scenario found.\n",
				explorations, plural(c.Count, "run"))
			data = []byte(text)
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), data, 0o644); err != nil {
			return err
		}
	}
	return writeJSON(filepath.Join(dst, causeFile), c)
}

// writeCauseList writes causes.txt for a merged record, as writeCauses does for one
// exploration.
func writeCauseList(out string, r Record) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# causes found by %s merged (%s); pass this file to --ignore to look past them\n",
		plural(len(r.Explorations), "exploration"), plural(r.Runs, "run"))
	for _, c := range r.Causes {
		fmt.Fprintf(&b, "\n# %s", plural(c.Count, "run"))
		if c.Flaky {
			b.WriteString(", flaky")
		}
		if c.Rule != "" {
			fmt.Fprintf(&b, "; %s", c.Rule)
		}
		fmt.Fprintf(&b, "\n%s\n", c.Signature)
		for _, a := range c.Aliases {
			fmt.Fprintf(&b, "%s\n", a)
		}
	}
	return os.WriteFile(filepath.Join(out, "causes.txt"), []byte(b.String()), 0o644)
}

// Failed reports whether a cause of the record is reproducible.
func (r Record) Failed() bool {
	return slices.ContainsFunc(r.Causes, func(c CauseRecord) bool { return !c.Flaky })
}

// MergeSummary is what `turnstile merge` says of merged explorations: the totals, then each
// cause with its count, rule, minimal scenario and folder.
func MergeSummary(r Record, out string) string {
	var b strings.Builder
	var elapsed time.Duration
	for _, e := range r.Explorations {
		elapsed += time.Duration(e.ElapsedMs) * time.Millisecond
	}
	fmt.Fprintf(&b, "%s merged: %s (%s of exploring), %d failing", plural(len(r.Explorations), "exploration"), plural(r.Runs, "run"),
		elapsed.Round(time.Millisecond), r.Failing)
	if r.Ignored > 0 {
		fmt.Fprintf(&b, ", %d more showing ignored causes", r.Ignored)
	}
	switch len(r.Causes) {
	case 0:
		b.WriteString("; no failure found\n")
		return b.String()
	case 1:
		b.WriteString("; 1 distinct failure:\n")
	default:
		fmt.Fprintf(&b, "; %d distinct failures:\n", len(r.Causes))
	}
	for k, c := range r.Causes {
		fmt.Fprintf(&b, "%3d. %s  %s\n", k+1, plural(c.Count, "run"), c.Signature)
		if c.Rule != "" {
			fmt.Fprintf(&b, "       rule: %s\n", c.Rule)
		}
		if len(c.Aliases) > 0 {
			fmt.Fprintf(&b, "       also seen as: %s\n", strings.Join(c.Aliases, "; "))
		}
		if c.Flaky {
			b.WriteString("       flaky: a re-run gave another trace\n")
		} else if c.Shrunk {
			fmt.Fprintf(&b, "       minimal: %s\n", c.Minimal)
		}
		fmt.Fprintf(&b, "       %s\n", filepath.Join(out, c.Dir))
	}
	return b.String()
}
