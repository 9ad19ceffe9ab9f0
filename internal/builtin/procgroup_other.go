//go:build !unix

package builtin

import (
	"fmt"
	"os"
	"os/exec"
)

// ownProcessGroup is a no-op where process groups are not available:
// cancellation kills only the shell.
func ownProcessGroup(*exec.Cmd) {}

// exitStatus says how a command ended.
func exitStatus(ps *os.ProcessState) string {
	return fmt.Sprintf("Exit code %d", ps.ExitCode())
}
