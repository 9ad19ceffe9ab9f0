package subagent

import "github.com/cadre-dev/cadre/internal/agent"

// CrossAllowed reports whether c may name the agent as sessions_spawn's
// agentId (S-P1; routing.Router.CrossAllowed): its own agent and
// general-purpose always, another agent only when allowAgents names it.
func (s *Service) CrossAllowed(c Caller, name string) bool {
	return s.router().CrossAllowed(whom(c), name)
}

// CrossListed are the agents c may name where allowAgents holds
// (routing.Router.CrossListed).
func (s *Service) CrossListed(c Caller) []agent.Definition {
	return s.router().CrossListed(whom(c))
}
