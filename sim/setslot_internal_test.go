package sim

import (
	"reflect"
	"testing"
	"unsafe"

	"github.com/turnstile-dev/turnstile/loop"
)

// TestSetEventCopiesEveryField: setEvent makes dst equal to src whichever field of
// loop.StreamEvent differs (each set in turn, so a field added and not copied fails this).
func TestSetEventCopiesEveryField(t *testing.T) {
	typ := reflect.TypeOf(loop.StreamEvent{})
	for i := range typ.NumField() {
		var src loop.StreamEvent
		f := reflect.ValueOf(&src).Elem().Field(i)
		switch f.Kind() {
		case reflect.String:
			f.SetString("x")
		case reflect.Int:
			f.SetInt(1)
		case reflect.Pointer:
			f.Set(reflect.New(f.Type().Elem()))
		default:
			t.Fatalf("field %s of kind %s is not covered", typ.Field(i).Name, f.Kind())
		}
		dst := loop.StreamEvent{Delta: "old", Partial: &loop.AssistantMessage{}}
		setEvent(&dst, &src)
		if !reflect.DeepEqual(dst, src) || dst.Partial != src.Partial || dst.ToolCall != src.ToolCall || dst.Message != src.Message {
			t.Errorf("field %s: got %+v, want %+v", typ.Field(i).Name, dst, src)
		}
	}
}

// TestScheduledSetIsTheLiteral: set leaves a slot that held any delivery, every field of it
// set (a field added and not reset fails this), as the literal of the same members would be.
func TestScheduledSetIsTheLiteral(t *testing.T) {
	stream := &streamRun{id: "1"}
	ev := &loop.StreamEvent{Type: loop.StreamStart}
	var old scheduled
	var fill func(v reflect.Value)
	fill = func(v reflect.Value) {
		for i := range v.NumField() {
			f := reflect.NewAt(v.Field(i).Type(), unsafe.Pointer(v.Field(i).UnsafeAddr())).Elem()
			switch f.Kind() {
			case reflect.Int, reflect.Int64:
				f.SetInt(9)
			case reflect.String:
				f.SetString("old")
			case reflect.Bool:
				f.SetBool(true)
			case reflect.Pointer:
				f.Set(reflect.New(f.Type().Elem()))
			case reflect.Slice:
				f.Set(reflect.MakeSlice(f.Type(), 1, 1))
			case reflect.Interface:
				f.Set(reflect.ValueOf(1))
			case reflect.Func:
				f.Set(reflect.MakeFunc(f.Type(), func([]reflect.Value) []reflect.Value { return nil }))
			case reflect.Struct:
				fill(f)
			default:
				t.Fatalf("field %s of kind %s is not covered", v.Type().Field(i).Name, f.Kind())
			}
		}
	}
	fill(reflect.ValueOf(&old).Elem())
	for _, d := range []Delivery{{Kind: "streamEvent", Now: 1, Target: "1"}, {Kind: "streamEnd", Now: 2, Target: "1", Data: []byte(`{"a":1}`)}} {
		for _, e := range []*loop.StreamEvent{ev, nil} {
			p := old
			p.set(5, 6, &d, stream, e)
			want := scheduled{at: 5, seq: 6, delivery: d, stream: stream, event: e}
			if p.internal != nil || p.onRelease != nil {
				t.Fatal("set kept a function")
			}
			if !reflect.DeepEqual(p, want) || p.stream != stream || p.event != e {
				t.Errorf("set %+v: got %+v, want %+v", d, p, want)
			}
		}
	}
}
