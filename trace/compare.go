package trace

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/sergi/go-diff/diffmatchpatch"
	"github.com/turnstile-dev/turnstile/jsonvalue"
)

// Profile says how strictly two traces must agree.
type Profile string

// The comparison profiles.
const (
	// Strict requires every entry's value to be the reference's: every member, numbers by
	// their text.
	Strict Profile = "strict"
	// Semantic requires the same entries in the same order, with the same kinds, names,
	// targets, virtual times, ids, flags and payloads, but compares free text by rule (see
	// SemanticRules) and numbers by value.
	Semantic Profile = "semantic"
)

// ParseProfile reads a profile name.
func ParseProfile(s string) (Profile, error) {
	switch Profile(s) {
	case Strict, Semantic:
		return Profile(s), nil
	}
	return "", fmt.Errorf("unknown comparison profile %q (want strict or semantic)", s)
}

// SemanticRules documents how the semantic profile compares free text. Each rule rewrites
// every JSON string of an entry (its data, its answer and its error) before comparison.
var SemanticRules = []string{
	`a text starting with "Validation failed for tool \"" is compared up to its first newline: the tool name must agree; the validator's messages and its echo of the arguments are free`,
}

// Op is one step of an alignment.
type Op int

// The steps of an alignment.
const (
	// Same: the two entries are of the same kind, name and role (Key); their values may
	// still differ (Step.Fields).
	Same Op = iota
	// Missing: the reference's entry has no counterpart in the implementation's trace.
	Missing
	// Extra: the implementation's entry has no counterpart in the reference's trace.
	Extra
)

// Step is one step of an alignment: indexes (0-based) into the reference's entries (Want)
// and the implementation's (Got), -1 on the side that has none; for a Same step, every
// place where the two entries' values differ.
type Step struct {
	Op        Op
	Want, Got int
	Fields    []Field
}

// Differs reports whether the step is a difference: an entry missing or extra, or a pair
// whose values differ.
func (s Step) Differs() bool { return s.Op != Same || len(s.Fields) > 0 }

// Shape is how a field differs.
type Shape string

// The shapes of a field difference.
const (
	// Absent: the implementation's entry lacks the member the reference's has.
	Absent Shape = "absent"
	// Unexpected: the implementation's entry has a member the reference's does not.
	Unexpected Shape = "unexpected"
	// OtherType: the values are of different JSON types.
	OtherType Shape = "type"
	// Order: a list holds the reference's items, two or more of them elsewhere.
	Order Shape = "order"
	// Length: two lists of different lengths.
	Length Shape = "length"
	// Value: two values of one type that differ.
	Value Shape = "differs"
)

// Field is one place where two entries' values differ: its JSON path inside the entry
// ("data.message.usage.input"; "" for the whole entry), how, and both values (decoded
// JSON; nil on the side where the member is absent).
type Field struct {
	Path      string
	Shape     Shape
	Want, Got any
}

// Comparison is two traces aligned entry by entry, with every difference between them: the
// one comparison behind a verdict and its diagnosis, so that the two cannot disagree.
type Comparison struct {
	Profile Profile
	// Want and Got are the reference's and the implementation's entries in full (links
	// expanded).
	Want, Got []Entry
	Steps     []Step
}

// maxFields bounds the differences collected for one pair of entries.
const maxFields = 80

// Compare aligns two traces and finds every difference between them under profile: the
// longest common subsequence of their entries' keys (Key), computed in linear space, then
// each aligned pair compared member by member. Links are expanded first; an entry whose link
// does not resolve is compared as written.
func Compare(want, got *Trace, profile Profile) *Comparison {
	g := got.Expanded().Entries
	return compare(want.Expanded().Entries, g, profile, newMemo(g, profile))
}

// compare is Compare of expanded entries, got's memo remembering what it decodes.
func compare(want, got []Entry, profile Profile, memo *Memo) *Comparison {
	c := &Comparison{Profile: profile, Want: want, Got: got}
	// The entries both traces write alike, at their start and at their end, align as they are.
	pre := 0
	for pre < len(c.Want) && pre < len(c.Got) && writtenAlike(&c.Want[pre], &c.Got[pre]) {
		pre++
	}
	suf := 0
	for suf < len(c.Want)-pre && suf < len(c.Got)-pre && writtenAlike(&c.Want[len(c.Want)-1-suf], &c.Got[len(c.Got)-1-suf]) {
		suf++
	}
	c.Steps = make([]Step, 0, max(len(c.Want), len(c.Got)))
	for i := range pre {
		c.Steps = append(c.Steps, Step{Op: Same, Want: i, Got: i})
	}
	for _, s := range Align(keys(c.Want[pre:len(c.Want)-suf]), keys(c.Got[pre:len(c.Got)-suf])) {
		if s.Want >= 0 {
			s.Want += pre
		}
		if s.Got >= 0 {
			s.Got += pre
		}
		if s.Op == Same {
			s.Fields = memo.entryFields(&c.Want[s.Want], s.Got)
		}
		c.Steps = append(c.Steps, s)
	}
	for i := suf; i > 0; i-- {
		c.Steps = append(c.Steps, Step{Op: Same, Want: len(c.Want) - i, Got: len(c.Got) - i})
	}
	return c
}

