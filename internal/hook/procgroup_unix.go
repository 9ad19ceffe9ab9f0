//go:build unix

package hook

import (
	"os"
	"os/exec"
	"syscall"
)

// ownProcessGroup starts cmd in a session of its own, so that its context
// ending kills everything the hook started, not only the shell; with no
// controlling terminal, a hook that reads /dev/tty fails instead of
// stopping.
func ownProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	cmd.Cancel = func() error {
		if err := syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); err != syscall.ESRCH {
			return err
		}
		return os.ErrProcessDone
	}
}
