package trace

// Calls that send a context whole, in the linear form.
//
// A stream call, and the calls of the hooks that are given the context (transformContext,
// convertToLlm, prepareRequest, prepareNextTurn, finishTurn), send it whole every time; so do
// the hooks' answers that return it, and prepareNextTurn and finishTurn send the run's new
// messages whole too. Each of those message lists is written in the linear form as the list
// it extends, of the last call of the same name that had that list (its first Keep messages),
// followed by the messages after them: Link.Extends and Keep for the context, NewExtends and
// NewKeep for the new messages, AnswerExtends and AnswerKeep for the answer's. agent_end's
// messages and the run end's (the run's messages, the last request's context and what
// followed it) are linked alike with Extends and Keep, to the last stream call. Whether a
// list is linked is decided from the lists' canonical bytes alone, as every link of the
// linear form is.

// List names one of a context call's message lists.
type List int

// The message lists of a context call.
const (
	// ListMessages is the context's messages, in the call's data.
	ListMessages List = iota
	// ListNewMessages is the run's new messages, in the call's data.
	ListNewMessages
	// ListAnswer is the messages of the call's answer.
	ListAnswer
)

// contextPaths says where a call of one name holds its message lists: the context's messages
// in its data, the run's new messages in its data (nil: none), the messages in its answer
// (nil: none).
type contextPaths struct{ messages, newMessages, answer []string }

// The paths of the context calls' lists (contextCallPaths).
var (
	pathMessages        = []string{"messages"}
	pathContextMessages = []string{"context", "messages"}
	pathTurnMessages    = []string{"turn", "context", "messages"}
	pathTurnNew         = []string{"turn", "newMessages"}
)

// contextCallPaths is where a call of this name holds its lists, and whether it sends a
// context at all: stream and the hooks given the context. A switch, not a map: every call of
// a run asks, and most calls are of other names (tools, queue polls).
func contextCallPaths(name string) (contextPaths, bool) {
	switch name {
	case CallStream:
		return contextPaths{messages: pathMessages}, true
	case HookTransformContext, HookConvertToLLM:
		return contextPaths{messages: pathMessages, answer: pathMessages}, true
	case HookPrepareRequest:
		return contextPaths{messages: pathContextMessages, answer: pathContextMessages}, true
	case HookPrepareNextTurn:
		return contextPaths{messages: pathTurnMessages, newMessages: pathTurnNew, answer: pathContextMessages}, true
	case HookFinishTurn:
		return contextPaths{messages: pathTurnMessages, newMessages: pathTurnNew}, true
	}
	return contextPaths{}, false
}

// SendsContext reports whether calls of this name (stream, or a hook's name) send a context
// whole, and so are linked in the linear form.
func SendsContext(name string) bool {
	_, ok := contextCallPaths(name)
	return ok
}

// CallListPath is where a call of this name holds the given list (nil: it holds none).
func CallListPath(name string, list List) []string {
	paths, _ := contextCallPaths(name)
	switch list {
	case ListMessages:
		return paths.messages
	case ListNewMessages:
		return paths.newMessages
	case ListAnswer:
		return paths.answer
	}
	return nil
}

// Entries that hold a run's messages whole: agent_end's data.messages and the run end's.
// Their list is linked (Extends, Keep) to the context of the last stream call, whose list lies
// at the same path; the run's messages begin as the last request's context did.
var runMessages = []string{"messages"}

// eventAgentEnd names the event that reports a run's messages whole.
const eventAgentEnd = "agent_end"

// listPath is where entry e holds the given list (nil: it holds none): a call's lists, and
// the messages of agent_end and of the run's end.
func listPath(e *Entry, list List) []string {
	switch {
	case e.Kind == KindCall:
		return CallListPath(e.Name, list)
	case list == ListMessages && (e.Kind == KindEvent && e.Name == eventAgentEnd || e.Kind == KindEnd && e.Name == "run"):
		return runMessages
	}
	return nil
}

// listIn is the list at path in decoded JSON.
func listIn(d map[string]any, path []string) ([]any, bool) {
	for _, key := range path[:len(path)-1] {
		next, ok := d[key].(map[string]any)
		if !ok {
			return nil, false
		}
		d = next
	}
	list, ok := d[path[len(path)-1]].([]any)
	return list, ok
}

// setListIn sets the list at path in decoded JSON, where listIn found one.
func setListIn(d map[string]any, path []string, list []any) {
	for _, key := range path[:len(path)-1] {
		d = d[key].(map[string]any)
	}
	d[path[len(path)-1]] = list
}
