// Package app is cadre's composition root: New builds the parts a Runtime
// runs on — the settings, the sandbox, the record store and its cluster
// node, the owner lock, the tools, the hooks, the commands and skills, the
// agent registry, the MCP client, the subagent service — in the order each
// needs the others, and pushes each one's undo on one stack as it is built.
// A failure part-way unwinds that stack, and so does Close: nothing is
// cleaned up twice, or in two places.
//
// The root package (the SDK) turns Options into a Config, calls New, and
// keeps only what SDK users see. Files:
//
//   - app.go: Config, App, New, Close, the start-up work (settle)
//   - closers.go: the close stack
//   - store.go: the record store, the cluster node, dispatch
//   - models.go: provider configuration and model resolution
//   - mcp.go: the runtime's MCP servers and those of agent definitions
//   - sandbox.go: the sandbox's walls from the settings
//   - tools.go: the base tool pool, the main agent's definition (--agent)
package app
