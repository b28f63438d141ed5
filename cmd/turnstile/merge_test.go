package main

import (
	"encoding/json"
	"encoding/xml"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestMergeConformShards: two shards of conform's JSON and JUnit reports, merged, are the
// report of the whole suite: the same results, totals and causes; the same testcases and
// counts in JUnit. Overlapping shards are refused.
func TestMergeConformShards(t *testing.T) {
	impl := strconv.Quote(selfAdapter(t))
	dir := t.TempDir()
	// Held to an older pi than it tracks, the reference fails scenarios for two causes.
	conform := func(out, junit string, extra ...string) {
		args := append([]string{"conform", "--impl", impl, "--tracks", "0.87.1", "--run", "tools-sequential", "--format", "json", "--junit", junit}, extra...)
		stdout, errOut, code := turnstile(t, args...)
		if code != 1 {
			t.Fatalf("conform %v: exit %d: %s", extra, code, errOut)
		}
		if err := os.WriteFile(out, []byte(stdout), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	path := func(name string) string { return filepath.Join(dir, name) }
	conform(path("whole.json"), path("whole.xml"))
	conform(path("1.json"), path("1.xml"), "--shard", "1/2")
	conform(path("2.json"), path("2.xml"), "--shard", "2/2")
	if _, errOut, code := turnstile(t, "merge", path("1.json"), path("2.json"), "--out", path("merged.json"), "--junit", path("merged.xml")); code != 1 {
		t.Fatalf("merge: exit %d (want 1: the merged suite fails): %s", code, errOut)
	}
	type report struct {
		Summary string `json:"summary"`
		Causes  []struct {
			Signature string   `json:"signature"`
			Scenarios []string `json:"scenarios"`
		} `json:"causes"`
		Results []struct {
			Scenario, Status string
		} `json:"results"`
	}
	read := func(name string) (r report) {
		data, err := os.ReadFile(path(name))
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(data, &r); err != nil {
			t.Fatal(err)
		}
		slices.SortFunc(r.Results, func(a, b struct{ Scenario, Status string }) int { return strings.Compare(a.Scenario, b.Scenario) })
		for _, c := range r.Causes {
			slices.Sort(c.Scenarios)
		}
		return r
	}
	whole, merged := read("whole.json"), read("merged.json")
	if len(whole.Causes) == 0 || whole.Summary != merged.Summary || !slices.Equal(whole.Results, merged.Results) {
		t.Errorf("merged %q, %d results; whole %q, %d results", merged.Summary, len(merged.Results), whole.Summary, len(whole.Results))
	}
	wj, _ := json.Marshal(whole.Causes)
	mj, _ := json.Marshal(merged.Causes)
	if string(wj) != string(mj) {
		t.Errorf("merged causes %s, whole %s", mj, wj)
	}

	type junit struct {
		Tests    int `xml:"tests,attr"`
		Failures int `xml:"failures,attr"`
		Skipped  int `xml:"skipped,attr"`
		Suites   []struct {
			Tests      int `xml:"tests,attr"`
			Properties []struct {
				Name  string `xml:"name,attr"`
				Value string `xml:"value,attr"`
			} `xml:"properties>property"`
			Cases []struct {
				Name string `xml:"name,attr"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	readXML := func(data []byte) (j junit) {
		if err := xml.Unmarshal(data, &j); err != nil {
			t.Fatal(err)
		}
		return j
	}
	wholeXML, _ := os.ReadFile(path("whole.xml"))
	mergedJUnit, errOut, code := turnstile(t, "merge", path("1.xml"), path("2.xml"))
	if code != 1 {
		t.Fatalf("merge of JUnit: exit %d: %s", code, errOut)
	}
	for _, m := range []junit{readXML([]byte(mergedJUnit)), readXML(mustRead(t, path("merged.xml")))} {
		w := readXML(wholeXML)
		if m.Tests != w.Tests || m.Failures != w.Failures || m.Skipped != w.Skipped || len(m.Suites) != 1 || len(m.Suites[0].Cases) != len(w.Suites[0].Cases) {
			t.Errorf("merged JUnit %+v, whole %+v", m, w)
			continue
		}
		wp, _ := json.Marshal(w.Suites[0].Properties)
		mp, _ := json.Marshal(m.Suites[0].Properties)
		if string(wp) != string(mp) {
			t.Errorf("merged JUnit properties %s, whole %s", mp, wp)
		}
	}

	if _, errOut, code := turnstile(t, "merge", path("1.json"), path("1.json")); code != 2 || !strings.Contains(errOut, "the shards overlap") {
		t.Errorf("overlapping shards: exit %d: %s", code, errOut)
	}
	if _, errOut, code := turnstile(t, "merge", path("1.json"), path("2.xml")); code != 2 || !strings.Contains(errOut, "merge inputs of one kind") {
		t.Errorf("inputs of two kinds: exit %d: %s", code, errOut)
	}
}

func mustRead(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestMergeExploreShards: explore --shard K/N into a folder each, merged into one folder,
// counts the runs of the whole exploration and lists its causes; merging needs --out, a new
// folder.
func TestMergeExploreShards(t *testing.T) {
	dir := t.TempDir()
	var dirs []string
	for k := 1; k <= 3; k++ {
		d := filepath.Join(dir, "shard-"+strconv.Itoa(k))
		// A budget every run exceeds: every run fails, for one cause.
		_, errOut, code := turnstile(t, "explore", "--runs", "12", "--seed", "7", "--max-requests", "1", "--shard", strconv.Itoa(k)+"/3",
			"--shrink-time", "0", "--out", d)
		if code != 1 {
			t.Fatalf("explore shard %d: exit %d: %s", k, code, errOut)
		}
		dirs = append(dirs, d)
	}
	out := filepath.Join(dir, "merged")
	stdout, errOut, code := turnstile(t, append([]string{"merge", "--out", out}, dirs...)...)
	if code != 1 || !strings.HasPrefix(stdout, "3 explorations merged: 12 runs") {
		t.Fatalf("merge: exit %d:\n%s%s", code, stdout, errOut)
	}
	if _, err := os.Stat(filepath.Join(out, "causes.txt")); err != nil {
		t.Error(err)
	}
	if _, errOut, code := turnstile(t, append([]string{"merge"}, dirs...)...); code != 2 || !strings.Contains(errOut, "needs --out") {
		t.Errorf("merge without --out: exit %d: %s", code, errOut)
	}
	if _, errOut, code := turnstile(t, append([]string{"merge", "--out", out}, dirs...)...); code != 2 || !strings.Contains(errOut, "is not empty") {
		t.Errorf("merge into a folder that is not empty: exit %d: %s", code, errOut)
	}
}
