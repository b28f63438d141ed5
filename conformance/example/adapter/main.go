// Command adapter serves the example Go port over the conformance protocol, so that
// turnstile conform and explore verify it as any other implementation:
//
//	go build -o /tmp/example-adapter ./conformance/example/adapter
//	turnstile conform --impl /tmp/example-adapter
package main

import (
	"fmt"
	"os"

	"github.com/turnstile-dev/turnstile/conformance/example"
	"github.com/turnstile-dev/turnstile/conformance/porttest"
)

func main() {
	if err := porttest.Serve(os.Stdin, os.Stdout, example.Port{}); err != nil {
		fmt.Fprintln(os.Stderr, "example adapter:", err)
		os.Exit(1)
	}
}
