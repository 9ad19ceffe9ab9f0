package acp

import (
	"context"
	"encoding/json"
	"iter"

	"github.com/cadre-dev/cadre"
)

// Backend opens the conversations ACP sessions drive. The real one keeps a
// cadre Runtime per working directory; tests use a fake.
type Backend interface {
	// Open starts a conversation in req.Cwd: a new session, or with
	// req.Resume the session with that id, continued. ctx bounds the
	// conversation's life, not only the opening.
	Open(ctx context.Context, req OpenRequest) (Conversation, error)
	// History is a main session's transcript as events (assistant and user
	// messages, in order), for session/load to replay; cwd and mcpConfig
	// are those the session is about to be opened with.
	History(ctx context.Context, cwd, mcpConfig, sessionID string) ([]cadre.Event, error)
	// Images reports whether a prompt may carry images.
	Images() bool
}

// OpenRequest says which conversation to open and who answers its
// permission questions.
type OpenRequest struct {
	Cwd    string
	Resume string
	// Ask is called when a tool call of any agent of the conversation's
	// tree needs approval; parallel subagents may call it concurrently.
	Ask func(ctx context.Context, a Ask) (Answer, error)
	// MCPConfig is the MCP servers the editor gave the session, as an
	// {"mcpServers": {…}} document ("" for none).
	MCPConfig string
}

// Conversation is the part of a live cadre conversation a session uses.
type Conversation interface {
	SessionID() string
	// Send queues a user message: it runs as the next turn.
	Send(ctx context.Context, m Message) error
	// Events yields every event of the conversation's tree until it ends:
	// first the init (how it starts), then each main turn's, ending with a
	// result event.
	Events() iter.Seq2[cadre.Event, error]
	// Interrupt stops the running turn and its foreground subagents.
	Interrupt()
	// SetPermissionMode changes the mode from the next tool call on.
	SetPermissionMode(mode string) error
	// Stop ends the conversation now.
	Stop() error
}

// Message is a user message built from a prompt's content blocks.
type Message struct {
	Text   string
	Images []Image
}

// Image is a base64-encoded image of a prompt.
type Image struct {
	MediaType, Data string
}

// Ask is a permission question: which agent wants to run which call.
type Ask struct {
	Tool, Target string
	Input        json.RawMessage
	ToolUseID    string
	Reason       string
	// Agent is "main" or the subagent's type; AgentID its session id;
	// ParentToolUseID the Agent call that started it.
	Agent, AgentID, ParentToolUseID string
	// Suggestions are the rules "always allow" adds.
	Suggestions []string
	// Change is what an Edit or Write would do to its file: the editor
	// shows the whole file's diff rather than the call's strings.
	Change *cadre.FileChange
}

// Answer is the user's decision.
type Answer struct {
	Allow bool
	// Message is what the model is told of a refusal.
	Message string
	// Remember are rules to allow from now on, in this conversation.
	Remember []string
}
