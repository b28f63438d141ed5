package scenarios

import (
	"slices"
	"strings"

	"github.com/goccy/go-yaml/ast"

	"github.com/turnstile-dev/turnstile/docs"
	"github.com/turnstile-dev/turnstile/sim"
)

// rules reads the rules: list, ids of docs/SEMANTICS.md.
func (d *decoder) rules(n ast.Node) []string {
	var out []string
	seen := map[string]bool{}
	for _, item := range d.sequence(n, "rules", false) {
		id := d.str(item, "a rule id")
		switch {
		case id == "":
		case seen[id]:
			d.errorf(item, "rule %s is listed twice", id)
		case !docs.HasRule(id) && docs.HasRule(strings.ToUpper(id)):
			d.errorf(item, "unknown rule %q: rule ids are upper case (%s)", id, strings.ToUpper(id))
		case !docs.HasRule(id):
			d.errorf(item, "unknown rule %q: docs/SEMANTICS.md defines no rule with that id", id)
		default:
			seen[id] = true
			out = append(out, id)
		}
	}
	return out
}

// features reads the features: list, names of sim.Features.
func (d *decoder) features(n ast.Node) []string {
	out := []string{}
	seen := map[string]bool{}
	for _, item := range d.sequence(n, "features", false) {
		name := d.str(item, "a feature")
		switch {
		case name == "":
		case seen[name]:
			d.errorf(item, "feature %s is listed twice", name)
		case !slices.Contains(sim.Features, name):
			d.errorf(item, "unknown feature %q (known: %s)", name, strings.Join(sim.Features, ", "))
		default:
			seen[name] = true
			out = append(out, name)
		}
	}
	return out
}

// checkFeatures compares the features a file lists with those its content needs.
func (d *decoder) checkFeatures(key ast.Node, listed, needed []string) {
	for _, f := range needed {
		if !slices.Contains(listed, f) {
			d.errorf(key, "the scenario needs feature %s (docs/SEMANTICS.md, \"Optional features\"); add it to features:", f)
		}
	}
	for _, f := range listed {
		if !slices.Contains(needed, f) {
			d.errorf(key, "features: lists %s, which the scenario does not need; remove it", f)
		}
	}
}
