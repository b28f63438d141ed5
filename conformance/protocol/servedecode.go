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
		seen jsonvalue.Seen
	)
	r.Reset(line)
	ok = r.Object(func(key []byte) bool {
		var ok bool
		switch string(key) {
		case "type":
			m.Type, ok = r.String()
			return ok && seen.First(1) && (m.Type == TypeAnswer || m.Type == TypeDeliver)
		case "id":
			m.ID, ok = r.Int64()
			return ok && seen.First(2)
		case "session":
			var n int64
			n, ok = r.Int64()
			m.Session = int(n)
			return ok && int64(m.Session) == n && seen.First(4)
		case "data":
			m.Data, ok = r.Raw()
			return ok && seen.First(8)
		case "error":
			m.Error, ok = r.String()
			return ok && seen.First(16)
		case "abort":
			m.Abort, ok = r.Bool()
			return ok && seen.First(32)
		case "wait":
			m.Wait, ok = r.String()
			return ok && seen.First(64)
		case "untilAbort":
			m.UntilAbort, ok = r.Bool()
			return ok && seen.First(128)
		case "delivery":
			m.Delivery, ok = readDelivery(&r)
			return ok && seen.First(256)
		}
		return false
	})
	return m, ok && seen&1 != 0 && r.Done()
}

// readDelivery reads a delivery object as encoding/json decodes it into a *sim.Delivery.
func readDelivery(r *jsonvalue.Reader) (*sim.Delivery, bool) {
	d := &sim.Delivery{}
	var seen jsonvalue.Seen
	ok := r.Object(func(key []byte) bool {
		var ok bool
		switch string(key) {
		case "kind":
			d.Kind, ok = r.String()
			return ok && seen.First(1)
		case "now":
			d.Now, ok = r.Int64()
			return ok && seen.First(2)
		case "target":
			d.Target, ok = r.String()
			return ok && seen.First(4)
		case "data":
			d.Data, ok = r.Raw()
			return ok && seen.First(8)
		}
		return false
	})
	return d, ok
}
