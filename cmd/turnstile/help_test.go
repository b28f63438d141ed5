package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/turnstile-dev/turnstile/audit"
)

// Help budgets: a command's whole --help fits on a screen, fewer than 25 lines (mainFlags
// names the flags a command's help has no room to describe).
const (
	helpLines = 24
	flagUsage = 90 // longest flag description, cobra's "(default …)" included
)

// detailsPointer is the last line of every Long text: where its details are.
var detailsPointer = regexp.MustCompile(`Details: docs/CLI\.md#([a-z0-9-]+)$`)

// helpSections is a rendered --help cut into the parts the budgets speak of.
type helpSections struct {
	all, long, examples, flags, commands []string
}

// cutHelp cuts cobra's default help output: the Long text up to "Usage:", then titled
// sections ("Examples:", "Available Commands:", "Flags:", …), each ending at a blank line.
func cutHelp(out string) helpSections {
	h := helpSections{all: strings.Split(strings.TrimRight(out, "\n"), "\n")}
	section := "long"
	for _, line := range h.all {
		switch {
		case section == "long" && line != "Usage:":
			h.long = append(h.long, line)
			continue
		case line == "":
			section = ""
		case !strings.HasPrefix(line, " ") && strings.HasSuffix(line, ":"):
			section = line
		case section == "Examples:":
			h.examples = append(h.examples, line)
		case section == "Flags:":
			h.flags = append(h.flags, line)
		case section == "Available Commands:":
			h.commands = append(h.commands, strings.Fields(line)[0])
		}
		if line == "Usage:" {
			section = line
		}
	}
	// The blank line between the Long text and "Usage:" is cobra's.
	for len(h.long) > 0 && h.long[len(h.long)-1] == "" {
		h.long = h.long[:len(h.long)-1]
	}
	return h
}

// flagLine is a line of a Flags section: "  -h, --name type   description".
var flagLine = regexp.MustCompile(`^\s+(?:-\w, )?--\S+(?: \w+)?\s{2,}(.*)$`)

// markdownAnchors are the anchors GitHub gives the headings of a Markdown text.
func markdownAnchors(md string) map[string]bool {
	anchors := map[string]bool{}
	seen := map[string]int{}
	inCode := false
	for _, line := range strings.Split(md, "\n") {
		if strings.HasPrefix(line, "```") {
			inCode = !inCode
		}
		if inCode || !strings.HasPrefix(line, "#") {
			continue
		}
		title := strings.TrimSpace(strings.TrimLeft(line, "#"))
		var b strings.Builder
		for _, r := range strings.ToLower(title) {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9':
				b.WriteRune(r)
			}
		}
		a := b.String()
		if n := seen[a]; n > 0 {
			seen[a]++
			a += "-" + string(rune('0'+n))
		} else {
			seen[a] = 1
		}
		anchors[a] = true
	}
	return anchors
}

func readCLIDoc(t *testing.T) string {
	t.Helper()
	doc, err := os.ReadFile(filepath.Join(repoRoot, "docs", "CLI.md"))
	if err != nil {
		t.Fatal(err)
	}
	return string(doc)
}

// TestHelpFitsAScreen: every command's --help (the root's too) fits in fewer than 25 lines
// and has an example; every flag says what it is in a short clause; every Long text ends by
// pointing at a section of docs/CLI.md that exists.
func TestHelpFitsAScreen(t *testing.T) {
	doc := readCLIDoc(t)
	anchors := markdownAnchors(doc)
	rootOut, _, code := turnstile(t, "--help")
	if code != 0 {
		t.Fatalf("--help: exit %d", code)
	}
	root := cutHelp(rootOut)
	if len(root.commands) < 10 {
		t.Fatalf("--help lists %d commands:\n%s", len(root.commands), rootOut)
	}
	check := func(name, out string) {
		h := cutHelp(out)
		if len(h.all) > helpLines {
			t.Errorf("%s --help: %d lines, more than %d:\n%s", name, len(h.all), helpLines, out)
		}
		if len(h.examples) == 0 && name != "turnstile" {
			t.Errorf("%s --help: no example", name)
		}
		// The flags a help only names (mainFlags) are described in docs/CLI.md.
		if _, also, ok := strings.Cut(out, "\nAlso: "); ok {
			for _, f := range regexp.MustCompile(`--[a-z-]+`).FindAllString(also, -1) {
				if !strings.Contains(doc, "`"+f) {
					t.Errorf("%s --help names %s, which docs/CLI.md does not describe", name, f)
				}
			}
		}
		for _, f := range h.flags {
			cols := flagLine.FindStringSubmatch(f)
			if cols == nil {
				t.Errorf("%s --help: a flag line not understood: %q", name, f)
			} else if len(cols[1]) > flagUsage {
				t.Errorf("%s --help: a flag's description longer than %d characters: %q", name, flagUsage, cols[1])
			}
		}
		if len(h.long) == 0 {
			t.Errorf("%s --help: no Long text", name)
			return
		}
		m := detailsPointer.FindStringSubmatch(h.long[len(h.long)-1])
		if m == nil {
			t.Errorf("%s --help: the Long text does not end with \"Details: docs/CLI.md#…\": %q", name, h.long[len(h.long)-1])
		} else if !anchors[m[1]] {
			t.Errorf("%s --help points at docs/CLI.md#%s, which has no such heading", name, m[1])
		}
	}
	check("turnstile", rootOut)
	for _, name := range root.commands {
		if name == "help" || name == "completion" {
			continue // cobra's own
		}
		out, _, code := turnstile(t, name, "--help")
		if code != 0 {
			t.Errorf("%s --help: exit %d", name, code)
			continue
		}
		check(name, out)
	}
}

// TestCLIDocListsTheAuditRules: docs/CLI.md's table of audit rules is the audit's own list,
// word for word.
func TestCLIDocListsTheAuditRules(t *testing.T) {
	doc := readCLIDoc(t)
	for _, r := range audit.Rules() {
		if row := "| " + r.Name + " | " + r.Doc + " |"; !strings.Contains(doc, row) {
			t.Errorf("docs/CLI.md lacks the audit rule row %q", row)
		}
	}
}

func TestMarkdownAnchors(t *testing.T) {
	got := markdownAnchors("# The turnstile CLI\n## conform\n```sh\n# not a heading\n```\n### Flags shared by several commands\n## conform\n")
	for _, want := range []string{"the-turnstile-cli", "conform", "flags-shared-by-several-commands", "conform-1"} {
		if !got[want] {
			t.Errorf("no anchor %q in %v", want, got)
		}
	}
	if got["not-a-heading"] {
		t.Error("a comment in a code block was taken for a heading")
	}
}
