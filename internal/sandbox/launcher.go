package sandbox

import (
	"os"
	"path/filepath"
)

// LauncherName is the file name of the separate launcher program
// (cmd/cadre-sandbox), installed beside cadre.
const LauncherName = "cadre-sandbox"

// FindLauncher returns the binary Wrap should start to sandbox a command
// for exe, the running program: the separate launcher installed beside
// it when there is one, else exe itself. Both work; the separate one is a
// small program whose start costs about a millisecond, where starting the
// whole cadre binary again costs several (docs/performance.md). Only the
// directory of the program itself is looked in: nothing a workspace or
// its settings name can choose the binary that sets the walls up.
func FindLauncher(exe string) string {
	if exe == "" {
		return ""
	}
	if real, err := filepath.EvalSymlinks(exe); err == nil {
		exe = real
	}
	near := filepath.Join(filepath.Dir(exe), LauncherName)
	if fi, err := os.Stat(near); err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0 {
		return near
	}
	return exe
}
