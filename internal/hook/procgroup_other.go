//go:build !unix

package hook

import "os/exec"

// ownProcessGroup does nothing where there are no process groups: the
// context ending kills the shell only.
func ownProcessGroup(*exec.Cmd) {}
