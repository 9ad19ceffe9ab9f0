// Package sandbox runs the commands a model causes inside walls the kernel
// enforces: on Linux, Landlock for where a process may write (and, when the
// network is denied, whether it may open TCP connections), and a private
// mount namespace for the paths inside a writable tree that stay read-only
// (.git, .cadre, …) or hidden (~/.ssh, …).
//
// Landlock restricts the thread that asks and everything it starts, and can
// never be lifted, so the runtime does not restrict itself: Wrap rewrites a
// command to start the running binary again as a small launcher (argv[1] is
// LauncherArg), which this package's init turns into the sandboxed command
// before the rest of the program initialises — any binary that links this
// package can be the launcher, the cadre command and test binaries alike.
package sandbox
