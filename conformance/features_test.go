package conformance_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/turnstile-dev/turnstile/conformance"
	"github.com/turnstile-dev/turnstile/conformance/example"
	"github.com/turnstile-dev/turnstile/conformance/porttest"
	"github.com/turnstile-dev/turnstile/conformance/protocol"
	suitefiles "github.com/turnstile-dev/turnstile/scenarios"
	"github.com/turnstile-dev/turnstile/sim"
)

// curatedScenario returns the curated scenario at rel.
func curatedScenario(t *testing.T, rel string) *sim.Scenario {
	t.Helper()
	files, err := suitefiles.Suite()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if f.Rel == rel {
			return f.Scenario
		}
	}
	t.Fatalf("no curated scenario %s", rel)
	return nil
}

// TestHelloLacks reads capabilities.lacks from an adapter's hello, and refuses a name that
// is not a feature.
func TestHelloLacks(t *testing.T) {
	p := &protocol.Process{Command: []string{"sh", filepath.Join("testdata", "lacks.sh")}}
	hello, err := p.Hello()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(hello.Lacks, []string{"continue", "throwingHooks"}) {
		t.Errorf("lacks %v", hello.Lacks)
	}
	_ = p.Close()
	p = &protocol.Process{Command: []string{"sh", filepath.Join("testdata", "badlacks.sh")}}
	if _, err := p.Hello(); err == nil || !strings.Contains(err.Error(), "lacks") {
		t.Errorf("a hello lacking an unknown feature: %v", err)
	} else {
		t.Log(err)
	}
	_ = p.Close()
}

// lacking is the reference saying in its hello that it lacks some optional features.
type lacking struct {
	*sim.Reference
	lacks []string
}

func (l lacking) Hello() (protocol.Hello, error) {
	return protocol.Hello{Name: "lacking", Tracks: "1.6.0", Hooks: protocol.AllHooks, Lacks: l.lacks}, nil
}

func TestVerifySkipsScenariosNeedingLackedFeatures(t *testing.T) {
	suite := []*sim.Scenario{curatedScenario(t, "events/text-only"), curatedScenario(t, "continue/from-user-tail"), curatedScenario(t, "tools-sequential/prepare-arguments")}
	report := conformance.Verify(context.Background(), suite, lacking{sim.NewReference(), []string{sim.FeatureContinue, sim.FeatureThrowingHooks}}, conformance.Options{})
	if report.Summary() != "2 passed, 0 failed, 1 skipped" {
		t.Fatalf("summary %q", report.Summary())
	}
	if r := report.Results[1]; r.Status != conformance.Skip || r.Reason != "the scenario needs feature continue, which the implementation lacks" {
		t.Errorf("result %+v", r)
	}
	// Lacking nothing (a hello without lacks) runs everything.
	report = conformance.Verify(context.Background(), suite, lacking{sim.NewReference(), nil}, conformance.Options{})
	if report.Summary() != "3 passed, 0 failed" {
		t.Fatalf("summary %q", report.Summary())
	}
}

// TestSchemaLacksAreTheFeatures keeps the protocol schema's feature names those of sim.Features.
func TestSchemaLacksAreTheFeatures(t *testing.T) {
	var schema struct {
		Defs struct {
			Hello struct {
				Properties struct {
					Capabilities struct {
						Properties struct {
							Lacks struct {
								Items struct {
									Enum []string `json:"enum"`
								} `json:"items"`
							} `json:"lacks"`
						} `json:"properties"`
					} `json:"capabilities"`
				} `json:"properties"`
			} `json:"hello"`
		} `json:"$defs"`
	}
	if err := json.Unmarshal(protocol.SchemaJSON(), &schema); err != nil {
		t.Fatal(err)
	}
	if got := schema.Defs.Hello.Properties.Capabilities.Properties.Lacks.Items.Enum; !slices.Equal(got, sim.Features) {
		t.Errorf("protocol.schema.json's lacks are %v; sim.Features is %v", got, sim.Features)
	}
}

// lackingPort is the example port saying it lacks Continue, and failing if it is asked to
// continue anyway.
type lackingPort struct {
	example.Port
	t *testing.T
}

func (p lackingPort) Hello() protocol.Hello {
	h := p.Port.Hello()
	h.Lacks = []string{sim.FeatureContinue}
	return h
}

func (p lackingPort) Run(ctx context.Context, env porttest.Env) (any, error) {
	if env.Setup().Entry == "continue" {
		p.t.Errorf("%s: a port lacking continue was asked to continue", env.Setup().Scenario)
	}
	return p.Port.Run(ctx, env)
}

// TestGoPortLacks skips, in porttest.TestFiles, the scenarios needing what a Go port lacks.
func TestGoPortLacks(t *testing.T) {
	var files []*suitefiles.File
	for _, sc := range []*sim.Scenario{curatedScenario(t, "continue/from-user-tail"), curatedScenario(t, "events/text-only")} {
		files = append(files, &suitefiles.File{Rel: sc.Name, Scenario: sc})
	}
	porttest.TestFiles(t, lackingPort{t: t}, files)
}
