package sim

import (
	"encoding/json"
	"strconv"
	"strings"
)

// lineSize is the length of e's line in Trace.JSONL, newline included, computed without
// encoding it: the world records canonical payloads, which the line holds as they are
// (canonical JSON escapes <, >, &, U+2028 and U+2029 already, as json.Marshal would).
func lineSize(e *Entry) int64 {
	n := len(`{"seq":,"t":,"kind":,"name":}`) + 1
	n += decimalLen(int64(e.Seq)) + decimalLen(e.T)
	n += stringSize(e.Kind) + stringSize(e.Name)
	if e.Target != "" {
		n += len(`,"target":`) + stringSize(e.Target)
	}
	if len(e.Data) > 0 {
		n += len(`,"data":`) + len(e.Data)
	}
	if e.Link != nil {
		n += len(`,"link":`) + linkSize(e.Link)
	}
	if len(e.Answer) > 0 {
		n += len(`,"answer":`) + len(e.Answer)
	}
	if e.Error != "" {
		n += len(`,"error":`) + stringSize(e.Error)
	}
	return int64(n)
}

// decimalLen is len(strconv.FormatInt(v, 10)), without writing it.
func decimalLen(v int64) int {
	n := 1
	u := uint64(v)
	if v < 0 {
		n, u = 2, uint64(-v) // -MinInt64 wraps to itself, which as unsigned is its magnitude
	}
	for ; u >= 10; u /= 10 {
		n++
	}
	return n
}

// linkSize is the length of appendLink's JSON of l, without writing it.
func linkSize(l *Link) int {
	n, members := 2, 0
	member := func(key string, v int) {
		if v != 0 {
			n += len(key) + 3 + decimalLen(int64(v))
			members++
		}
	}
	member("advances", l.Advances)
	member("answerExtends", l.AnswerExtends)
	member("answerKeep", l.AnswerKeep)
	member("extends", l.Extends)
	member("keep", l.Keep)
	member("newExtends", l.NewExtends)
	member("newKeep", l.NewKeep)
	member("repeats", l.Repeats)
	if members > 1 {
		n += members - 1
	}
	return n
}

// stringSize is the length of s as a JSON string, quotes included.
func stringSize(s string) int {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			b, _ := json.Marshal(s)
			return len(b)
		}
	}
	return len(s) + 2
}

// thousands writes n with comma separators: 1,000.
func thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := false
	if n < 0 {
		neg, s = true, s[1:]
	}
	out := make([]byte, 0, len(s)+len(s)/3+1)
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, s[i])
	}
	if neg {
		return "-" + string(out)
	}
	return string(out)
}

// pluralS is noun, in the plural unless n is 1 ("entry" becomes "entries").
func pluralS(n int, noun string) string {
	switch {
	case n == 1:
		return noun
	case strings.HasSuffix(noun, "y"):
		return strings.TrimSuffix(noun, "y") + "ies"
	}
	return noun + "s"
}
