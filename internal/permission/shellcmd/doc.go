// Package shellcmd reads a Bash command line without running it: which
// simple commands it runs (as written, and in every form a deny rule
// should see: unquoted, without assignments, the executable's directory
// dropped, through wrappers such as env, nice, timeout, xargs and sudo,
// and inside the scripts of sh -c, eval and trap), which files its
// redirections write, and what cannot be read before it runs. The
// permission package matches Bash rules against the Analysis; this package
// knows nothing of rules.
//
// It parses with mvdan.cc/sh as bash would, and re-parses inner scripts
// within bounds on size, nesting, depth and wrappers, so that hostile
// input is refused as unreadable quickly rather than read at length. Text
// the parser rejects is split by a plain splitter (splitCommand) so that
// deny rules still see the commands bash would run before the error.
//
// Files: analysis.go (the walk over the parsed script), wrappers.go (the
// options of the wrapper commands), split.go (the fallback splitter and
// word helpers).
package shellcmd
