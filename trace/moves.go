package trace

import "crypto/sha256"

// Move is an entry the implementation has elsewhere than the reference: Want is its index
// in the reference's entries, Got in the implementation's (0-based).
type Move struct {
	Want, Got int
	// There is where the reference has it, in the implementation's entries: the index after
	// the entry aligned with the reference's entry before it. Later says Got >= There.
	There int
	Later bool
}

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
	if len(extra) == 0 {
		return nil
	}
	// there[w]: the index after the implementation's entry aligned with the last of the
	// reference's entries before w that has one (0 when none has).
	there := make([]int, len(c.Want)+1)
	for _, s := range c.Steps {
		if s.Op == Same {
			there[s.Want+1] = s.Got + 1
		}
	}
	for w := 1; w < len(there); w++ {
		there[w] = max(there[w], there[w-1])
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
		m := Move{Want: s.Want, Got: extra[k][0], There: there[s.Want]}
		m.Later = m.Got >= m.There
		out = append(out, m)
		extra[k] = extra[k][1:]
	}
	return out
}
