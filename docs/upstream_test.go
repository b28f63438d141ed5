package docs_test

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/turnstile-dev/turnstile/scenarios"
)

// upstreamRow is one case of UPSTREAM.md's tables.
type upstreamRow struct {
	line      int
	name      string
	status    string
	scenarios []string
	note      string
}

// scenarioRef is a scenario named in a table cell: `family/name`.
var scenarioRef = regexp.MustCompile("`([a-z0-9-]+/[a-z0-9-]+)`")

// upstreamRows reads the case rows of UPSTREAM.md's tables (header and rule rows left out).
func upstreamRows(t *testing.T, text string) []upstreamRow {
	t.Helper()
	var rows []upstreamRow
	for i, line := range strings.Split(text, "\n") {
		if !strings.HasPrefix(line, "| ") || strings.HasPrefix(line, "| case |") {
			continue
		}
		cells := strings.Split(strings.Trim(strings.TrimSpace(line), "|"), "|")
		if len(cells) != 4 {
			t.Errorf("UPSTREAM.md:%d: a case row has 4 cells (case, status, scenarios, note), this one %d", i+1, len(cells))
			continue
		}
		r := upstreamRow{line: i + 1, name: strings.TrimSpace(cells[0]), status: strings.TrimSpace(cells[1]), note: strings.TrimSpace(cells[3])}
		for _, m := range scenarioRef.FindAllStringSubmatch(cells[2], -1) {
			r.scenarios = append(r.scenarios, m[1])
		}
		if rest := strings.Trim(scenarioRef.ReplaceAllString(cells[2], ""), " ,"); strings.Trim(rest, " ,") != "" {
			t.Errorf("UPSTREAM.md:%d: the scenarios cell %q holds %q, which is not a `family/name`", r.line, cells[2], rest)
		}
		rows = append(rows, r)
	}
	return rows
}

// TestUpstreamCasesNameRealScenarios keeps UPSTREAM.md true: every scenario it names is in the
// curated suite, every pinned or partial case names one, every other case says why, and no
// case is listed twice in one file's table.
func TestUpstreamCasesNameRealScenarios(t *testing.T) {
	data, err := os.ReadFile("UPSTREAM.md")
	if err != nil {
		t.Fatal(err)
	}
	files, err := scenarios.Suite()
	if err != nil {
		t.Fatal(err)
	}
	suite := map[string]bool{}
	for _, f := range files {
		suite[f.Rel] = true
	}
	rows := upstreamRows(t, string(data))
	if len(rows) < 70 {
		t.Fatalf("UPSTREAM.md lists %d cases; pi's two test files have more than 70", len(rows))
	}
	seen := map[string]int{}
	for _, r := range rows {
		if prev, ok := seen[r.name]; ok && !strings.Contains(r.name, "legacy caller omits streamFn") {
			t.Errorf("UPSTREAM.md:%d: case %q is listed again (first at line %d)", r.line, r.name, prev)
		}
		seen[r.name] = r.line
		switch r.status {
		case "pinned", "partial":
			if len(r.scenarios) == 0 {
				t.Errorf("UPSTREAM.md:%d: %s case %q names no scenario", r.line, r.status, r.name)
			}
			if r.status == "partial" && r.note == "" {
				t.Errorf("UPSTREAM.md:%d: partial case %q does not say what is left", r.line, r.name)
			}
		case "none", "out":
			if r.note == "" {
				t.Errorf("UPSTREAM.md:%d: case %q (%s) does not say why", r.line, r.name, r.status)
			}
		default:
			t.Errorf("UPSTREAM.md:%d: case %q has status %q; want pinned, partial, none or out", r.line, r.name, r.status)
		}
		for _, s := range r.scenarios {
			if !suite[s] {
				t.Errorf("UPSTREAM.md:%d: case %q names scenario %s, which the curated suite does not have", r.line, r.name, s)
			}
		}
	}
}
