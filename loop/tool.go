package loop

import (
	"context"
	"encoding/json"
	"fmt"
)

// ExecutionMode says how the tool calls of one response run.
type ExecutionMode string

// Execution modes. Parallel is the default: calls are prepared one by one in source order,
// then run concurrently.
const (
	Parallel   ExecutionMode = "parallel"
	Sequential ExecutionMode = "sequential"
)

// Tool is a tool the loop can execute.
type Tool struct {
	Name        string
	Label       string
	Description string
	// Parameters is the JSON Schema of the arguments, as decoded JSON.
	Parameters map[string]any
	// ExecutionMode Sequential makes every batch that calls this tool run sequentially.
	ExecutionMode ExecutionMode
	// PrepareArguments, when set, rewrites the raw arguments before validation.
	PrepareArguments func(args map[string]any) map[string]any
	// Execute runs the tool with validated arguments. onUpdate reports partial results; calls
	// made after Execute returns are dropped. A returned error becomes an error result with
	// its text, as a thrown error does in pi; a returned Nothing stands for an execute that
	// resolved undefined or null (see Nothing).
	Execute func(ctx context.Context, toolCallID string, args map[string]any, onUpdate func(ToolResult)) (ToolResult, error)
}

// Declaration is what the model is told about the tool (pi-ai's toToolDeclaration): name,
// description and a deep copy of the parameters.
func (t *Tool) Declaration() ToolDeclaration {
	return ToolDeclaration{Name: t.Name, Description: t.Description, Parameters: cloneParameters(t.Parameters)}
}

// cloneParameters is cloneJSON(p), copied by hand when a JSON round trip gives p back equal.
func cloneParameters(p map[string]any) map[string]any {
	c, ok := copyJSON(p)
	if !ok {
		return cloneJSON(p)
	}
	out, _ := c.(map[string]any)
	return out
}

// ToolResult is what a tool produced, or a partial result of it.
type ToolResult struct {
	// Content is shown to the model; nil becomes [] in the tool-result message.
	Content []Block `json:"content"`
	// Details are for logs and UIs.
	Details any `json:"details,omitempty"`
	// StructuredContent is a machine-readable result for programmatic callers.
	StructuredContent any    `json:"structuredContent,omitempty"`
	Usage             *Usage `json:"usage,omitempty"`
	// IsError reports a failure without an error return; details are kept.
	IsError bool `json:"isError,omitempty"`
	// Terminate asks to end the run after this batch; it takes effect only when every
	// result of the batch asks for it.
	Terminate bool `json:"terminate,omitempty"`
	// TerminateSet records that Terminate was given explicitly, false included, as an
	// afterToolCall override gives it: pi then keeps "terminate": false in the result, and so
	// does the JSON form here.
	TerminateSet bool `json:"-"`
}

// MarshalJSON writes the result in pi's shape: terminate appears when true or set.
func (r ToolResult) MarshalJSON() ([]byte, error) {
	type plain ToolResult
	if r.TerminateSet && !r.Terminate {
		return json.Marshal(struct {
			plain
			Terminate bool `json:"terminate"`
		}{plain(r), false})
	}
	return json.Marshal(plain(r))
}

// UnmarshalJSON reads pi's shape, noting an explicit terminate.
func (r *ToolResult) UnmarshalJSON(data []byte) error {
	type plain ToolResult
	var aux struct {
		plain
		Content   []json.RawMessage `json:"content"`
		Terminate *bool             `json:"terminate"`
	}
	if err := json.Unmarshal(data, &aux); err != nil {
		return err
	}
	blocks, err := DecodeBlocks(aux.Content)
	if err != nil {
		return fmt.Errorf("tool result: %w", err)
	}
	*r = ToolResult(aux.plain)
	r.Content = blocks
	if aux.Terminate != nil {
		r.Terminate, r.TerminateSet = *aux.Terminate, true
	}
	return nil
}

// Nothing is what Execute returns, as its error, to resolve with no result at all: JavaScript's
// undefined, or null when Null is set (a tool written without types can do that). pi 0.99.1
// and later turn it into an error result, "Cannot read properties of undefined (reading
// 'isError')"; earlier releases end the call with no result and fail the run when they build
// its tool-result message (loop.ToolResultNothing).
type Nothing struct {
	// Null is set for null, unset for undefined.
	Null bool
}

// Error is "execute resolved undefined" (or null).
func (n Nothing) Error() string { return "execute resolved " + n.value() }

func (n Nothing) value() string {
	if n.Null {
		return "null"
	}
	return "undefined"
}

// readError is the TypeError JavaScript throws on reading field of the missing result.
func (n Nothing) readError(field string) string {
	return "Cannot read properties of " + n.value() + " (reading '" + field + "')"
}

// errorResult is pi's createErrorToolResult.
func errorResult(text string) ToolResult {
	return ToolResult{Content: Text(text), Details: map[string]any{}}
}
