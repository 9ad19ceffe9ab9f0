package sandbox

import (
	"fmt"
	"path/filepath"
	"strings"
)

// Status is what this machine's sandbox can enforce.
type Status struct {
	// OS is runtime.GOOS.
	OS string `json:"os"`
	// LandlockABI is the kernel's Landlock ABI version, 0 without Landlock.
	LandlockABI int `json:"landlockABI"`
	// Filesystem: writes are confined (Landlock ABI 1+).
	Filesystem bool `json:"filesystem"`
	// TCP: network "deny" refuses TCP connect and bind (ABI 4+).
	TCP bool `json:"tcp"`
	// Scopes: abstract UNIX sockets and signals outside the sandbox are
	// refused (ABI 6+).
	Scopes bool `json:"scopes"`
	// MountNamespace: read-only carve-outs inside writable trees and
	// hidden paths are enforced (a private mount namespace can be made:
	// as root, or through an unprivileged user namespace).
	MountNamespace bool `json:"mountNamespace"`
	// Launcher is the binary that sets the walls up: cadre-sandbox beside
	// this program, or this program itself (FindLauncher).
	Launcher string `json:"launcher,omitempty"`
	// Reason says why the sandbox is unavailable or partial.
	Reason string `json:"reason,omitempty"`
}

// Available reports whether commands can be sandboxed at all: writes
// confined, and the protected paths read-only.
func (s Status) Available() bool { return s.Filesystem && s.MountNamespace && s.Launcher != "" }

// String is the status as `cadre sandbox status` prints it.
func (s Status) String() string {
	yes := func(b bool) string {
		if b {
			return "yes"
		}
		return "no"
	}
	var b strings.Builder
	state := "available"
	if !s.Available() {
		state = "unavailable"
	}
	fmt.Fprintf(&b, "sandbox: %s (%s)\n", state, s.OS)
	if s.LandlockABI > 0 {
		fmt.Fprintf(&b, "landlock: ABI %d\n", s.LandlockABI)
	} else {
		fmt.Fprintf(&b, "landlock: none\n")
	}
	fmt.Fprintf(&b, "writes confined to the workspace: %s\n", yes(s.Filesystem))
	fmt.Fprintf(&b, "protected paths read-only, denied paths hidden (mount namespace): %s\n", yes(s.MountNamespace))
	fmt.Fprintf(&b, "network deny (TCP connect and bind): %s\n", yes(s.TCP))
	fmt.Fprintf(&b, "network deny (UDP, raw sockets): no (not enforced)\n")
	fmt.Fprintf(&b, "signals and abstract sockets scoped to the sandbox: %s\n", yes(s.Scopes))
	switch {
	case s.Launcher == "":
	case filepath.Base(s.Launcher) == LauncherName:
		fmt.Fprintf(&b, "launcher: %s\n", s.Launcher)
	default:
		fmt.Fprintf(&b, "launcher: %s (this program itself: each sandboxed command starts it again, which costs a few ms; install %s beside it to make that about 1 ms)\n", s.Launcher, LauncherName)
	}
	if s.Reason != "" {
		fmt.Fprintf(&b, "note: %s\n", s.Reason)
	}
	return b.String()
}
