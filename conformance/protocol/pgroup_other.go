//go:build !unix

package protocol

import "os/exec"

// setProcessGroup does nothing where process groups are not available.
func setProcessGroup(*exec.Cmd) {}

// killProcessGroup kills the command's process (its descendants may survive).
func killProcessGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = cmd.Process.Kill()
	}
}
