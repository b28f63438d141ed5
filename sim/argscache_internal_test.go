package sim

import (
	"bytes"
	"fmt"
	"maps"
	"math"
	"testing"

	"github.com/turnstile-dev/turnstile/loop"
	"pgregory.net/rapid"
)

// argValue draws a value of a tool call's arguments: scalars that compare alike (0 and -0,
// int and float64 of the same number, strings to escape) and values that are not scalars.
func argValue() *rapid.Generator[any] {
	return rapid.Custom(func(t *rapid.T) any {
		switch rapid.IntRange(0, 8).Draw(t, "kind") {
		case 0:
			return nil
		case 1:
			return rapid.SampledFrom([]string{"", "a", "a<b", "é", "\x00"}).Draw(t, "s")
		case 2:
			return rapid.SampledFrom([]float64{0, math.Copysign(0, -1), 1, 1.5, 1e300, -7}).Draw(t, "f")
		case 3:
			return rapid.Bool().Draw(t, "b")
		case 4:
			return rapid.IntRange(-1, 2).Draw(t, "int")
		case 5:
			return map[string]any{"k": rapid.IntRange(0, 1).Draw(t, "n")}
		case 6:
			return []any{rapid.Bool().Draw(t, "item")}
		default:
			return float64(rapid.IntRange(0, 2).Draw(t, "small"))
		}
	})
}

// argMap draws an arguments map of a few keys from a small set (maps often share keys).
func argMap() *rapid.Generator[map[string]any] {
	return rapid.MapOfN(rapid.SampledFrom([]string{"i", "j", "path", "é"}), argValue(), 1, 3)
}

// TestArgumentsCacheWritesAsPlain: tool calls' arguments written through a head cache (calls in
// messages and toolcall_end events, sizes of blocks, executions' arguments that are a call's own
// map, a copy of it, a copy changed before it is written, or another map) read as they are
// written without one, whatever maps the cache holds and however many calls push them out.
func TestArgumentsCacheWritesAsPlain(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		h := &headCache{}
		pool := rapid.SliceOfN(argMap(), 1, 12).Draw(t, "maps")
		ids := []string{"a1", "b1", "t"}
		for step := range rapid.IntRange(1, 60).Draw(t, "steps") {
			m := pool[rapid.IntRange(0, len(pool)-1).Draw(t, "map")]
			id := rapid.SampledFrom(ids).Draw(t, "id")
			call := loop.ToolCall{ID: id, Name: "n", Arguments: m}
			var got, want []byte
			switch rapid.IntRange(0, 3).Draw(t, "op") {
			case 0:
				got, want = appendToolCallWith([]byte("x"), &call, h), appendToolCall([]byte("x"), &call)
			case 1:
				got = []byte(fmt.Sprint(blockSize(call, h)))
				want = []byte(fmt.Sprint(len(appendBlock(nil, call))))
			default:
				args := m
				switch rapid.IntRange(0, 3).Draw(t, "args") {
				case 0:
					args = maps.Clone(m)
				case 1:
					args = maps.Clone(m)
					args[rapid.SampledFrom([]string{"i", "k"}).Draw(t, "key")] = argValue().Draw(t, "value")
				case 2:
					args = argMap().Draw(t, "other")
				}
				got, want = h.knownArguments([]byte("x"), id, args), appendCanonical([]byte("x"), args)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("step %d: got %s, want %s", step, got, want)
			}
		}
	})
}

// TestSameScalarMapsMeansSameJSON: maps sameScalarMaps finds alike write the same JSON.
func TestSameScalarMapsMeansSameJSON(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		a, b := argMap().Draw(t, "a"), argMap().Draw(t, "b")
		if rapid.Bool().Draw(t, "copy") {
			b = maps.Clone(a)
		}
		if sameScalarMaps(a, b) && !bytes.Equal(appendCanonical(nil, a), appendCanonical(nil, b)) {
			t.Fatalf("%v and %v alike, but %s and %s", a, b, appendCanonical(nil, a), appendCanonical(nil, b))
		}
	})
}

// TestCallCacheWritesAsPlain: tool calls written through a head cache, in contents (blocks
// boxed once and met again, or boxed anew) and as events' calls, and the ids members of their
// executions, read as they are written without one, whatever calls share a slot (idSlot).
func TestCallCacheWritesAsPlain(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		h, e := &headCache{}, newEncoder()
		pool := rapid.SliceOfN(argMap(), 1, 4).Draw(t, "maps")
		ids := []string{"a1", "b1", "a2", "b2", "t1", "t5", "", "a1b1", "e1"} // e1: a1's slot, length and last byte
		var boxes []loop.Block
		for step := range rapid.IntRange(1, 60).Draw(t, "steps") {
			id := rapid.SampledFrom(ids).Draw(t, "id")
			name := rapid.SampledFrom([]string{"a", "b", ""}).Draw(t, "name")
			call := loop.ToolCall{ID: id, Name: name, ThoughtSignature: rapid.SampledFrom([]string{"", "s"}).Draw(t, "sig")}
			if rapid.Bool().Draw(t, "args") {
				call.Arguments = pool[rapid.IntRange(0, len(pool)-1).Draw(t, "map")]
			}
			var got, want []byte
			switch rapid.IntRange(0, 2).Draw(t, "op") {
			case 0:
				got, want = h.toolCall([]byte("x"), &call, ifaceWords{}), appendToolCall([]byte("x"), &call)
			case 1:
				boxes = append(boxes, call) // boxed once, met again in later contents
				var content []loop.Block
				for range rapid.IntRange(0, 3).Draw(t, "blocks") {
					switch k := rapid.IntRange(0, len(boxes)).Draw(t, "block"); k {
					case len(boxes):
						content = append(content, loop.TextContent{Text: "t"})
					default:
						content = append(content, boxes[k])
					}
				}
				got, want = h.content([]byte("x"), content), appendAssistantContent([]byte("x"), content)
			default:
				got = e.toolIDs(open([]byte("x")), id, name).close()
				want = open([]byte("x")).str("toolCallId", id).str("toolName", name).close()
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("step %d: got %s, want %s", step, got, want)
			}
		}
	})
}
