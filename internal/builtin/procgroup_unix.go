//go:build unix

package builtin

import (
	"fmt"
	"os"
	"os/exec"
	"syscall"
)

// ownProcessGroup makes cmd a session and process group leader, so that
// killing the group reaches everything the command started. A new session
// rather than only a new group also detaches it from any controlling
// terminal: a program that opens /dev/tty for a password fails at once
// instead of stopping (SIGTTIN) until the timeout.
func ownProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	cmd.Cancel = func() error {
		err := syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		if err == syscall.ESRCH {
			return os.ErrProcessDone
		}
		return err
	}
}

// exitStatus says how a command ended: its exit code, or the signal that
// killed it.
func exitStatus(ps *os.ProcessState) string {
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return fmt.Sprintf("Killed by signal %d (%v)", int(ws.Signal()), ws.Signal())
	}
	return fmt.Sprintf("Exit code %d", ps.ExitCode())
}
