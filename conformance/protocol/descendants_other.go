//go:build !linux

package protocol

import "os/exec"

// endDescendants ends the command's process group; without /proc, a descendant that left
// the group may survive.
func endDescendants(cmd *exec.Cmd, _ string) { killProcessGroup(cmd) }
