package protocol

import (
	"encoding/json"
	"slices"

	"github.com/turnstile-dev/turnstile/sim"
	"github.com/turnstile-dev/turnstile/trace"
)

// conforms reports whether a decoded implementation-to-harness message (as
// jsonschema.UnmarshalJSON decodes it: objects, arrays, strings, json.Number, bools, nil)
// certainly matches protocol.schema.json. It checks every constraint of the schema in plain
// code, which is many times cheaper than the schema validator; where the schema's exact
// meaning would take more care (numbers written as 1.0 or 1e0, a tool result that is not an
// object) it answers false, and ParseMessage asks the schema itself. So a line it accepts is
// one the schema accepts, and every line it rejects gets the schema's verdict and
// explanation, exactly as before. TestConformsNeverAcceptsWhatTheSchemaRejects keeps it so.
func conforms(v any) bool {
	m, ok := v.(map[string]any)
	if !ok {
		return false
	}
	typ, _ := m["type"].(string)
	switch typ {
	case TypeHello:
		return hasKeys(m, "type", "protocol", "name", "version", "tracks", "capabilities") &&
			(isNumber(m["protocol"], "1") || isNumber(m["protocol"], "2")) && isNonEmpty(m["name"]) && isString(m["version"]) && isNonEmpty(m["tracks"]) &&
			isCapabilities(m["capabilities"])
	case TypeCall:
		return hasKeys(m, "type", "id", "session", "call") && isPositiveInt(m["id"]) && isPositiveInt(m["session"]) && isCall(m["call"]) &&
			optionalKey(m, "standing", func(v any) bool { return v == true })
	case TypeNotify:
		return hasKeys(m, "type", "session", "notification") && isPositiveInt(m["session"]) && isNotification(m["notification"])
	case TypeIdle, TypeStopped:
		return hasKeys(m, "type", "session") && isPositiveInt(m["session"])
	case TypeError:
		s, present := m["session"]
		return hasKeys(m, "type", "message") && isString(m["message"]) && (!present || isPositiveInt(s))
	}
	return false
}

// hasKeys reports whether object m holds every key.
func hasKeys(m map[string]any, keys ...string) bool {
	for _, k := range keys {
		if _, ok := m[k]; !ok {
			return false
		}
	}
	return true
}

func isString(v any) bool   { _, ok := v.(string); return ok }
func isBool(v any) bool     { _, ok := v.(bool); return ok }
func isArray(v any) bool    { _, ok := v.([]any); return ok }
func isNonEmpty(v any) bool { s, ok := v.(string); return ok && s != "" }

func isObject(v any) (map[string]any, bool) {
	m, ok := v.(map[string]any)
	return m, ok
}

// isNumber reports whether v is the number written exactly as text.
func isNumber(v any, text string) bool { n, ok := v.(json.Number); return ok && string(n) == text }

// isPositiveInt reports whether v is written as a plain integer ≥ 1 of at most 15 digits (the
// schema's integer with minimum 1; other spellings are left to the schema).
func isPositiveInt(v any) bool {
	n, ok := v.(json.Number)
	if !ok || len(n) == 0 || len(n) > 15 || n[0] < '1' || n[0] > '9' {
		return false
	}
	for i := 1; i < len(n); i++ {
		if n[i] < '0' || n[i] > '9' {
			return false
		}
	}
	return true
}

// optionalKey reports whether key k of m is absent or satisfies check.
func optionalKey(m map[string]any, k string, check func(any) bool) bool {
	v, ok := m[k]
	return !ok || check(v)
}

func isHookName(v any) bool { s, ok := v.(string); return ok && slices.Contains(AllHooks, s) }

func isCapabilities(v any) bool {
	m, ok := isObject(v)
	if !ok {
		return false
	}
	hooks, ok := m["hooks"].([]any)
	if !ok {
		return false
	}
	return uniqueStrings(hooks, isHookName) && optionalKey(m, "lacks", func(v any) bool {
		lacks, ok := v.([]any)
		return ok && uniqueStrings(lacks, isFeature)
	}) && optionalKey(m, "deliveriesAhead", isBool) && optionalKey(m, "standingAnswers", isBool)
}

