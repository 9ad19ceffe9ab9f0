// Package fork builds what a fork of an agent sees (S-F1, S-F2): the
// caller's own conversation, then one identical placeholder result per call
// of the forking message and the fork's directive, so that N forks of one
// message share a byte-identical prefix up to the directive, which a
// provider's prompt cache serves; and the tools a fork is shown, which are
// the caller's exact definitions but may run as the fork's own or refuse.
//
// Spawning the fork is the subagent core's; this package holds the
// messages and tools it is started with, and the recursion guard.
package fork
