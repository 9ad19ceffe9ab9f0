// Package version says which cadre a binary is: the version a release
// build stamped into it, else what the go command recorded in its build
// info (the module version, the commit, whether the tree was modified).
// `cadre --version` prints it; the protocols cadre speaks (stream-json's
// init line, ACP, A2A, MCP) name its version.
package version