// isFeature reports whether v names an optional feature (the schema's enum of "lacks").
func isFeature(v any) bool { s, ok := v.(string); return ok && slices.Contains(sim.Features, s) }

// uniqueStrings reports whether list holds distinct strings, each accepted by valid.
func uniqueStrings(list []any, valid func(any) bool) bool {
	seen := map[string]bool{}
	for _, x := range list {
		if !valid(x) || seen[x.(string)] {
			return false
		}
		seen[x.(string)] = true
	}
	return true
}

// isMessage is $defs/message: an object with a string role.
func isMessage(v any) bool {
	m, ok := isObject(v)
	return ok && isString(m["role"])
}

func isMessages(v any) bool {
	list, ok := v.([]any)
	if !ok {
		return false
	}
	for _, x := range list {
		if !isMessage(x) {
			return false
		}
	}
	return true
}

func isAssistantMessage(v any) bool {
	m, ok := isObject(v)
	return ok && m["role"] == "assistant" && isArray(m["content"]) && isString(m["stopReason"])
}

// isToolResultMessage is $defs/toolResultMessage, required to be an object here (the schema
// lets anything else through; such a line goes to the schema).
func isToolResultMessage(v any) bool {
	m, ok := isObject(v)
	return ok && m["role"] == "toolResult" && isString(m["toolCallId"]) && isString(m["toolName"]) &&
		isArray(m["content"]) && isBool(m["isError"])
}

func isToolCall(v any) bool {
	m, ok := isObject(v)
	return ok && m["type"] == "toolCall" && isString(m["id"]) && isString(m["name"]) &&
		optionalKey(m, "arguments", func(a any) bool { _, ok := isObject(a); return ok })
}

func isToolResult(v any) bool {
	m, ok := isObject(v)
	return ok && optionalKey(m, "content", func(c any) bool { return c == nil || isArray(c) })
}

func isModel(v any) bool {
	m, ok := isObject(v)
	return ok && isString(m["id"]) && isString(m["api"]) && isString(m["provider"])
}

func isContext(v any) bool {
	m, ok := isObject(v)
	if !ok || !isMessages(m["messages"]) {
		return false
	}
	tools, ok := m["tools"].([]any)
	if !ok {
		return false
	}
	for _, t := range tools {
		if !isString(t) {
			return false
		}
	}
	return true
}

func isTurn(v any) bool {
	m, ok := isObject(v)
	if !ok || !isAssistantMessage(m["message"]) || !isContext(m["context"]) || !isMessages(m["newMessages"]) {
		return false
	}
	results, ok := m["toolResults"].([]any)
	if !ok {
		return false
	}
	for _, r := range results {
		if !isToolResultMessage(r) {
			return false
		}
	}
	return true
}

func isObj(v any) bool { _, ok := isObject(v); return ok }

func isCall(v any) bool {
	c, ok := isObject(v)
	if !ok || !hasKeys(c, "kind", "data") || !optionalKey(c, "name", isString) {
		return false
	}
	data, ok := isObject(c["data"])
	if !ok {
		return false
	}
	switch c["kind"] {
	case "stream":
		return isModel(data["model"]) && isMessages(data["messages"]) && isString(data["thinkingLevel"]) && isString(data["apiKey"]) &&
			optionalKey(data, "options", isStreamOptions)
	case "tool":
		return isString(data["toolCallId"]) && isString(data["toolName"]) && isObj(data["args"])
	case "hook":
		return isHookData(c["name"], data)
	}
	return false
}

// isStreamOptions is a stream call's options (protocol 2): {sessionId?, identity?}.
func isStreamOptions(v any) bool {
	o, ok := isObject(v)
	return ok && optionalKey(o, "sessionId", isString) && optionalKey(o, "identity", isObj)
}

