package jsonvalue

// Raw reads any value and returns its bytes as they are, when they are written as json.Marshal
// writes a json.RawMessage (MarshalForm: compact, escaped as it escapes), which is valid JSON
// that encoding/json keeps as it is in a json.RawMessage; false otherwise.
func (r *Reader) Raw() ([]byte, bool) {
	d := &r.d
	r.Peek()
	start := d.pos
	end, ok := wireValue(d.in, start, 0)
	if !ok {
		return nil, false
	}
	d.pos = end
	return d.in[start:end], true
}
