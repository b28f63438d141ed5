package porttest

import (
	"encoding/json"
	"fmt"
	"slices"
)

// The helpers below serve a port whose own types already read and write pi's JSON: they
// decode what Env hands over into those types, so the port maps nothing by hand.

// Decode decodes raw messages (Setup's Messages and Prompts) into a port's message type.
func Decode[M any](raws []json.RawMessage) ([]M, error) {
	out := make([]M, len(raws))
	for i, raw := range raws {
		if err := json.Unmarshal(raw, &out[i]); err != nil {
			return nil, fmt.Errorf("message %d: %w", i, err)
		}
	}
	return out, nil
}

// Execute runs tool name's execute through env.Tool, each partial result and the result
// decoded into the port's result type R. An execute resolving nothing gives R's zero value.
func Execute[R any](env Env, toolCallID, name string, args any, onUpdate func(R)) (R, error) {
	var result R
	raw, err := env.Tool(toolCallID, name, args, func(partial json.RawMessage) {
		var r R
		if json.Unmarshal(partial, &r) == nil {
			onUpdate(r)
		}
	})
	if err != nil || raw == nil {
		return result, err
	}
	if err := json.Unmarshal(raw, &result); err != nil {
		return result, fmt.Errorf("tool %s (%s): result: %w", name, toolCallID, err)
	}
	return result, nil
}

// Pump reads st to its end: each stream event decoded into E goes to push, the final message
// decoded into M to end; a failure (the stream's, or one decoding) goes to fail and ends it.
// A port whose stream is fed from a goroutine runs it as `go porttest.Pump(...)`.
func Pump[E, M any](st Stream, push func(E), end func(M), fail func(error)) {
	for {
		raw, ok, err := st.Next()
		if err != nil {
			fail(err)
			return
		}
		if !ok {
			break
		}
		var event E
		if err := json.Unmarshal(raw, &event); err != nil {
			fail(fmt.Errorf("stream event: %w", err))
			return
		}
		push(event)
	}
	raw, err := st.Result()
	if err != nil {
		fail(err)
		return
	}
	var message M
	if err := json.Unmarshal(raw, &message); err != nil {
		fail(fmt.Errorf("stream result: %w", err))
		return
	}
	end(message)
}

// Installed is hook f when the scenario installs the hook of pi's name (Setup.Hooks), else
// F's zero value (nil for a func), for a loop that skips a nil hook:
// cfg.FinishTurn = porttest.Installed(env, "finishTurn", finishTurn).
func Installed[F any](env Env, name string, f F) F {
	if slices.Contains(env.Setup().Hooks, name) {
		return f
	}
	var none F
	return none
}
