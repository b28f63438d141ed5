package invariant

import (
	"encoding/json"

	"github.com/turnstile-dev/turnstile/jsonvalue"
)

// decodeJSON decodes JSON into the values encoding/json gives an any (map[string]any, []any,
// string, float64, bool, nil), several times faster (jsonvalue): traces are large and
// decoding them is most of the checking time. Input that jsonvalue leaves goes to
// encoding/json.
func decodeJSON(data []byte) any { return decodeJSONWith(data, nil) }

// decodeJSONWith is decodeJSON sharing, through memo, the values of the objects one or two
// levels down (messages: a trace repeats each in several entries, written alike), decoded
// once. The values are shared between entries: the invariants read them and never change
// them. memo may be nil.
func decodeJSONWith(data []byte, memo *jsonvalue.Memo) any {
	d := jsonvalue.Decoder{Memo: memo, MemoFrom: 2, MemoTo: 3}
	if v, ok := d.Decode(data); ok {
		return v
	}
	var out any
	_ = json.Unmarshal(data, &out)
	return out
}
