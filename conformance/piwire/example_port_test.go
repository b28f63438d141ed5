package piwire_test

import (
	"context"
	"fmt"

	"github.com/turnstile-dev/turnstile/conformance/piwire"
)

// A port's own types: its messages read and write pi's JSON; its tools are its own.
type (
	Message struct {
		Role    string `json:"role"`
		Content string `json:"content"`
	}
	Tool  struct{ Name string }
	Model struct {
		ID       string `json:"id"`
		Name     string `json:"name"`
		API      string `json:"api"`
		Provider string `json:"provider"`
	}
)

// A prepareRequest hook on the port's types: the payload names the context's tools and
// leaves the model's name out; the answer's tools are the port's own.
func ExamplePortHooks() {
	env := newWorld(map[string]string{"prepareRequest": `{"context":{"messages":[],"tools":["grep"]}}`})
	h := piwire.PortHooks[Message, *Tool, Model]{Env: env, Tools: []*Tool{{"read"}, {"grep"}},
		Name: func(t *Tool) string { return t.Name }}
	c := piwire.PortContext[Message, *Tool]{Messages: []Message{{"user", "hi"}}, Tools: h.Tools}
	u, err := h.PrepareRequest(context.Background(), c, Model{ID: "m", Name: "M", API: "a", Provider: "p"}, "off")
	fmt.Println(env.payload["prepareRequest"])
	fmt.Println(len(u.Context.Tools), u.Context.Tools[0].Name, u.Model == nil, err)
	// Output:
	// {"context":{"messages":[{"role":"user","content":"hi"}],"tools":["read","grep"]},"model":{"id":"m","api":"a","provider":"p"},"thinkingLevel":"off"}
	// 1 grep true <nil>
}
