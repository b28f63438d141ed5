// Command agentadapter serves the example Go Agent (conformance/example's AgentPort) over
// the conformance protocol, loop and Agent scenarios alike:
//
//	go build -o /tmp/example-agent ./conformance/example/agentadapter
//	turnstile conform --impl /tmp/example-agent
package main

import (
	"fmt"
	"os"

	"github.com/turnstile-dev/turnstile/conformance"
	"github.com/turnstile-dev/turnstile/conformance/example"
)

func main() {
	if err := conformance.ServePort(os.Stdin, os.Stdout, example.AgentPort{}); err != nil {
		fmt.Fprintln(os.Stderr, "example agent adapter:", err)
		os.Exit(1)
	}
}
