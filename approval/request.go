package approval

import (
	"context"
	"encoding/json"
)

// Request is a tool call that needs approval.
type Request struct {
	Tool      string
	Target    string // the path or command the call touches
	Input     json.RawMessage
	SessionID string // the asking agent's session
	ToolUseID string
	Reason    string // why the call needs approval
	// Agent is "main" or the asking subagent's type; AgentID its session
	// id ("" for main); ParentToolUseID the Agent call that started it
	// ("" for main). A request from any depth names its own agent.
	Agent, AgentID, ParentToolUseID string
	// Suggestions are the allow rules that Decision.Remember
	// would add to approve such calls for the rest of the conversation, in
	// permission-rule syntax: "Bash(npm test:*)", "Edit(//abs/dir/**)",
	// "WebFetch". None when no rule could approve the call (an ask rule
	// asks every time; a change of .git, .cadre or .claude always asks).
	Suggestions []string
	// ExactRules are allow rules that approve this very call and no wider
	// one (a Bash call: each simple command as written), what an approval
	// "for this project" saves; none when no rule could.
	ExactRules []string
	// Edits says the call changes files, so accepting edits for the
	// session (acceptEdits) would approve it.
	Edits bool
	// Change is what the call would do to a file, for the tools that can
	// tell before they run (Edit, Write); nil for other calls.
	Change *FileChange
}

// FileChange is what an edit would do to one file, as an approval shows
// it.
type FileChange struct {
	Path string
	// Create: the file does not exist yet.
	Create bool
	// Old and New are the file's text before and after ("" before a
	// create), and Diff the change as a unified diff ("--- /dev/null" for
	// a create). Diff is empty when the change is too large to diff; Old
	// and New are empty then too, and when together they pass 1 MiB.
	Old, New, Diff string
}

// RuleDestination says where the rules of a RuleUpdate are kept.
type RuleDestination string

// The destinations of the Agent SDK's PermissionUpdate.
const (
	// RulesSession: this conversation's tree, as Decision.Remember.
	RulesSession RuleDestination = "session"
	// RulesLocal: the project's untracked .cadre/settings.local.json.
	RulesLocal RuleDestination = "localSettings"
	// RulesUser: the user's $CADRE_HOME/settings.json.
	RulesUser RuleDestination = "userSettings"
	// RulesProject: the project's shared .cadre/settings.json, which cadre
	// never writes: it is the repository's, and a rule there would reach
	// everyone who clones it.
	RulesProject RuleDestination = "projectSettings"
)

// RuleUpdate adds permission rules (allow, ask or deny) to a destination.
type RuleUpdate struct {
	Destination RuleDestination
	Behavior    string
	Rules       []string
}

// Decision answers a Request.
type Decision struct {
	Allow bool
	// UpdatedInput, on an allow, is the input the call runs with instead
	// of the model's. It must pass the tool's schema and is checked again
	// against the deny rules (a deny rule still wins); the transcript
	// records it.
	UpdatedInput json.RawMessage
	// Message, on a denial, is what the model is told.
	Message string
	// Interrupt, on a denial, also ends the asking agent's turn after the
	// denial is recorded (the SDK's interrupt: true).
	Interrupt bool
	// Remember, on an allow, adds allow rules (Request's
	// Suggestions, or others) for the rest of this conversation's tree:
	// its main agent and every subagent, never another conversation. They
	// count as allow rules: deny and ask rules, plan mode and protected
	// paths still hold.
	Remember []string
	// Save, on an allow, adds rules to settings files before the call
	// runs, creating the file if needed; saved allow rules also count for
	// the rest of this conversation, as Remember's. A destination cadre
	// will not write (RulesProject), a local settings file that git tracks
	// or that is a link, or a file that cannot be written fails the call
	// with an error saying which.
	Save []RuleUpdate
}

// Func decides a tool call that needs approval. It is called
// concurrently: parallel subagents, and parallel calls of one agent, ask
// at once. It should return when ctx ends.
type Func func(ctx context.Context, req Request) (Decision, error)
