package invariant

import "github.com/turnstile-dev/turnstile/jsonvalue"

// decodeJSON decodes JSON into the values encoding/json gives an any (map[string]any, []any,
// string, float64, bool, nil), several times faster (jsonvalue): traces are large and
// decoding them is most of the checking time. Input that jsonvalue leaves goes to
// encoding/json.
func decodeJSON(data []byte) any { return decodeJSONWith(data, nil) }

// traceMemo is the memo a view decodes its trace's entries through. It is eager: a trace's
// objects mostly come back (a streamed partial is delivered, then is its event's message and
// that event's partial), and the trace is read once.
func traceMemo() jsonvalue.Memo[any] { return jsonvalue.Memo[any]{Eager: true, Borrow: true} }

// decodeJSONWith is decodeJSON sharing, through memo, the values of the objects at the
// depths of messages (an event's message at 2, a context's at 3 to 5: data.messages[i],
// data.context.messages[i], data.turn.context.messages[i]) that the entries repeat, decoded
// once. The values are shared between entries: the invariants read them and never change
// them. memo may be nil.
func decodeJSONWith(data []byte, memo *jsonvalue.Memo[any]) any {
	d := jsonvalue.Decoder{Memo: memo, MemoFrom: 2, MemoTo: 5}
	return d.DecodeAny(data)
}