// Equal reports whether the two traces agree under the comparison's profile.
func (c *Comparison) Equal() bool { return c.First() < 0 }

// First is the index in Steps of the first difference, -1 when there is none.
func (c *Comparison) First() int {
	return slices.IndexFunc(c.Steps, Step.Differs)
}

// Align aligns two sequences of keys: a longest common subsequence (Myers' algorithm in
// linear space, unbounded, so a long trace with many small differences aligns entry by
// entry). Matched items come as Same steps, in order; the others as Missing (want only) and
// Extra (got only), a region's Missing steps before its Extra ones.
func Align(want, got []string) []Step {
	// Each distinct key is one rune, so that diffmatchpatch aligns keys, not characters.
	code := map[string]rune{}
	runes := func(ks []string) []rune {
		out := make([]rune, len(ks))
		for i, k := range ks {
			r, ok := code[k]
			if !ok {
				r = rune(len(code) + 0x100)
				if r >= 0xD800 {
					r += 0x800 // not a surrogate
				}
				code[k] = r
			}
			out[i] = r
		}
		return out
	}
	dmp := diffmatchpatch.New()
	dmp.DiffTimeout = 0 // no deadline: the same alignment on every machine
	diffs := dmp.DiffMainRunes(runes(want), runes(got), false)
	steps := make([]Step, 0, max(len(want), len(got)))
	i, j := 0, 0
	var missing, extra []Step // a region's, until the next equal run
	flush := func() {
		steps = append(append(steps, missing...), extra...)
		missing, extra = missing[:0], extra[:0]
	}
	for _, d := range diffs {
		n := utf8.RuneCountInString(d.Text)
		switch d.Type {
		case diffmatchpatch.DiffEqual:
			flush()
			for range n {
				steps = append(steps, Step{Op: Same, Want: i, Got: j})
				i, j = i+1, j+1
			}
		case diffmatchpatch.DiffDelete:
			for range n {
				missing = append(missing, Step{Op: Missing, Want: i, Got: -1})
				i++
			}
		case diffmatchpatch.DiffInsert:
			for range n {
				extra = append(extra, Step{Op: Extra, Want: -1, Got: j})
				j++
			}
		}
	}
	flush()
	return steps
}

func keys(es []Entry) []string {
	out := make([]string, len(es))
	for i := range es {
		out[i] = Key(es[i])
	}
	return out
}

// Key is what an entry is, without the scenario's values: its kind and name, and for a
// message event the message's role ("event message_end assistant", "call stream", "deliver
// streamEvent").
func Key(e Entry) string {
	k := e.Kind
	if e.Name != "" {
		k += " " + e.Name
	}
	if e.Kind == KindEvent && (e.Name == "message_start" || e.Name == "message_update" || e.Name == "message_end") {
		if role := messageRole(e.Data); role != "" {
			k += " " + role
		}
	}
	return k
}

// messageRole is data.message.role of an event's data, "" when it has none.
func messageRole(data []byte) string {
	if start, end, ok := jsonvalue.MemberValue(data, "message"); ok {
		if role, ok := jsonvalue.PlainString(data[start:end], "role"); ok {
			return role
		}
	}
	var d struct {
		Message struct {
			Role string `json:"role"`
		} `json:"message"`
	}
	if json.Unmarshal(data, &d) != nil {
		return ""
	}
	return d.Message.Role
}

// writtenAlike reports whether two entries are the same but for their sequence numbers.
func writtenAlike(w, g *Entry) bool {
	return w.T == g.T && w.Kind == g.Kind && w.Name == g.Name && w.Target == g.Target && w.Error == g.Error &&
		bytes.Equal(w.Data, g.Data) && bytes.Equal(w.Answer, g.Answer) &&
		(w.Link == g.Link || w.Link != nil && g.Link != nil && *w.Link == *g.Link)
}

// EntryValue is an entry as a profile compares it: its JSON line decoded (numbers as their
// text under Strict, by value under Semantic, whose free texts SemanticRules rewrites),
// without its sequence number (positions are aligned instead).
func EntryValue(e Entry, profile Profile) any { return lineValue(entryLine(&e), profile) }

// lineValue is EntryValue of an entry's JSON line.
func lineValue(line []byte, profile Profile) any {
	dec := json.NewDecoder(bytes.NewReader(line))
	if profile != Semantic {
		dec.UseNumber()
	}
	var v any
	if dec.Decode(&v) != nil {
		return string(line)
	}
	if m, ok := v.(map[string]any); ok {
		delete(m, "seq")
	}
	if profile == Semantic {
		v = normalizeStrings(v)
	}
	return v
}

func normalizeStrings(v any) any {
	switch x := v.(type) {
	case string:
		return normalizeText(x)
	case []any:
		for i := range x {
			x[i] = normalizeStrings(x[i])
		}
	case map[string]any:
		for k := range x {
			x[k] = normalizeStrings(x[k])
		}
	}
	return v
}

