package agent

import (
	"maps"
	"strings"

	"github.com/turnstile-dev/turnstile/loop"
)

// initialSystemMessage is pi-ai's createInitialSystemMessage: a system message holding the
// prompt and declaring the tools, or nil when both are empty.
func initialSystemMessage(prompt string, tools []*loop.Tool) *loop.SystemMessage {
	if prompt == "" && len(tools) == 0 {
		return nil
	}
	m := &loop.SystemMessage{Text: prompt}
	if len(tools) > 0 {
		m.ToolsAdded = loop.Declarations(tools)
	}
	return m
}

// CurrentSystemMessage replays every system message of a transcript into one (pi-ai's
// getCurrentSystemMessage): the non-empty contents joined by a blank line, the sections
// patched by name, the current tools declared, the first system message's timestamp. It is
// nil when the transcript has no system message and declares no tool.
func CurrentSystemMessage(messages []loop.Message) *loop.SystemMessage {
	var content []string
	sections := map[string]*string{}
	seen := false
	var timestamp int64
	for _, m := range messages {
		sys, ok := m.(*loop.SystemMessage)
		if !ok {
			continue
		}
		if !seen {
			seen, timestamp = true, sys.Timestamp
		}
		if text := contentText(sys); text != "" {
			content = append(content, text)
		}
		for name, value := range sys.Sections {
			if value == nil {
				delete(sections, name)
			} else {
				sections[name] = value
			}
		}
	}
	tools := loop.CurrentTools(messages)
	if !seen && len(tools) == 0 {
		return nil
	}
	out := &loop.SystemMessage{Text: strings.Join(content, "\n\n"), Timestamp: timestamp}
	if len(sections) > 0 {
		out.Sections = maps.Clone(sections)
	}
	if len(tools) > 0 {
		out.ToolsAdded = tools
	}
	return out
}

// contentText is pi-ai's contentText: the text, or the text blocks joined by newlines.
func contentText(m *loop.SystemMessage) string {
	if m.Blocks == nil {
		return m.Text
	}
	var parts []string
	for _, b := range m.Blocks {
		if t, ok := b.(loop.TextContent); ok {
			parts = append(parts, t.Text)
		}
	}
	return strings.Join(parts, "\n")
}
