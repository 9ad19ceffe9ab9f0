package claude

import (
	"errors"
	"fmt"

	"github.com/cadre-dev/cadre/internal/agent"
)

// The Agent tool's input and the checks its schema cannot make.

// AgentInput is the Agent tool's input (S-A1), in Claude Code's names.
type AgentInput struct {
	Description     string `json:"description" jsonschema:"A short (3-5 word) description of the task"`
	Prompt          string `json:"prompt" jsonschema:"The task for the agent to perform"`
	SubagentType    string `json:"subagent_type,omitempty" jsonschema:"The type of specialized agent to use for this task"`
	Model           string `json:"model,omitempty" jsonschema:"Optional model for this agent (an alias such as sonnet, opus, haiku, or provider:model); defaults to the agent's own"`
	RunInBackground bool   `json:"run_in_background,omitempty" jsonschema:"Run the agent in the background: the call returns at once and you are notified when it finishes"`
	Name            string `json:"name,omitempty" jsonschema:"A name to address the agent by with SendMessage"`
	Isolation       string `json:"isolation,omitempty" jsonschema:"Isolation mode: worktree runs the agent in a temporary git worktree on its own branch (kept, and named in the result, when the agent changed something)"`
	Cwd             string `json:"cwd,omitempty" jsonschema:"Working directory for the agent (absolute, or relative to yours); do not combine with isolation"`
	SessionID       string `json:"session_id,omitempty" jsonschema:"Continue an earlier agent: the session_id from its result's task_metadata"`
	TimeoutSeconds  *int   `json:"timeout_seconds,omitempty" jsonschema:"Wait at most this many seconds (up to 600) for the agent, then let it go on in the background; 0 starts it in the background"`
}

// refusals checks what the schema cannot: ranges, names, and the fields
// that exclude each other. A refused call is told why.
func (in AgentInput) refusals() error {
	switch {
	case in.TimeoutSeconds != nil && (*in.TimeoutSeconds < 0 || *in.TimeoutSeconds > 600):
		return fmt.Errorf("timeout_seconds must be between 0 and 600, got %d", *in.TimeoutSeconds)
	case in.Name != "" && agent.ValidateName(in.Name) != nil:
		return fmt.Errorf("invalid name %q: %v", in.Name, agent.ValidateName(in.Name))
	case in.Isolation == "worktree" && in.Cwd != "":
		return errors.New("cwd and isolation: \"worktree\" cannot be combined: a worktree agent works in its own checkout")
	case in.Isolation == "remote" && in.Cwd != "":
		return errors.New("cwd and isolation: \"remote\" cannot be combined: a remote agent works on its own server")
	case in.Isolation != "" && in.Isolation != "worktree" && in.Isolation != "remote":
		return fmt.Errorf("unknown isolation %q: want worktree or remote", in.Isolation)
	}
	return nil
}
