package subagent

import (
	"errors"

	"github.com/cadre-dev/cadre/internal/builtin"
	"github.com/cadre-dev/cadre/internal/fork"
	"github.com/cadre-dev/cadre/internal/spawnpolicy"
	"github.com/cadre-dev/cadre/tool"
)

// The Agent-tool fork (S-F1): with the gate on, an Agent call without
// subagent_type starts a fork — a background child that continues the
// caller's own conversation. What it is started with (its history, its
// first message, its tools' definitions) is internal/fork's; spawning it is
// the core's.

// errForkInFork is the recursion guard's refusal.
var errForkInFork = fork.ErrInFork

// inFork reports whether turn's conversation is a fork's (fork.InFork).
func inFork(turn *tool.Turn) bool { return fork.InFork(turn) }

// Forking reports whether an Agent call naming subagentType, and
// continuing sessionID, forks the caller, and refuses a fork inside a
// fork (ForkRefusal).
func (s *Service) Forking(c Caller, subagentType, sessionID string, turn *tool.Turn) (bool, error) {
	if !s.cfg.Fork || subagentType != "" || sessionID != "" {
		return false, nil
	}
	if err := ForkRefusal(c, turn); err != nil {
		return false, err
	}
	if turn == nil || turn.Request == nil {
		return false, errors.New("cannot fork: the call did not come from a model turn")
	}
	return true, nil
}

// ForkRefusal refuses a spawn by a fork — known by its run source (the
// caller is a fork) or, as a backstop, by the directive tag in the
// conversation the call came from: nil when c is no fork.
func ForkRefusal(c Caller, turn *tool.Turn) error {
	if c.Fork || inFork(turn) {
		return errForkInFork
	}
	return nil
}

// forkTools is the fork's pool: the parent's exact tool definitions — the
// shared prefix needs them byte for byte — but the agent tools (Agent,
// SendMessage, TaskOutput, TaskStop, TaskList) run as the fork's own, so a
// fork never acts on the parent's tasks, and may not spawn. With only (a
// fork command's allowed-tools) the other tools are still shown, for the
// prefix, but refuse to run.
func (s *Service) forkTools(turn *tool.Turn, c Caller, only []string) (*tool.Set, error) {
	own := map[string]tool.Tool{}
	for _, t := range s.Tools(c) {
		own[t.Info().Name] = t
	}
	var tools []tool.Tool
	for _, t := range turn.Tools.Tools() {
		info := t.Info()
		switch {
		case only != nil && !spawnpolicy.Named(only, info.Name, info.Aliases):
			tools = append(tools, fork.Refusing(info, fork.NotAllowed(info.Name, only)))
		case info.Name == "Bash":
			// The same Bash, its background commands the fork's own.
			tools = append(tools, builtin.BindShells(t, s.Shells(c)))
		case info.Access != tool.AccessAgent:
			tools = append(tools, t)
		default:
			tools = append(tools, fork.Rerouted(info, own[info.Name]))
		}
	}
	return tool.NewSet(tools...)
}
