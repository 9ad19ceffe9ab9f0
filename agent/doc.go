// Package agent holds subagent definitions as a program declares and
// reads them (docs/agents.md): Definition, with its isolation, mode,
// workspace, task rules and format, and Entry, a definition found with
// where it came from and whether it is in effect.
//
// It is public vocabulary: the SDK (package cadre) re-exports its names
// (cadre.Agent is agent.Definition, cadre.AgentEntry agent.Entry). The
// runtime's registry keeps a richer record of its own (sources, file
// positions, warnings, parsed fields) and converts at its edge.
package agent
