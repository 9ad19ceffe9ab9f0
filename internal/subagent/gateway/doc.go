// Package gateway is the gateway tool profile (DESIGN §12): OpenClaw's
// sessions_spawn, always non-blocking, and agents_list, with JSON replies,
// over the spawn core of internal/subagent. Which agents a requester may
// name is the core's allowAgents rule (S-P1, subagent's allow.go). It
// reaches runs only through the core's exported calls (subagent's api.go).
package gateway
