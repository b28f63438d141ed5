package sim

import (
	"reflect"
	"testing"

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

// TestScheduledSetIsTheLiteral: set leaves a slot that held any delivery as the literal of the
// same members would be.
func TestScheduledSetIsTheLiteral(t *testing.T) {
	stream, other := &streamRun{id: "1"}, &streamRun{id: "2"}
	ev := &loop.StreamEvent{Type: loop.StreamStart}
	old := scheduled{at: 9, seq: 9, delivery: Delivery{Kind: "k", Now: 9, Target: "t", Data: []byte("{}"), Value: 1},
		internal: func() {}, onRelease: func() {}, stream: other, tool: &toolRun{}, event: &loop.StreamEvent{}, cancelled: true, index: 3}
	for _, d := range []Delivery{{Kind: "streamEvent", Now: 1, Target: "1"}, {Kind: "streamEnd", Now: 2, Target: "1", Data: []byte(`{"a":1}`)}} {
		for _, e := range []*loop.StreamEvent{ev, nil} {
			p := old
			p.set(5, 6, &d, stream, e)
			want := scheduled{at: 5, seq: 6, delivery: d, stream: stream, event: e}
			if p.internal != nil || p.onRelease != nil {
				t.Fatal("set kept a function")
			}
			p.internal, p.onRelease = nil, nil
			if !reflect.DeepEqual(p, want) || p.stream != stream || p.event != e {
				t.Errorf("set %+v: got %+v, want %+v", d, p, want)
			}
		}
	}
}
