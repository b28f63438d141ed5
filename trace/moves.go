package trace

import "crypto/sha256"

// Move is an entry the implementation has elsewhere than the reference: Want is its index
// in the reference's entries, Got in the implementation's (0-based).
type Move struct{ Want, Got int }

// Moves pairs each entry the implementation lacks (Missing) with an entry it has in addition
// (Extra) that reads the same but for its time — the same kind, name, target and payload:
// one entry moved, not one lost and one added. Pairs are taken in order, the first of each.
func (c *Comparison) Moves() []Move {
	// An entry but for its time; its payload hashed, so that a long run's thousand contexts
	// are not decoded to be compared.
	key := func(e *Entry) string {
		h := sha256.New()
		for _, part := range [][]byte{e.Data, e.Answer, []byte(e.Error)} {
			h.Write(part)
			h.Write([]byte{0})
		}
		return e.Kind + "\x00" + e.Name + "\x00" + e.Target + "\x00" + string(h.Sum(nil))
	}
	extra := map[string][]int{}
	for _, s := range c.Steps {
		if s.Op == Extra {
			k := key(&c.Got[s.Got])
			extra[k] = append(extra[k], s.Got)
		}
	}
	var out []Move
	for _, s := range c.Steps {
		if s.Op != Missing {
			continue
		}
		k := key(&c.Want[s.Want])
		if len(extra[k]) == 0 {
			continue
		}
		out = append(out, Move{Want: s.Want, Got: extra[k][0]})
		extra[k] = extra[k][1:]
	}
	return out
}
