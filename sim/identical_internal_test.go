package sim

import (
	"reflect"
	"testing"

	"github.com/turnstile-dev/turnstile/loop"
)

// TestIdenticalHeads: a copy of an assistant message has the same head whatever its content,
// and is identical while its content is the same slice; a copy that differs in any other
// field has not the same head (each field set in turn, so a field added is looked at too).
func TestIdenticalHeads(t *testing.T) {
	base := &loop.AssistantMessage{Content: []loop.Block{loop.TextContent{Text: "a"}}, API: "api", Model: "m"}
	same := *base
	if !identicalHeads(base, &same) || !identicalWhole(base, &same) {
		t.Fatal("a copy is not identical")
	}
	same.Content = append([]loop.Block{}, loop.TextContent{Text: "b"})
	if !identicalHeads(base, &same) || identicalWhole(base, &same) {
		t.Fatal("a copy with other content: its head is not identical, or it is whole")
	}
	typ := reflect.TypeOf(*base)
	for i := range typ.NumField() {
		f := typ.Field(i)
		if f.Name == "Content" {
			continue
		}
		other := *base
		setNonZero(t, reflect.ValueOf(&other).Elem().Field(i), f.Name)
		if identicalHeads(base, &other) || identicalWhole(base, &other) {
			t.Errorf("a copy with another %s is identical", f.Name)
		}
	}
}

// setNonZero sets v, a field of loop.AssistantMessage, to a value its zero is not.
func setNonZero(t *testing.T, v reflect.Value, name string) {
	t.Helper()
	switch v.Kind() {
	case reflect.String:
		v.SetString(v.String() + "x")
	case reflect.Int64:
		v.SetInt(v.Int() + 1)
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
	case reflect.Struct: // the usage
		setNonZero(t, v.Field(0), name)
	default:
		t.Fatalf("field %s of kind %s is not covered", name, v.Kind())
	}
}

// identicalWhole is what sameMessage takes as the same message without looking further: the
// same head and the same blocks.
func identicalWhole(a, b *loop.AssistantMessage) bool {
	return identicalHeads(a, b) && identicalBlocks(a.Content, b.Content)
}
