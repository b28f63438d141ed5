// Command agentadapter serves the example Go Agent (conformance/example's AgentPort) over
// the conformance protocol, loop and Agent scenarios alike:
//
//	go build -o /tmp/example-agent ./conformance/example/agentadapter
//	turnstile conform --impl /tmp/example-agent
package main

import (
	"fmt"
	"os"

	"github.com/turnstile-dev/turnstile/conformance/example"
	"github.com/turnstile-dev/turnstile/conformance/porttest"
)

func main() {
	if err := porttest.Serve(os.Stdin, os.Stdout, example.AgentPort{}); err != nil {
		fmt.Fprintln(os.Stderr, "example agent adapter:", err)
		os.Exit(1)
	}
}
