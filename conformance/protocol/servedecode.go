package protocol

import (
	"github.com/turnstile-dev/turnstile/jsonvalue"
	"github.com/turnstile-dev/turnstile/sim"
)

// readHarnessLine reads the harness's answers and deliveries by hand, as encoding/json
// decodes them into a Message: the lines a served session reads most. ok is false when the
// line is left to encoding/json (another type, a key it does not read here or met twice, a
// value of another kind, data not in json.Marshal's form). The data point into line.
// TestServedReadingIsEncodingJSON holds the two to the same messages.
func readHarnessLine(line []byte) (m Message, ok bool) {
	var (
		r    jsonvalue.Reader
		seen uint16
	)
	r.Reset(line)
	once := func(bit uint16) bool {
		if seen&bit != 0 {
			return false
		}
		seen |= bit
		return true
	}
	ok = r.Object(func(key []byte) bool {
		var ok bool
		switch string(key) {
		case "type":
			m.Type, ok = r.String()
			return ok && once(1) && (m.Type == TypeAnswer || m.Type == TypeDeliver)
		case "id":
			m.ID, ok = r.Int64()
			return ok && once(2)
		case "session":
			var n int64
			n, ok = r.Int64()
			m.Session = int(n)
			return ok && int64(m.Session) == n && once(4)
		case "data":
			m.Data, ok = r.Raw()
			return ok && once(8)
		case "error":
			m.Error, ok = r.String()
			return ok && once(16)
		case "abort":
			m.Abort, ok = r.Bool()
			return ok && once(32)
		case "wait":
			m.Wait, ok = r.String()
			return ok && once(64)
		case "untilAbort":
			m.UntilAbort, ok = r.Bool()
			return ok && once(128)
		case "delivery":
			m.Delivery, ok = readDelivery(&r)
			return ok && once(256)
		}
		return false
	})
	return m, ok && seen&1 != 0 && r.Done()
}

// readDelivery reads a delivery object as encoding/json decodes it into a *sim.Delivery.
func readDelivery(r *jsonvalue.Reader) (*sim.Delivery, bool) {
	d := &sim.Delivery{}
	var seen uint8
	once := func(bit uint8) bool {
		if seen&bit != 0 {
			return false
		}
		seen |= bit
		return true
	}
	ok := r.Object(func(key []byte) bool {
		var ok bool
		switch string(key) {
		case "kind":
			d.Kind, ok = r.String()
			return ok && once(1)
		case "now":
			d.Now, ok = r.Int64()
			return ok && once(2)
		case "target":
			d.Target, ok = r.String()
			return ok && once(4)
		case "data":
			d.Data, ok = r.Raw()
			return ok && once(8)
		}
		return false
	})
	return d, ok
}
