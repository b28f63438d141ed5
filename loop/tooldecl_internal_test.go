package loop

import (
	"encoding/json"
	"math"
	"reflect"
	"testing"

	"pgregory.net/rapid"
)

// TestSameDeclarationIsTheJSONTextComparison holds sameDeclaration's comparison of values to
// the comparison of the declarations' JSON texts it stands for (pi's declarationsEqual):
// drawn declarations with nested schemas, nil and empty maps and lists, 0 and -0, and values
// of other Go types (compared by their text).
func TestSameDeclarationIsTheJSONTextComparison(t *testing.T) {
	negZero := math.Copysign(0, -1)
	pairs := [][2]ToolDeclaration{
		{{Name: "a"}, {Name: "a", ConstrainedSampling: map[string]any(nil)}}, // null is written, nil is omitted
		{{Name: "a"}, {Name: "a", Parameters: map[string]any{}}},
		{{Name: "a", Parameters: map[string]any{"x": 0.0}}, {Name: "a", Parameters: map[string]any{"x": negZero}}},
		{{Name: "a", Parameters: map[string]any{"x": nil}}, {Name: "a", Parameters: map[string]any{"x": []any(nil)}}},
		{{Name: "a", Parameters: map[string]any{"x": []any{}}}, {Name: "a", Parameters: map[string]any{"x": []any(nil)}}},
		{{Name: "a", Parameters: map[string]any{"x": 1.0}}, {Name: "a", Parameters: map[string]any{"x": 1}}},
		{{Name: "a", Parameters: map[string]any{"x": 1.0}}, {Name: "a", Parameters: map[string]any{"x": json.Number("1")}}},
		{{Name: "a", Parameters: map[string]any{"x": "1"}}, {Name: "a", Parameters: map[string]any{"x": 1.0}}},
		{{Name: "a", Parameters: map[string]any{"x": map[string]any{"y": true}}}, {Name: "a", Parameters: map[string]any{"x": map[string]any{"y": true}}}},
		{{Name: "a", Description: "d"}, {Name: "a"}},
		{{Name: "a", Description: "\xff"}, {Name: "a", Description: "\xfe"}}, // both written as U+FFFD
		{{Name: "a", Parameters: map[string]any{"\xff": 1.0}}, {Name: "a", Parameters: map[string]any{"\ufffd": 1.0}}},
		{{Name: "a", Parameters: map[string]any{"x": int64(1<<53 + 1)}}, {Name: "a", Parameters: map[string]any{"x": float64(1<<53 + 1)}}},
		{{Name: "a", Parameters: map[string]any{"x": struct{ B, A int }{1, 2}}}, {Name: "a", Parameters: map[string]any{"x": map[string]any{"B": 1.0, "A": 2.0}}}},
	}
	for _, p := range pairs {
		ja, _ := json.Marshal(p[0])
		jb, _ := json.Marshal(p[1])
		if got, want := sameDeclaration(p[0], p[1]), string(ja) == string(jb); got != want {
			t.Errorf("sameDeclaration = %v, the JSON texts say %v:\n%s\n%s", got, want, ja, jb)
		}
	}
	value := jsonValue(2)
	params := rapid.Custom(func(t *rapid.T) map[string]any {
		switch rapid.IntRange(0, 2).Draw(t, "params") {
		case 0:
			return nil
		case 1:
			return map[string]any{}
		}
		return map[string]any{"type": "object", "properties": value.Draw(t, "properties")}
	})
	sampling := rapid.Custom(func(t *rapid.T) any {
		if rapid.Bool().Draw(t, "sampling") {
			return value.Draw(t, "constrainedSampling")
		}
		return nil
	})
	seenSame, seenDifferent := 0, 0
	rapid.Check(t, func(t *rapid.T) {
		// b is a with some fields drawn again: close pairs, often written alike.
		a := ToolDeclaration{Name: "a", Description: "d", Parameters: params.Draw(t, "a.parameters"), ConstrainedSampling: sampling.Draw(t, "a.sampling")}
		b := a
		if rapid.Bool().Draw(t, "new parameters") {
			b.Parameters = params.Draw(t, "b.parameters")
		}
		if rapid.Bool().Draw(t, "new sampling") {
			b.ConstrainedSampling = sampling.Draw(t, "b.sampling")
		}
		ja, errA := json.Marshal(a)
		jb, errB := json.Marshal(b)
		want := errA == nil && errB == nil && string(ja) == string(jb)
		if got := sameDeclaration(a, b); got != want {
			t.Fatalf("sameDeclaration = %v, the JSON texts say %v:\n%s\n%s", got, want, ja, jb)
		}
		if want {
			seenSame++
		} else {
			seenDifferent++
		}
	})
	if seenSame == 0 || seenDifferent == 0 {
		t.Fatalf("%d equal and %d different pairs drawn: the test needs both", seenSame, seenDifferent)
	}
}