// isHookData is $defs/hookCall for hook name.
func isHookData(name any, data map[string]any) bool {
	switch name {
	case "convertToLlm", "transformContext":
		return isMessages(data["messages"])
	case "getApiKey":
		return isString(data["provider"])
	case "prepareRequest":
		return isContext(data["context"]) && isModel(data["model"]) && isString(data["thinkingLevel"])
	case "prepareNextTurn", "finishTurn":
		return isTurn(data["turn"])
	case "beforeToolCall", "afterToolCall":
		ok := isAssistantMessage(data["assistantMessage"]) && isToolCall(data["toolCall"]) && isObj(data["args"]) && isContext(data["context"])
		if name == "afterToolCall" {
			ok = ok && isToolResult(data["result"]) && isBool(data["isError"])
		}
		return ok
	case "getSteeringMessages", "getFollowUpMessages":
		return true
	}
	return false
}

func isNotification(v any) bool {
	n, ok := isObject(v)
	if !ok || !hasKeys(n, "kind", "data") {
		return false
	}
	data, ok := isObject(n["data"])
	if !ok {
		return false
	}
	switch n["kind"] {
	case "event":
		return isEvent(data)
	case "end":
		msgs, hasMessages := data["messages"]
		e, hasError := data["error"]
		return hasMessages != hasError && (!hasMessages || isMessages(msgs)) && (!hasError || isString(e))
	case "outcome":
		return isOutcome(data)
	}
	return false
}

// outcomeOps are the operations an outcome may name.
var outcomeOps = []string{trace.OpPrompt, trace.OpContinue, trace.OpWaitForIdle, trace.OpSteer, trace.OpFollowUp, trace.OpAbort,
	trace.OpReset, trace.OpSetSteeringMode, trace.OpSetFollowUpMode, trace.OpClearQueues, trace.OpSetTools, trace.OpState, trace.OpRelease}

// isOutcome checks an Agent operation's outcome (protocol §13.2).
func isOutcome(o map[string]any) bool {
	op, _ := o["op"].(string)
	outcome, _ := o["outcome"].(string)
	e, hasError := o["error"]
	if !hasKeys(o, "id", "op", "outcome") || !isString(o["id"]) || !slices.Contains(outcomeOps, op) ||
		!slices.Contains([]string{trace.OutcomeAccepted, trace.OutcomeResolved, trace.OutcomeRefused}, outcome) ||
		hasError != (outcome == trace.OutcomeRefused) || (hasError && !isString(e)) {
		return false
	}
	st, present := o["state"]
	if !present {
		return true
	}
	s, ok := isObject(st)
	if !ok || !hasKeys(s, "isStreaming", "messages", "pendingToolCalls", "queued", "hasQueuedMessages") ||
		!isBool(s["isStreaming"]) || !isMessages(s["messages"]) || !isMessages(s["queued"]) || !isBool(s["hasQueuedMessages"]) {
		return false
	}
	pending, ok := s["pendingToolCalls"].([]any)
	if !ok || !optionalKey(s, "errorMessage", isString) || !optionalKey(s, "streamingMessage", isMessage) {
		return false
	}
	for _, id := range pending {
		if !isString(id) {
			return false
		}
	}
	return true
}

func isEvent(e map[string]any) bool {
	switch e["type"] {
	case "agent_start", "turn_start":
		return true
	case "agent_end":
		return isMessages(e["messages"])
	case "turn_end":
		return isMessage(e["message"]) && isArray(e["toolResults"])
	case "message_start", "message_end":
		return isMessage(e["message"])
	case "message_update":
		ame, ok := isObject(e["assistantMessageEvent"])
		return isMessage(e["message"]) && ok && hasKeys(ame, "type")
	case "tool_execution_start":
		return isString(e["toolCallId"]) && isString(e["toolName"]) && isObj(e["args"])
	case "tool_execution_update":
		return isString(e["toolCallId"]) && isString(e["toolName"]) && isObj(e["args"]) && isToolResult(e["partialResult"])
	case "tool_execution_end":
		return isString(e["toolCallId"]) && isString(e["toolName"]) && isToolResult(e["result"]) && isBool(e["isError"]) &&
			optionalKey(e, "durationMs", isNonNegative)
	}
	return false
}

// isNonNegative reports whether v is a number written without a minus sign.
func isNonNegative(v any) bool {
	n, ok := v.(json.Number)
	return ok && len(n) > 0 && n[0] != '-'
}
