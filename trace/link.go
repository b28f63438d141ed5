package trace

import "strconv"

// Link says what an entry of the linear form leaves out and where it is found; nil when the
// entry is written in full. Its members are the seq numbers of earlier entries.
type Link struct {
	// Advances: a streamEvent delivery's partial is the partial of this delivery advanced by
	// the event.
	Advances int `json:"advances,omitempty"`
	// AnswerExtends and AnswerKeep: a context hook's answer messages are the first
	// AnswerKeep messages of this earlier call's answer, followed by those written (see
	// contexts.go; the members are in the order of their names, so the line stays canonical).
	AnswerExtends int `json:"answerExtends,omitempty"`
	AnswerKeep    int `json:"answerKeep,omitempty"`
	// Extends and Keep: a stream call's (or a context hook's) context messages are the first
	// Keep messages of this earlier call's, followed by those written; agent_end's and the
	// run end's messages are the first Keep of this earlier stream call's context, followed
	// by those written.
	Extends int `json:"extends,omitempty"`
	Keep    int `json:"keep,omitempty"`
	// NewExtends and NewKeep: a prepareNextTurn or finishTurn call's turn.newMessages are the
	// first NewKeep of this earlier call's, followed by those written.
	NewExtends int `json:"newExtends,omitempty"`
	NewKeep    int `json:"newKeep,omitempty"`
	// Repeats: a message_update event's assistantMessageEvent.partial and message are the
	// partial of this entry (and, when it leaves out assistantMessageEvent too, that is this
	// entry's data, the stream event delivered); a message_start, message_end or turn_end
	// event's data.message is the message of this entry: its data.message, or a streamEvent
	// delivery's data.partial (the last delivery that carried a partial, for a message_start;
	// the last message_start, for a message_end; the last message_end of an assistant
	// message, for a turn_end).
	Repeats int `json:"repeats,omitempty"`
}

// appendLink writes a link as json.Marshal writes it.
func appendLink(b []byte, l *Link) []byte {
	b = append(b, '{')
	first := true
	member := func(key string, v int) {
		if v == 0 {
			return
		}
		if !first {
			b = append(b, ',')
		}
		first = false
		b = append(b, '"')
		b = append(b, key...)
		b = append(b, '"', ':')
		b = strconv.AppendInt(b, int64(v), 10)
	}
	member("advances", l.Advances)
	member("answerExtends", l.AnswerExtends)
	member("answerKeep", l.AnswerKeep)
	member("extends", l.Extends)
	member("keep", l.Keep)
	member("newExtends", l.NewExtends)
	member("newKeep", l.NewKeep)
	member("repeats", l.Repeats)
	return append(b, '}')
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

// The blocks a text_start and a thinking_start event append to a partial message, as
// canonical JSON (advancing a partial, see Link).
var (
	EmptyTextBlock     = []byte(`{"text":"","type":"text"}`)
	EmptyThinkingBlock = []byte(`{"thinking":"","type":"thinking"}`)
)