func jsonValue(depth int) *rapid.Generator[any] {
	return rapid.Custom(func(t *rapid.T) any {
		kinds := 7
		if depth == 0 {
			kinds = 5
		}
		switch rapid.IntRange(0, kinds-1).Draw(t, "kind") {
		case 0:
			return nil
		case 1:
			return rapid.SampledFrom([]string{"", "x"}).Draw(t, "s")
		case 2:
			return rapid.Bool().Draw(t, "b")
		case 3:
			return rapid.SampledFrom([]float64{0, math.Copysign(0, -1), 1, 1.5, 1e21}).Draw(t, "f")
		case 4:
			return rapid.SampledFrom([]any{map[string]any(nil), []any(nil), map[string]any{}, []any{}, 1, int64(-0), json.Number("1")}).Draw(t, "odd")
		case 5:
			m := map[string]any{}
			for _, k := range rapid.SliceOfNDistinct(rapid.SampledFrom([]string{"p", "q"}), 0, 2, rapid.ID).Draw(t, "keys") {
				m[k] = jsonValue(depth-1).Draw(t, "v")
			}
			return m
		default:
			return rapid.SliceOfN(jsonValue(depth-1), 0, 2).Draw(t, "list")
		}
	})
}

// TestToolsAreDeclaredOnce: a tool whose schema holds values a JSON copy changes (a large
// integer, a struct, text that is not UTF-8) is declared once, not again every turn: the
// transcript holds its JSON copy, and the loop compares the tool with that.
func TestToolsAreDeclaredOnce(t *testing.T) {
	tools := []*Tool{
		{Name: "big", Description: "d", Parameters: map[string]any{"max": int64(1<<53 + 1)}},
		{Name: "shaped", Description: "d", Parameters: map[string]any{"x": struct{ B, A int }{1, 2}}},
		{Name: "bytes", Description: "d", Parameters: map[string]any{"\xfe": "\xfd"}},
		{Name: "plain", Description: "d", Parameters: map[string]any{"type": "object"}},
	}
	first := DeclareToolChanges(nil, executableDeclarations(tools), []Message{&UserMessage{Text: "go"}}, 0)
	if len(first) != 2 {
		t.Fatalf("the first turn: %d messages, want the declarations and the prompt", len(first))
	}
	if again := DeclareToolChanges(first, executableDeclarations(tools), []Message{&UserMessage{Text: "more"}}, 0); len(again) != 1 {
		sys, _ := again[0].(*SystemMessage)
		t.Fatalf("the next turn declares the tools again: %+v", sys)
	}
}

// TestCloneDeclarationIsTheJSONCopy holds cloneDeclaration to cloneJSON, the JSON round trip
// it stands for: drawn declarations (nil and empty maps and lists, -0, ints, json.Number), and
// values a round trip changes (text that is not UTF-8 in a name, a description or a key, a
// struct, a NaN); the copy shares no map with the original (unless, as the JSON copy, it
// could not be written).
func TestCloneDeclarationIsTheJSONCopy(t *testing.T) {
	value := jsonValue(3)
	check := func(t interface{ Fatalf(string, ...any) }, d ToolDeclaration) {
		got, want := cloneDeclaration(d), cloneJSON(d)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("cloneDeclaration(%#v) =\n%#v\nthe JSON copy is\n%#v", d, got, want)
		}
		if _, err := json.Marshal(d); err == nil && len(d.Parameters) > 0 && reflect.ValueOf(got.Parameters).UnsafePointer() == reflect.ValueOf(d.Parameters).UnsafePointer() {
			t.Fatalf("the copy shares the parameters map")
		}
	}
	for _, d := range []ToolDeclaration{
		{Name: "\xff", Parameters: map[string]any{}},
		{Name: "a", Description: "\xfe\xfd"},
		{Name: "a", Parameters: map[string]any{"\xfe": 1.0}},
		{Name: "a", Parameters: map[string]any{"x": []any{"\xfe"}}},
		{Name: "a", Parameters: map[string]any{"x": struct{ B, A int }{1, 2}}},
		{Name: "a", Parameters: map[string]any{"x": math.NaN()}},
		{Name: "a", ConstrainedSampling: math.Inf(1)},
		{Name: "a", ConstrainedSampling: map[string]any(nil)},
		{Name: "a", ConstrainedSampling: []any{}},
	} {
		check(t, d)
	}
	rapid.Check(t, func(t *rapid.T) {
		d := ToolDeclaration{Name: "a", Description: "d"}
		if v, ok := value.Draw(t, "parameters").(map[string]any); ok {
			d.Parameters = v
		}
		if rapid.Bool().Draw(t, "sampling") {
			d.ConstrainedSampling = value.Draw(t, "constrainedSampling")
		}
		check(t, d)
	})
}
