package config

import (
	"fmt"
	"strings"

	"github.com/cadre-dev/cadre/internal/excerpt"
	"github.com/cadre-dev/cadre/internal/permission"
)

// Tool surface profiles (DESIGN.md §12): the names under which the model
// sees the subagent tools.
const (
	SurfaceClaude   = "claude"
	SurfaceOpenCode = "opencode"
	SurfaceHarness  = "harness"
	SurfaceGateway  = "gateway"
)

// Surfaces lists the valid surface profiles, the default first. All are
// accepted in settings; whether the runtime can serve one is its call.
func Surfaces() []string {
	return []string{SurfaceClaude, SurfaceOpenCode, SurfaceHarness, SurfaceGateway}
}

// MaxSpawnDepthCap is the hard cap on subagents.maxSpawnDepth.
const MaxSpawnDepthCap = 3

// Subagents is the settings' "subagents" block: defaults and limits for
// the subagent machinery.
type Subagents struct {
	// MaxSpawnDepth is how deep spawns may nest: 1 (also what 0 means)
	// lets the main agent spawn and keeps subagents leaves, up to
	// MaxSpawnDepthCap. Use Depth for the effective value.
	MaxSpawnDepth int `json:"maxSpawnDepth"`
	// Surface is the tool surface profile; "" means claude. Use Profile.
	Surface string `json:"surface"`
	// Model is the default model of subagents whose call and definition
	// name none.
	Model string `json:"model"`
	// Tools is the subagent tool policy, applied to every named
	// subagent's pool after its definition's own filters.
	Tools SubagentTools `json:"tools"`
	// MaxConcurrent is the size of the subagent lane: background runs
	// beyond it wait, pending. 0 means the default, 8.
	MaxConcurrent int `json:"maxConcurrent"`
	// MaxChildrenPerAgent bounds the active children of one session; 0
	// means no limit.
	MaxChildrenPerAgent int `json:"maxChildrenPerAgent"`
	// MaxForegroundConcurrent bounds the foreground subagent runs in
	// flight in one process, per spawn depth; further foreground calls
	// wait their turn. 0 means the default, 16. Use ForegroundLimit.
	MaxForegroundConcurrent int `json:"maxForegroundConcurrent"`
	// RunTimeoutSeconds aborts a subagent run after this long (status
	// timeout); 0 means no limit.
	RunTimeoutSeconds int `json:"runTimeoutSeconds"`
	// ArchiveAfterMinutes archives finished child sessions after this
	// long; 0 means the default, 60.
	ArchiveAfterMinutes int `json:"archiveAfterMinutes"`
	// Cleanup is "keep" (the default) or "delete": archive a background
	// child right after its notification.
	Cleanup string `json:"cleanup"`
	// Announce is "raw" (the default: the child's final text is the
	// result) or "summarize" (one more turn asks the child for a summary).
	Announce string `json:"announce"`
	// Fork turns on the Agent-tool fork: an Agent call without
	// subagent_type forks the caller (CADRE_FORK_SUBAGENT=1 does too).
	Fork bool `json:"fork"`
	// Teams turns agent teams on (claude profile only): an Agent call
	// with a name adds a teammate that shares the session's task list
	// (CADRE_AGENT_TEAMS=1 does too).
	Teams bool `json:"teams"`
	// Coordinator runs the main agent in coordinator mode: it only
	// orchestrates (CADRE_COORDINATOR_MODE=1 and --coordinator too).
	Coordinator bool `json:"coordinator"`
	// AllowAgents are the agents a requester may name as sessions_spawn's
	// agentId besides its own (S-P1, OpenClaw's allowAgents), "*" meaning
	// any; an agent definition's own allowAgents replaces it for that
	// agent. Unset, only the requester's own agent (and general-purpose,
	// sessions_spawn's default) may be named.
	AllowAgents []string `json:"allowAgents"`
}

// Lane is the effective subagent lane size.
func (s Subagents) Lane() int {
	if s.MaxConcurrent <= 0 {
		return 8
	}
	return s.MaxConcurrent
}

// ForegroundLimit is the effective maxForegroundConcurrent.
func (s Subagents) ForegroundLimit() int {
	if s.MaxForegroundConcurrent <= 0 {
		return 16
	}
	return s.MaxForegroundConcurrent
}

