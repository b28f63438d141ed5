package sim_test

import (
	"reflect"
	"testing"

	"github.com/turnstile-dev/turnstile/sim"
)

func TestPrepareSetsItsKeysOnACopy(t *testing.T) {
	tool := sim.ToolSetup{Name: "work", PrepareArguments: map[string]any{"mode": "fast"}}
	args := map[string]any{"path": "a", "mode": "slow"}
	got := tool.Prepare(args)
	if !reflect.DeepEqual(got, map[string]any{"path": "a", "mode": "fast"}) || args["mode"] != "slow" {
		t.Errorf("Prepare = %v (args now %v)", got, args)
	}
	if got := tool.Prepare("not an object"); !reflect.DeepEqual(got, map[string]any{"mode": "fast"}) {
		t.Errorf("Prepare of a non-object = %v", got)
	}
}
