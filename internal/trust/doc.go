// Package trust decides whether a project's own files may widen what
// cadre does in it. A project root is trusted or not; the user's trust
// lives in $CADRE_HOME/trust.json (never in the project) and is pinned to
// a digest of what the project asks for: the widening keys of its
// settings files, its hooks and MCP servers, and the grants of its agent,
// skill and command files. When a pull changes any of them the digest
// changes and trust is asked again, the way direnv pins an .envrc.
//
// Untrusted, a project's files may only narrow: the loaders in config,
// agent and command call the narrowing functions here, which drop what
// widens or executes and return it as Items, so that the same list is
// what a run warns about, what `cadre trust` shows, and what the digest
// covers.
package trust