// ArchiveAfter is the effective archive delay in minutes.
func (s Subagents) ArchiveAfter() int {
	if s.ArchiveAfterMinutes <= 0 {
		return 60
	}
	return s.ArchiveAfterMinutes
}

// SubagentTools filters subagents' tool pools by tool name. A name may
// use "*" ("mcp__github__*").
type SubagentTools struct {
	// Allow, when set, is the only tools subagents may have.
	Allow []string `json:"allow"`
	// Deny takes tools away, winning over Allow.
	Deny []string `json:"deny"`
}

// Depth is the effective maximum spawn depth: MaxSpawnDepth, or 1 when
// unset.
func (s Subagents) Depth() int {
	if s.MaxSpawnDepth <= 0 {
		return 1
	}
	return s.MaxSpawnDepth
}

// Profile is the effective surface profile: Surface, or claude when unset.
func (s Subagents) Profile() string {
	if s.Surface == "" {
		return SurfaceClaude
	}
	return s.Surface
}

// Allows reports whether the policy lets subagents have the named tool:
// no deny entry matches it and, when there is an allow list, an allow
// entry does.
func (t SubagentTools) Allows(name string) bool {
	for _, d := range t.Deny {
		if permission.WildcardMatch(d, name) {
			return false
		}
	}
	if len(t.Allow) == 0 {
		return true
	}
	for _, a := range t.Allow {
		if permission.WildcardMatch(a, name) {
			return true
		}
	}
	return false
}

// validate checks one layer's subagents block and spells the surface
// canonically; bad names the key path of a problem.
func (s *Subagents) validate(bad func(key, format string, args ...any) error) error {
	switch {
	case s.MaxSpawnDepth < 0:
		return bad("subagents.maxSpawnDepth", "want 1 to %d (0 means 1: subagents are leaves), got %d", MaxSpawnDepthCap, s.MaxSpawnDepth)
	case s.MaxSpawnDepth > MaxSpawnDepthCap:
		return bad("subagents.maxSpawnDepth", "want 1 to %d, got %d: the hard cap is %d", MaxSpawnDepthCap, s.MaxSpawnDepth, MaxSpawnDepthCap)
	}
	for _, n := range []struct {
		key string
		v   int
	}{{"maxConcurrent", s.MaxConcurrent}, {"maxChildrenPerAgent", s.MaxChildrenPerAgent}, {"runTimeoutSeconds", s.RunTimeoutSeconds}, {"archiveAfterMinutes", s.ArchiveAfterMinutes}} {
		if n.v < 0 {
			return bad("subagents."+n.key, "want 0 or more, got %d", n.v)
		}
	}
	if s.MaxForegroundConcurrent < 0 {
		return bad("subagents.maxForegroundConcurrent", "want 0 or more (0 means the default, 16), got %d", s.MaxForegroundConcurrent)
	}
	switch s.Cleanup {
	case "", "keep", "delete":
	default:
		return bad("subagents.cleanup", "want keep or delete, got %s", excerpt.Quote(s.Cleanup))
	}
	switch s.Announce {
	case "", "raw", "summarize":
	default:
		return bad("subagents.announce", "want raw or summarize, got %s", excerpt.Quote(s.Announce))
	}
	if s.Surface != "" {
		canon := ""
		for _, p := range Surfaces() {
			if strings.EqualFold(strings.TrimSpace(s.Surface), p) {
				canon = p
			}
		}
		if canon == "" {
			return bad("subagents.surface", "want one of %s, got %s", strings.Join(Surfaces(), ", "), excerpt.Quote(s.Surface))
		}
		s.Surface = canon
	}
	for _, l := range []struct {
		key   string
		names []string
	}{{"allow", s.Tools.Allow}, {"deny", s.Tools.Deny}} {
		for i, n := range l.names {
			t := strings.TrimSpace(n)
			if t == "" {
				return bad(fmt.Sprintf("subagents.tools.%s[%d]", l.key, i), "empty tool name")
			}
			if strings.ContainsAny(t, "(), ") {
				return bad(fmt.Sprintf("subagents.tools.%s[%d]", l.key, i),
					"want a tool name such as \"Bash\" or \"mcp__github__*\", got %s (specifiers belong in permissions rules)", excerpt.Quote(n))
			}
			l.names[i] = t
		}
	}
	return nil
}
