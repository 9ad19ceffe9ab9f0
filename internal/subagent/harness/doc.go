// Package harness is the harness tool profile (DESIGN §12): the Java
// harness's tool names, inputs and plain-text replies over the spawn core
// of internal/subagent — agent_spawn, agent_send and agent_list
// (harness.go), task_output, task_cancel, task_list and wait_async_results
// (tasks.go). It reaches runs only through the core's exported calls
// (subagent's api.go).
package harness
