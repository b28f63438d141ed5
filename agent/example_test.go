package agent_test

import (
	"context"
	"fmt"

	"github.com/turnstile-dev/turnstile/agent"
	"github.com/turnstile-dev/turnstile/loop"
)

// An Agent answering from a scripted model: a follow-up queued before the prompt runs when the
// prompt's run would otherwise stop, in the same run.
func Example() {
	model := newProvider(says("Hello!"), says("Noted."), says("Bye."))
	a := agent.New(agent.Options{
		Model: loop.Model{ID: "faux-1", API: "faux", Provider: "faux"},
		Loop:  loop.Config{Stream: model.Stream},
	})
	a.Subscribe(func(_ context.Context, e loop.Event) {
		if e.Type == loop.MessageEnd {
			fmt.Println(summary(e.Message))
		}
	})
	a.FollowUp(&loop.UserMessage{Text: "Remember the milk."})
	if err := a.PromptText("Hi"); err != nil {
		fmt.Println(err)
	}
	fmt.Println(a.PromptText("Bye") == nil, a.State().IsStreaming)
	fmt.Println(a.Continue())
	// Output:
	// user[blocks]:Hi
	// assistant:stop:Hello!
	// user:Remember the milk.
	// assistant:stop:Noted.
	// user[blocks]:Bye
	// assistant:stop:Bye.
	// true false
	// Cannot continue from message role: assistant
}
