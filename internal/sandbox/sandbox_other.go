//go:build !linux

package sandbox

import (
	"os/exec"
	"runtime"
)

// LauncherArg is argv[1] of the launcher (unused off Linux).
const LauncherArg = "__cadre-sandbox-exec"

// Probe reports that this OS has no sandbox.
func Probe(launcher string) Status {
	return Status{OS: runtime.GOOS, Launcher: launcher, Reason: "cadre's sandbox uses Linux Landlock; " + runtime.GOOS + " has none (macOS Seatbelt is not done)"}
}

// Wrap fails: there is no sandbox here.
func Wrap(*exec.Cmd, Policy, string) error { return ErrUnavailable }
