// Package stop is how front ends stop runs (OpenClaw's /stop and
// "/subagents stop", Claude Code's /tasks): one run and every run it
// started, transitively, or every run of a tree — in this process at once,
// elsewhere by asking the process that runs it through its record. The
// task tools' TaskStop is the core's Stop, which this builds on.
package stop