// normalizeText applies SemanticRules to one string.
func normalizeText(s string) string {
	const validation = `Validation failed for tool "`
	if strings.HasPrefix(s, validation) {
		if i := strings.IndexByte(s, '\n'); i >= 0 {
			return s[:i]
		}
	}
	return s
}

// Fields is every place where two decoded JSON values differ (up to a bound), objects member
// by member in the order of CompareMembers, lists item by item; a list of another length, or
// holding the reference's items in another order, is one difference. equal decides leaves and
// whole subtrees; nil means reflect.DeepEqual.
func Fields(want, got any, equal func(a, b any) bool) []Field {
	if equal == nil {
		equal = reflect.DeepEqual
	}
	var out []Field
	walk(want, got, "", equal, &out)
	return out
}

func walk(w, g any, path string, equal func(a, b any) bool, out *[]Field) {
	if len(*out) >= maxFields || equal(w, g) {
		return
	}
	sub := func(k string) string {
		if path == "" {
			return k
		}
		return path + "." + k
	}
	wm, wok := w.(map[string]any)
	gm, gok := g.(map[string]any)
	if wok && gok {
		before := len(*out)
		ks := make([]string, 0, len(wm)+len(gm))
		for k := range wm {
			ks = append(ks, k)
		}
		for k := range gm {
			if _, ok := wm[k]; !ok {
				ks = append(ks, k)
			}
		}
		slices.SortFunc(ks, CompareMembers)
		for i, k := range ks {
			if identityRank(k) == len(identityMembers) && (i == 0 || identityRank(ks[i-1]) < len(identityMembers)) && len(*out) > before {
				// Past the identity members, one of which differs: two objects that differ in
				// one are two things (a result for another call), and the rest of them
				// differs for that reason.
				return
			}
			wv, win := wm[k]
			gv, gin := gm[k]
			switch {
			case win && !gin:
				*out = append(*out, Field{Path: sub(k), Shape: Absent, Want: wv})
			case !win && gin:
				*out = append(*out, Field{Path: sub(k), Shape: Unexpected, Got: gv})
			default:
				walk(wv, gv, sub(k), equal, out)
			}
		}
		return
	}
	wa, wok := w.([]any)
	ga, gok := g.([]any)
	if wok && gok {
		if len(wa) != len(ga) {
			*out = append(*out, Field{Path: path, Shape: Length, Want: w, Got: g})
			return
		}
		if Reordered(wa, ga) {
			*out = append(*out, Field{Path: path, Shape: Order, Want: w, Got: g})
			return
		}
		for i := range wa {
			walk(wa[i], ga[i], fmt.Sprintf("%s[%d]", path, i), equal, out)
		}
		return
	}
	shape := Value
	if JSONType(w) != JSONType(g) {
		shape = OtherType
	}
	*out = append(*out, Field{Path: path, Shape: shape, Want: w, Got: g})
}

// Reordered reports whether got holds exactly want's items, two or more of them elsewhere
// (items compared by their JSON).
func Reordered(want, got []any) bool {
	if len(want) < 2 || len(want) != len(got) {
		return false
	}
	// Items equal in place write the same JSON and are in both lists alike: only the others
	// are written out, the lists' items being equal as multisets when those are.
	var ws, gs []any
	for i := range want {
		if !reflect.DeepEqual(want[i], got[i]) {
			ws, gs = append(ws, want[i]), append(gs, got[i])
		}
	}
	if len(ws) < 2 {
		return false
	}
	w, g := ItemKeys(ws), ItemKeys(gs)
	moved := 0
	for i := range w {
		if w[i] != g[i] {
			moved++
		}
	}
	if moved < 2 {
		return false
	}
	slices.Sort(w)
	slices.Sort(g)
	return slices.Equal(w, g)
}

// ItemKeys is each item's JSON, as json.Marshal writes it ("" for an item it cannot write).
func ItemKeys(items []any) []string {
	out := make([]string, len(items))
	var b []byte
	for i, v := range items {
		var ok bool
		if b, ok = jsonvalue.AppendMarshal(b[:0], v); ok {
			out[i] = string(b)
		}
	}
	return out
}

// JSONType names the JSON type of a decoded value ("a string", "null", …).
func JSONType(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case string:
		return "a string"
	case json.Number, float64:
		return "a number"
	case []any:
		return "a list"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}

// identityMembers are the members that say which thing an object is, rather than what it
// holds: when two objects differ in one of them (a tool result for another call, a message
// of another role), that is the difference to show first.
var identityMembers = []string{"role", "type", "toolCallId", "id", "toolName", "name"}

// IdentityMembers are the members that name an object rather than describe it, in the order
// CompareMembers puts them first.
func IdentityMembers() []string { return slices.Clone(identityMembers) }

// CompareMembers orders the members of an object as differences are looked for and shown:
// identity members first (role, type, toolCallId, id, toolName, name), then by key.
func CompareMembers(a, b string) int {
	if ia, ib := identityRank(a), identityRank(b); ia != ib {
		return ia - ib
	}
	return strings.Compare(a, b)
}

// identityRank orders identity members before the others (which all rank alike).
func identityRank(k string) int {
	if i := slices.Index(identityMembers, k); i >= 0 {
		return i
	}
	return len(identityMembers)
}
