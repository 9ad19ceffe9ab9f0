package subagent

import (
	"strings"

	"github.com/cadre-dev/cadre/internal/agent"
)

// allowAgents (S-P1): which agents a requester may name where a spawn tool
// lets it name another agent than its own (the gateway's sessions_spawn).

// allowAgents is the requester c's allowAgents list: its definition's own
// when it has one, else the settings'.
func (s *Service) allowAgents(c Caller) []string {
	if d, ok := s.cfg.Agents.Get(c.Agent); ok && d.AllowAgents != nil {
		return d.AllowAgents
	}
	return s.cfg.Settings.AllowAgents
}

// CrossAllowed reports whether c may name the agent as sessions_spawn's
// agentId (S-P1): its own agent and general-purpose (what no agentId
// starts) always; another agent only when allowAgents names it or holds
// "*". The task rules are checked after this, on every spawn.
func (s *Service) CrossAllowed(c Caller, name string) bool {
	if strings.EqualFold(name, c.Agent) || strings.EqualFold(name, "general-purpose") {
		return true
	}
	for _, a := range s.allowAgents(c) {
		if a == "*" || strings.EqualFold(a, name) {
			return true
		}
	}
	return false
}

// CrossListed are the agents c may name where allowAgents holds: what
// every spawn tool lists (Listed), less what allowAgents keeps c from
// naming.
func (s *Service) CrossListed(c Caller) []agent.Definition {
	var out []agent.Definition
	for _, d := range s.Listed(c) {
		if s.CrossAllowed(c, d.Name) {
			out = append(out, d)
		}
	}
	return out
}

// crossNames are CrossListed's names, sorted, for error messages.
func (s *Service) crossNames(c Caller) []string { return sortedNames(s.CrossListed(c)) }
