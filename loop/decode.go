package loop

import (
	"github.com/turnstile-dev/turnstile/jsonvalue"
)

// Decoding messages by hand: what DecodeMessage gives through encoding/json, several times
// cheaper (the simulator decodes the setup's messages and every hook's answer). Only text that
// decodes exactly as encoding/json would is read so: an unknown or repeated key, a null, a
// value of another kind, an escaped key or a custom role makes the reader give up, and
// encoding/json decodes the text (or gives its error).

// message keys, one bit each: a key met twice, or where its message or block has no such
// field, is left to encoding/json.
const (
	kRole = 1 << iota
	kContent
	kTimestamp
	kToolsAdded
	kToolsRemoved
	kAPI
	kProvider
	kModel
	kResponseModel
	kResponseID
	kProviderThinkingLevel
	kThinkingLevel
	kUsage
	kStopReason
	kErrorMessage
	kRawStopReason
	kEndTurn
	kDurationMs
	kToolCallID
	kToolName
	kDetails
	kIsError
)

// The keys each role's message may hold.
const (
	systemKeys     = kRole | kContent | kTimestamp | kToolsAdded | kToolsRemoved
	userKeys       = kRole | kContent | kTimestamp
	assistantKeys  = kRole | kContent | kTimestamp | kAPI | kProvider | kModel | kResponseModel | kResponseID | kProviderThinkingLevel | kThinkingLevel | kUsage | kStopReason | kErrorMessage | kRawStopReason | kEndTurn | kDurationMs
	toolResultKeys = kRole | kContent | kTimestamp | kToolCallID | kToolName | kDetails | kUsage | kIsError | kDurationMs
)

// messageFields is every field a message of the four roles may carry, read before the role
// is known (canonical JSON writes "role" after "content").
type messageFields struct {
	seen                 jsonvalue.Seen
	role                 string
	text                 string
	blocks               []Block
	textContent          bool // content was a string
	timestamp            int64
	toolsAdded           []ToolDeclaration
	toolsRemoved         []ToolReference
	assistant            AssistantMessage // its fields but Content, Timestamp and Usage's pointer
	usage                Usage
	toolCallID, toolName string
	details              any
	isError              bool
}

// decodeMessageFast is DecodeMessage by hand; ok is false when the text is left to
// encoding/json.
func decodeMessageFast(data []byte) (Message, bool) {
	var r jsonvalue.Reader
	r.Reset(data)
	m, ok := ReadMessage(&r)
	return m, ok && r.Done()
}

// ReadMessage reads the message at r's position as DecodeMessage decodes its text, by hand;
// ok is false when the text is to be left to encoding/json (r is then not to be read on).
func ReadMessage(r *jsonvalue.Reader) (m Message, ok bool) {
	var f messageFields
	if !r.Object(func(key []byte) bool { return f.member(r, key) }) {
		return nil, false
	}
	switch f.role {
	case "system":
		if f.seen&^systemKeys != 0 {
			return nil, false
		}
		return &SystemMessage{Text: f.text, Blocks: f.blocks, ToolsAdded: f.toolsAdded, ToolsRemoved: f.toolsRemoved, Timestamp: f.timestamp}, true
	case "user":
		if f.seen&^userKeys != 0 {
			return nil, false
		}
		return &UserMessage{Text: f.text, Blocks: f.blocks, Timestamp: f.timestamp}, true
	case "assistant":
		if f.seen&^assistantKeys != 0 || f.textContent {
			return nil, false
		}
		m := f.assistant
		m.Content, m.Timestamp, m.Usage = f.blocks, f.timestamp, f.usage
		return &m, true
	case "toolResult":
		if f.seen&^toolResultKeys != 0 || f.textContent {
			return nil, false
		}
		m := &ToolResultMessage{ToolCallID: f.toolCallID, ToolName: f.toolName, Content: f.blocks, Details: f.details,
			IsError: f.isError, DurationMs: f.assistant.DurationMs, Timestamp: f.timestamp}
		if f.seen&kUsage != 0 {
			u := f.usage
			m.Usage = &u
		}
		return m, true
	}
	return nil, false // a custom role, or none
}

