package loop

// CurrentTools replays the tool declarations of a transcript, or of any prefix of one: system
// messages in order, each one's ToolsRemoved first, then its ToolsAdded. The order is that of
// a JavaScript Map, as in pi-ai's getCurrentTools: a re-added name keeps its place unless it was
// removed first.
func CurrentTools(messages []Message) []ToolDeclaration {
	var tools orderedTools
	tools.replay(messages)
	return tools.list
}

// replay applies the tool declarations of messages' system messages, in order.
func (o *orderedTools) replay(messages []Message) {
	for _, m := range messages {
		sys, ok := m.(*SystemMessage)
		if !ok {
			continue
		}
		for _, r := range sys.ToolsRemoved {
			o.remove(r.Name)
		}
		for _, d := range sys.ToolsAdded {
			o.set(d)
		}
	}
}

// orderedTools is a name-keyed list with JavaScript Map ordering.
type orderedTools struct{ list []ToolDeclaration }

func (o *orderedTools) set(d ToolDeclaration) {
	for i := range o.list {
		if o.list[i].Name == d.Name {
			o.list[i] = d
			return
		}
	}
	o.list = append(o.list, d)
}

func (o *orderedTools) remove(name string) {
	for i := range o.list {
		if o.list[i].Name == name {
			o.list = append(o.list[:i:i], o.list[i+1:]...)
			return
		}
	}
}

// ToolChanges is the difference between two tool sets.
type ToolChanges struct {
	Added   []ToolDeclaration
	Removed []ToolReference
}

// Empty reports whether nothing changed.
func (c ToolChanges) Empty() bool { return len(c.Added) == 0 && len(c.Removed) == 0 }

// ToolStateChanges compares two complete tool sets (pi-ai's getToolStateChanges): Added lists,
// in current's order, the tools that are new or whose declaration changed; Removed lists, in
// previous's order, the tools that are gone or changed. A changed definition is a removal
// followed by an addition.
func ToolStateChanges(previous, current []ToolDeclaration) ToolChanges {
	find := func(list []ToolDeclaration, name string) (ToolDeclaration, bool) {
		for _, d := range list {
			if d.Name == name {
				return d, true
			}
		}
		return ToolDeclaration{}, false
	}
	var c ToolChanges
	for _, d := range current {
		if p, ok := find(previous, d.Name); !ok || !sameDeclaration(p, d) {
			c.Added = append(c.Added, cloneDeclaration(d))
		}
	}
	for _, d := range previous {
		if n, ok := find(current, d.Name); !ok || !sameDeclaration(d, n) {
			c.Removed = append(c.Removed, ToolReference{Name: d.Name})
		}
	}
	return c
}

// Declarations returns what the model is told about tools.
func Declarations(tools []*Tool) []ToolDeclaration {
	out := make([]ToolDeclaration, 0, len(tools))
	for _, t := range tools {
		out = append(out, t.Declaration())
	}
	return out
}

// executableDeclarations is Declarations for DeclareToolChanges, which copies what it
// declares: a tool whose declaration is plain JSON (plainDeclaration) shares its schema, as it
// would come back equal from the copy; any other is copied through JSON, as the transcript
// holds it.
func executableDeclarations(tools []*Tool) []ToolDeclaration {
	out := make([]ToolDeclaration, 0, len(tools))
	for _, t := range tools {
		d := ToolDeclaration{Name: t.Name, Description: t.Description, Parameters: t.Parameters}
		if !plainDeclaration(d) {
			d = t.Declaration()
		}
		out = append(out, d)
	}
	return out
}

// DeclareToolChanges makes pending, the messages about to join transcript, declare exactly the
// difference between the tools the transcript declares and the executable tools (pi's
// declareToolChanges). If pending holds a system message, the last one gets its tool fields
// replaced by the difference (kept as it is when nothing changed and it declares nothing);
// otherwise, when anything differs, a new system message stamped now is inserted before the
// first non-system pending message. Messages already in transcript are never edited, so
// replaying any prefix of the result gives the tool set the model was shown there.
func DeclareToolChanges(transcript []Message, executable []ToolDeclaration, pending []Message, now int64) []Message {
	systemIndex := -1
	for i := len(pending) - 1; i >= 0; i-- {
		if _, ok := pending[i].(*SystemMessage); ok {
			systemIndex = i
			break
		}
	}
	baseline := pending
	var sys *SystemMessage
	if systemIndex >= 0 {
		sys = pending[systemIndex].(*SystemMessage)
		baseline = replaceAt(pending, systemIndex, withToolChanges(sys, ToolChanges{}))
	}
	var replayed orderedTools // the transcript's, then the baseline's, as if one list
	replayed.replay(transcript)
	replayed.replay(baseline)
	changes := ToolStateChanges(replayed.list, executable)
	if sys != nil {
		if changes.Empty() && len(sys.ToolsAdded) == 0 && len(sys.ToolsRemoved) == 0 {
			return pending
		}
		return replaceAt(baseline, systemIndex, withToolChanges(sys, changes))
	}
	if changes.Empty() {
		return pending
	}
	update := withToolChanges(&SystemMessage{Timestamp: now}, changes)
	index := len(pending)
	for i, m := range pending {
		if _, ok := m.(*SystemMessage); !ok {
			index = i
			break
		}
	}
	out := make([]Message, 0, len(pending)+1)
	out = append(out, pending[:index]...)
	out = append(out, update)
	return append(out, pending[index:]...)
}

// withToolChanges copies a system message with its tool fields replaced by changes.
func withToolChanges(m *SystemMessage, changes ToolChanges) *SystemMessage {
	c := *m
	c.ToolsAdded = changes.Added
	c.ToolsRemoved = changes.Removed
	return &c
}

func replaceAt(list []Message, i int, m Message) []Message {
	out := append([]Message{}, list...)
	out[i] = m
	return out
}
