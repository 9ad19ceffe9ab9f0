package subagent

// The tools' inputs as a model writes them, for the tests that call the
// profiles' tools through Service.Tools. The profiles' own types live in
// their packages (claude, opencode, harness, gateway), which an internal
// test cannot import; these carry the same JSON names, and every call
// checks its input against the real tool's schema (call, invokeTool), so a
// field one of them lacks, or names wrongly, fails the test that uses it.

type AgentInput struct {
	Description     string `json:"description"`
	Prompt          string `json:"prompt"`
	SubagentType    string `json:"subagent_type,omitempty"`
	Model           string `json:"model,omitempty"`
	RunInBackground bool   `json:"run_in_background,omitempty"`
	Name            string `json:"name,omitempty"`
	Isolation       string `json:"isolation,omitempty"`
	Cwd             string `json:"cwd,omitempty"`
	SessionID       string `json:"session_id,omitempty"`
	TimeoutSeconds  *int   `json:"timeout_seconds,omitempty"`
}

type TeamAgentInput struct {
	AgentInput
	TeamName string `json:"team_name,omitempty"`
}

type TaskInput struct {
	Description  string `json:"description"`
	Prompt       string `json:"prompt"`
	SubagentType string `json:"subagent_type"`
	TaskID       string `json:"task_id,omitempty"`
	SessionID    string `json:"session_id,omitempty"`
	Command      string `json:"command,omitempty"`
}

type TaskOutputInput struct {
	TaskID  string `json:"task_id,omitempty"`
	Block   *bool  `json:"block,omitempty"`
	Timeout *int   `json:"timeout,omitempty"`
	BashID  string `json:"bash_id,omitempty"`
	Filter  string `json:"filter,omitempty"`
}

type TaskStopInput struct {
	TaskID  string `json:"task_id,omitempty"`
	ShellID string `json:"shell_id,omitempty"`
}

type TaskListInput struct {
	StatusFilter string `json:"status_filter,omitempty"`
}

type SendMessageInput struct {
	To      string `json:"to"`
	Message string `json:"message"`
	Summary string `json:"summary"`
}

type ListAgentsInput struct {
	Channel string `json:"channel,omitempty"`
	Q       string `json:"q,omitempty"`
	Cursor  string `json:"cursor,omitempty"`
}

type AgentSpawnInput struct {
	AgentID        string `json:"agent_id"`
	Task           string `json:"task,omitempty"`
	Label          string `json:"label,omitempty"`
	TimeoutSeconds *int   `json:"timeout_seconds,omitempty"`
}

type AgentSendInput struct {
	AgentKey       string `json:"agent_key,omitempty"`
	Label          string `json:"label,omitempty"`
	Message        string `json:"message"`
	TimeoutSeconds *int   `json:"timeout_seconds,omitempty"`
}

type HarnessTaskOutputInput struct {
	TaskID  string `json:"task_id"`
	Block   *bool  `json:"block,omitempty"`
	Timeout *int   `json:"timeout,omitempty"`
}

type HarnessTaskCancelInput struct {
	TaskID string `json:"task_id"`
}

type WaitAsyncResultsInput struct {
	TaskIDs        []string `json:"task_ids"`
	WaitAll        *bool    `json:"wait_all,omitempty"`
	TimeoutSeconds *int     `json:"timeout_seconds,omitempty"`
}

type SessionsSpawnInput struct {
	Task              string `json:"task"`
	Label             string `json:"label,omitempty"`
	AgentID           string `json:"agentId,omitempty"`
	Model             string `json:"model,omitempty"`
	Thinking          string `json:"thinking,omitempty"`
	RunTimeoutSeconds *int   `json:"runTimeoutSeconds,omitempty"`
	Cleanup           string `json:"cleanup,omitempty"`
}

type AgentsListInput struct{}
