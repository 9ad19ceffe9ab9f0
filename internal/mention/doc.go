// Package mention reads the files an interactive message names with
// "@path" (as Claude Code's "@main.go" does) and completes such paths.
//
// Every path is confined to the workspace: a mention is a trust boundary
// between what was typed (or pasted, or completed) and the file system.
// A path that leaves the workspace lexically ("@../../etc/passwd", an
// absolute path elsewhere) or through a symbolic link is refused with
// ErrOutside, and files are opened through an os.Root, which refuses the
// same escapes if the tree changes between the check and the open.
package mention
