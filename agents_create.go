package cadre

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/cadre-dev/cadre/internal/agent"
)

// NewAgent is the short form of a subagent definition that CreateAgent
// writes: what the TUI's /agents create asks for.
type NewAgent struct {
	Name, Description string
	// Tools is the allowlist; nil means every tool.
	Tools []string
	// Model is "" (the default chain), "inherit", an alias or
	// provider:model.
	Model  string
	Prompt string
}

// CreateAgent writes a as the project's agent file .cadre/agents/NAME.md
// in the working directory, checked exactly as loading checks it (a file
// that would not load is not written) and never over an existing file,
// then loads the definitions again so that it is in effect at once, for
// new runs of every conversation. It returns the new file's entry.
func (r *Runtime) CreateAgent(ctx context.Context, a NewAgent) (AgentEntry, error) {
	if err := ctx.Err(); err != nil {
		return AgentEntry{}, err
	}
	r.agentMu.Lock()
	defer r.agentMu.Unlock()
	dir := filepath.Join(r.app.Cwd, ".cadre", "agents")
	_, path, err := agent.Create(dir, r.app.Cwd, agent.NewFile{Name: a.Name, Description: a.Description, Tools: a.Tools, Model: a.Model, Prompt: a.Prompt})
	if err != nil {
		return AgentEntry{}, fmt.Errorf("create agent: %w", err)
	}
	r.app.Agents.Replace(agent.Load(r.app.AgentLoad))
	for _, e := range r.Agents() {
		if e.Path == path {
			return e, nil
		}
	}
	// Written, checked, yet not loaded: a definition dir being changed
	// under us. Say so rather than pretend.
	return AgentEntry{}, fmt.Errorf("create agent: %s was written but did not load", path)
}
