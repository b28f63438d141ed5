package scenarios_test

import (
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/turnstile-dev/turnstile/docs"
	"github.com/turnstile-dev/turnstile/scenarios"
	"github.com/turnstile-dev/turnstile/sim"
)

// TestSuiteCitesRules requires every curated scenario to list the rules it pins and the
// features it needs, and every rule of docs/SEMANTICS.md to be pinned by a scenario or to say
// why none can pin it.
func TestSuiteCitesRules(t *testing.T) {
	files, err := scenarios.Suite()
	if err != nil {
		t.Fatal(err)
	}
	cited := map[string][]string{}
	for _, f := range files {
		if len(f.Scenario.Rules) == 0 {
			t.Errorf("%s: rules: is missing; list the ids of docs/SEMANTICS.md the scenario pins", f.Path)
		}
		for _, id := range f.Scenario.Rules {
			cited[id] = append(cited[id], f.Rel)
		}
		if need := sim.NeededFeatures(f.Scenario); len(need) > 0 && f.Features == nil {
			t.Errorf("%s: features: is missing; the scenario needs %s", f.Path, strings.Join(need, ", "))
		}
	}
	for _, r := range docs.Rules() {
		switch {
		case len(cited[r.ID]) == 0 && r.Unpinned == "":
			t.Errorf("rule %s is cited by no curated scenario and its section does not say why none can pin it", r.ID)
		case len(cited[r.ID]) > 0 && r.Unpinned != "":
			t.Errorf("rule %s says no scenario can pin it, but %s cite it", r.ID, strings.Join(cited[r.ID], ", "))
		}
	}
}

// TestEveryFeatureIsNeeded requires every optional feature to be needed by a curated scenario:
// a feature no scenario needs is one a port could claim to lack for nothing.
func TestEveryFeatureIsNeeded(t *testing.T) {
	files, err := scenarios.Suite()
	if err != nil {
		t.Fatal(err)
	}
	used := map[string]bool{}
	for _, f := range files {
		for _, feat := range sim.NeededFeatures(f.Scenario) {
			used[feat] = true
		}
	}
	for _, feat := range sim.Features {
		if !used[feat] {
			t.Errorf("feature %s is needed by no curated scenario", feat)
		}
	}
	if !slices.Equal(sim.Features, docFeatures(t)) {
		t.Errorf("docs/SEMANTICS.md's feature table lists %v; sim.Features is %v", docFeatures(t), sim.Features)
	}
}

// docFeatures reads the feature names from the table of SEMANTICS.md's "Optional features".
func docFeatures(t *testing.T) []string {
	doc := docs.Semantics()
	i := strings.Index(doc, "\n## Optional features")
	if i < 0 {
		t.Fatal(`docs/SEMANTICS.md has no "Optional features" section`)
	}
	section := doc[i+1:]
	if j := strings.Index(section, "\n## "); j >= 0 {
		section = section[:j]
	}
	var out []string
	for _, line := range strings.Split(section, "\n") {
		if strings.HasPrefix(line, "| `") {
			name, _, _ := strings.Cut(strings.TrimPrefix(line, "| `"), "`")
			out = append(out, name)
		}
	}
	return out
}

// TestRulesAndFeaturesChecked shows the loader's checks of rules: and features:.
func TestRulesAndFeaturesChecked(t *testing.T) {
	cases := []struct{ name, file, want string }{
		{"unknown rule", "rules: [R-NOPE]\nrun: [hi]\nprovider: [ok]\n", `x.yaml:1:9: unknown rule "R-NOPE": docs/SEMANTICS.md defines no rule with that id`},
		{"rule twice", "rules: [R-POLL-A, R-POLL-A]\nrun: [hi]\nprovider: [ok]\n", "x.yaml:1:19: rule R-POLL-A is listed twice"},
		{"unknown feature", "features: [images]\nrun: [hi]\nprovider: [ok]\n", `x.yaml:1:12: unknown feature "images" (known: ` + strings.Join(sim.Features, ", ") + ")"},
		{"missing feature", "features: []\ncontinue: true\ncontext: [hi]\nprovider: [ok]\n", `x.yaml:1:1: the scenario needs feature continue (docs/SEMANTICS.md, "Optional features"); add it to features:`},
		{"extra feature", "features: [continue]\nrun: [hi]\nprovider: [ok]\n", "x.yaml:1:1: features: lists continue, which the scenario does not need; remove it"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := scenarios.Parse("x.yaml", "x", []byte(c.file))
			if err == nil || err.Error() != c.want {
				t.Errorf("got  %v\nwant %s", err, c.want)
			}
		})
	}
	f, err := scenarios.Parse("x.yaml", "x", []byte("rules: [R-POLL-A]\nfeatures: [severalPrompts]\nrun: [a, b]\nprovider: [ok]\n"))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(f.Scenario.Rules, []string{"R-POLL-A"}) || !slices.Equal(f.Features, []string{"severalPrompts"}) {
		t.Errorf("rules %v, features %v", f.Scenario.Rules, f.Features)
	}
}

// TestSchemaFeatures keeps the schema's feature names those of sim.Features.
func TestSchemaFeatures(t *testing.T) {
	var schema struct {
		Properties struct {
			Features struct {
				Items struct {
					Enum []string `json:"enum"`
				} `json:"items"`
			} `json:"features"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(scenarios.Schema(), &schema); err != nil {
		t.Fatal(err)
	}
	if got := schema.Properties.Features.Items.Enum; !slices.Equal(got, sim.Features) {
		t.Errorf("schema.json's features are %v; sim.Features is %v", got, sim.Features)
	}
}

// TestReadmeExampleLoads parses the complete example of README.md.
func TestReadmeExampleLoads(t *testing.T) {
	data, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(data), "## A complete example\n\n```yaml\n")
	example, _, closed := strings.Cut(rest, "```\n")
	if !ok || !closed {
		t.Fatal("README.md: the complete example is missing")
	}
	f, err := scenarios.Parse("README.md", "example", []byte(example))
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Scenario.Rules) == 0 {
		t.Error("the README's example lists no rules")
	}
}
