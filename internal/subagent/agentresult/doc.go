// Package agentresult is a finished child as Claude Code's Agent tool
// result (S-L1): its final text, framed and escaped as a child's text
// always is (internal/subagent/prompt), and the continuation trailer with
// its session id and figures — what the claude profile's Agent tool and
// the Skill tool's fork (internal/subagent/forkcmd) answer with.
package agentresult
