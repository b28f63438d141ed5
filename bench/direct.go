package bench

import (
	"context"
	"fmt"

	"github.com/turnstile-dev/turnstile/loop"
	"github.com/turnstile-dev/turnstile/sim"
)

// Direct runs a shape's scenario on the reference loop in-process with trivial mocks — a
// stream that answers at once, tools that return at once, no simulator and no trace — the
// Go counterpart of pi's in-process baseline.
func Direct(sc *sim.Scenario) error {
	tools := make([]*loop.Tool, 0, len(sc.Tools))
	for _, ts := range sc.Tools {
		res := ts.Behaviour.Result
		tools = append(tools, &loop.Tool{Name: ts.Name, Description: ts.Description, Parameters: ts.Parameters,
			Execute: func(context.Context, string, map[string]any, func(loop.ToolResult)) (loop.ToolResult, error) {
				return res, nil
			}})
	}
	n := 0
	cfg := loop.Config{
		Model: sim.DefaultModel,
		Stream: func(_ context.Context, req loop.StreamRequest) (loop.AssistantStream, error) {
			if n >= len(sc.Responses) {
				return nil, fmt.Errorf("request %d was not scripted", n+1)
			}
			resp := &sc.Responses[n]
			n++
			return newSliceStream(sim.StreamEvents(resp, req.Model, 0)), nil
		},
		GetSteeringMessages: func(context.Context) ([]loop.Message, error) { return nil, nil },
		GetFollowUpMessages: func(context.Context) ([]loop.Message, error) { return nil, nil },
	}
	_, err := loop.Run(context.Background(), sc.Prompts, loop.Context{Tools: tools}, cfg)
	return err
}

// sliceStream replays prepared events.
type sliceStream struct {
	events []loop.StreamEvent
	final  *loop.AssistantMessage
}

func newSliceStream(events []loop.StreamEvent) *sliceStream {
	s := &sliceStream{events: events}
	if n := len(events); n > 0 {
		s.final = events[n-1].Message
	}
	return s
}

func (s *sliceStream) Next(context.Context) (loop.StreamEvent, bool, error) {
	if len(s.events) == 0 {
		return loop.StreamEvent{}, false, nil
	}
	ev := s.events[0]
	s.events = s.events[1:]
	return ev, true, nil
}

func (s *sliceStream) Result(context.Context) (*loop.AssistantMessage, error) { return s.final, nil }