// member reads the value of one key of a message.
func (f *messageFields) member(r *jsonvalue.Reader, key []byte) bool {
	var (
		bit  jsonvalue.Seen
		read bool
	)
	switch string(key) {
	case "role":
		bit = kRole
		f.role, read = r.String()
	case "content":
		bit = kContent
		if r.Peek() == '"' {
			f.textContent = true
			f.text, read = r.String()
		} else {
			f.blocks, read = readBlocks(r)
		}
	case "timestamp":
		bit = kTimestamp
		f.timestamp, read = r.Int64()
	case "toolsAdded":
		bit = kToolsAdded
		read = r.Array(func() bool {
			d, ok := readDeclaration(r)
			f.toolsAdded = append(f.toolsAdded, d)
			return ok
		})
		if read && f.toolsAdded == nil {
			f.toolsAdded = []ToolDeclaration{}
		}
	case "toolsRemoved":
		bit = kToolsRemoved
		read = r.Array(func() bool {
			var ref ToolReference
			ok := r.Object(func(key []byte) bool {
				if string(key) != "name" || ref.Name != "" {
					return false
				}
				var ok bool
				ref.Name, ok = r.String()
				return ok && ref.Name != ""
			})
			f.toolsRemoved = append(f.toolsRemoved, ref)
			return ok
		})
		if read && f.toolsRemoved == nil {
			f.toolsRemoved = []ToolReference{}
		}
	case "api":
		bit = kAPI
		f.assistant.API, read = r.String()
	case "provider":
		bit = kProvider
		f.assistant.Provider, read = r.String()
	case "model":
		bit = kModel
		f.assistant.Model, read = r.String()
	case "responseModel":
		bit = kResponseModel
		f.assistant.ResponseModel, read = r.String()
	case "responseId":
		bit = kResponseID
		f.assistant.ResponseID, read = r.String()
	case "providerThinkingLevel":
		bit = kProviderThinkingLevel
		f.assistant.ProviderThinkingLevel, read = r.String()
	case "thinkingLevel":
		bit = kThinkingLevel
		f.assistant.ThinkingLevel, read = r.String()
	case "usage":
		bit = kUsage
		read = readUsage(r, &f.usage)
	case "stopReason":
		bit = kStopReason
		var s string
		s, read = r.String()
		f.assistant.StopReason = StopReason(s)
	case "errorMessage":
		bit = kErrorMessage
		f.assistant.ErrorMessage, read = r.String()
	case "rawStopReason":
		bit = kRawStopReason
		f.assistant.RawStopReason, read = r.String()
	case "endTurn":
		bit = kEndTurn
		var v bool
		v, read = r.Bool()
		f.assistant.EndTurn = &v
	case "durationMs":
		bit = kDurationMs
		var n int64
		n, read = r.Int64()
		f.assistant.DurationMs = &n
	case "toolCallId":
		bit = kToolCallID
		f.toolCallID, read = r.String()
	case "toolName":
		bit = kToolName
		f.toolName, read = r.String()
	case "details":
		bit = kDetails
		f.details, read = r.Value()
	case "isError":
		bit = kIsError
		f.isError, read = r.Bool()
	}
	return read && f.seen.First(bit)
}

// usage keys, one bit each.
const (
	uInput = 1 << iota
	uOutput
	uCacheRead
	uCacheWrite
	uCacheWrite1h
	uReasoning
	uTotalTokens
	uCost
	uTotal
	uTotalFromProvider
)

// readUsage reads a Usage object into u.
func readUsage(r *jsonvalue.Reader, u *Usage) bool {
	var seen jsonvalue.Seen
	return r.Object(func(key []byte) bool {
		var (
			bit  jsonvalue.Seen
			read bool
		)
		switch string(key) {
		case "input":
			bit = uInput
			u.Input, read = r.Int64()
		case "output":
			bit = uOutput
			u.Output, read = r.Int64()
		case "cacheRead":
			bit = uCacheRead
			u.CacheRead, read = r.Int64()
		case "cacheWrite":
			bit = uCacheWrite
			u.CacheWrite, read = r.Int64()
		case "cacheWrite1h":
			bit = uCacheWrite1h
			var n int64
			n, read = r.Int64()
			u.CacheWrite1h = &n
		case "reasoning":
			bit = uReasoning
			var n int64
			n, read = r.Int64()
			u.Reasoning = &n
		case "totalTokens":
			bit = uTotalTokens
			u.TotalTokens, read = r.Int64()
		case "cost":
			bit = uCost
			read = readCost(r, &u.Cost)
		}
		return read && seen.First(bit)
	})
}

