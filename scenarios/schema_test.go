package scenarios_test

import (
	"bytes"
	"io/fs"
	"testing"

	"github.com/goccy/go-yaml"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/turnstile-dev/turnstile/scenarios"
)

// TestSchemaAcceptsTheSuite keeps schema.json in step with the loader: every curated file,
// which the loader accepts, must validate.
func TestSchemaAcceptsTheSuite(t *testing.T) {
	sch := compileSchema(t)
	err := fs.WalkDir(scenarios.SuiteFS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !scenarios.IsScenarioFile(p) {
			return err
		}
		data, _ := fs.ReadFile(scenarios.SuiteFS(), p)
		if err := sch.Validate(yamlValue(t, data)); err != nil {
			t.Errorf("%s: schema rejects a file the loader accepts: %v", p, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func compileSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(scenarios.Schema()))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("scenario.json", doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile("scenario.json")
	if err != nil {
		t.Fatal(err)
	}
	return sch
}

func yamlValue(t *testing.T, data []byte) any {
	t.Helper()
	j, err := yaml.YAMLToJSON(data)
	if err != nil {
		t.Fatal(err)
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(j))
	if err != nil {
		t.Fatal(err)
	}
	return v
}
