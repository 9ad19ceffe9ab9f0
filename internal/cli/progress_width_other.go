//go:build !(aix || darwin || dragonfly || freebsd || linux || netbsd || openbsd || solaris || zos)

package cli

import "io"

// terminalWidth is unknown on this platform: the caller's default applies.
func terminalWidth(io.Writer) int { return 0 }