// readCost reads a Cost object into c.
func readCost(r *jsonvalue.Reader, c *Cost) bool {
	var seen jsonvalue.Seen
	return r.Object(func(key []byte) bool {
		var (
			bit  jsonvalue.Seen
			read bool
		)
		switch string(key) {
		case "input":
			bit = uInput
			c.Input, read = r.Float64()
		case "output":
			bit = uOutput
			c.Output, read = r.Float64()
		case "cacheRead":
			bit = uCacheRead
			c.CacheRead, read = r.Float64()
		case "cacheWrite":
			bit = uCacheWrite
			c.CacheWrite, read = r.Float64()
		case "total":
			bit = uTotal
			c.Total, read = r.Float64()
		case "totalFromProvider":
			bit = uTotalFromProvider
			c.TotalFromProvider, read = r.Bool()
		}
		return read && seen.First(bit)
	})
}

// readDeclaration reads a ToolDeclaration.
func readDeclaration(r *jsonvalue.Reader) (ToolDeclaration, bool) {
	var d ToolDeclaration
	var seen jsonvalue.Seen
	ok := r.Object(func(key []byte) bool {
		var (
			bit  jsonvalue.Seen
			read bool
		)
		switch string(key) {
		case "name":
			bit = 1
			d.Name, read = r.String()
		case "description":
			bit = 2
			d.Description, read = r.String()
		case "parameters":
			bit = 4
			var v any
			if v, read = r.Value(); read {
				d.Parameters, read = v.(map[string]any)
			}
		case "constrainedSampling":
			bit = 8
			d.ConstrainedSampling, read = r.Value()
		}
		return read && seen.First(bit)
	})
	return d, ok
}

// block keys, one bit each.
const (
	bType = 1 << iota
	bText
	bTextSignature
	bThinking
	bThinkingSignature
	bRedacted
	bData
	bMimeType
	bID
	bName
	bArguments
	bThoughtSignature
	bNamespace
	bArgumentsError
)

// The keys each type of block may hold.
var blockKeys = map[string]jsonvalue.Seen{
	"text":     bType | bText | bTextSignature,
	"thinking": bType | bThinking | bThinkingSignature | bRedacted,
	"image":    bType | bData | bMimeType,
	"toolCall": bType | bID | bName | bArguments | bThoughtSignature | bNamespace | bArgumentsError,
}

// readBlocks reads a list of content blocks, as DecodeBlocks decodes it: [] is empty, not nil.
func readBlocks(r *jsonvalue.Reader) ([]Block, bool) {
	out := []Block{}
	ok := r.Array(func() bool {
		b, ok := readBlock(r)
		out = append(out, b)
		return ok
	})
	return out, ok
}

// readBlock reads one content block, as DecodeBlock decodes it.
func readBlock(r *jsonvalue.Reader) (Block, bool) {
	var (
		typ, text, sig, data, mime string
		redacted                   bool
		call                       ToolCall
		seen                       jsonvalue.Seen
	)
	ok := r.Object(func(key []byte) bool {
		var (
			bit  jsonvalue.Seen
			read bool
		)
		switch string(key) {
		case "type":
			bit = bType
			typ, read = r.String()
		case "text":
			bit = bText
			text, read = r.String()
		case "textSignature":
			bit = bTextSignature
			sig, read = r.String()
		case "thinking":
			bit = bThinking
			text, read = r.String()
		case "thinkingSignature":
			bit = bThinkingSignature
			sig, read = r.String()
		case "redacted":
			bit = bRedacted
			redacted, read = r.Bool()
		case "data":
			bit = bData
			data, read = r.String()
		case "mimeType":
			bit = bMimeType
			mime, read = r.String()
		case "id":
			bit = bID
			call.ID, read = r.String()
		case "name":
			bit = bName
			call.Name, read = r.String()
		case "arguments":
			bit = bArguments
			if !r.Null() {
				var v any
				if v, read = r.Value(); read {
					call.Arguments, read = v.(map[string]any)
				}
			} else {
				read = true
			}
		case "thoughtSignature":
			bit = bThoughtSignature
			call.ThoughtSignature, read = r.String()
		case "namespace":
			bit = bNamespace
			call.Namespace, read = r.String()
		case "argumentsError":
			bit = bArgumentsError
			call.ArgumentsError, read = r.String()
		}
		return read && seen.First(bit)
	})
	if !ok || seen&^blockKeys[typ] != 0 || seen&bType == 0 {
		return nil, false
	}
	switch typ {
	case "text":
		return TextContent{Text: text, TextSignature: sig}, true
	case "thinking":
		return ThinkingContent{Thinking: text, ThinkingSignature: sig, Redacted: redacted}, true
	case "image":
		return ImageContent{Data: data, MimeType: mime}, true
	}
	return call, true
}
