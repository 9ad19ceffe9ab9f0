package control

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/cadre-dev/cadre"
	"github.com/cadre-dev/cadre/llm"
)

// open starts the live session: the runtime's Conversation, which runs one
// turn per message in order, queues what arrives during a turn and
// interleaves background notifications.
func open(ctx context.Context, rt *cadre.Runtime, rc RunConfig) (Conversation, error) {
	c, err := rt.Open(ctx, cadre.OpenRequest{
		Resume: rc.Resume, Continue: rc.Continue,
		SessionID: rc.SessionID, Fork: rc.Fork, NoPersist: rc.NoPersist,
	})
	if err != nil {
		return nil, err
	}
	return conversation{Conversation: c, rt: rt}, nil
}

// conversation puts the runtime's Conversation behind the protocol's
// interface, with its runtime for the requests about tasks, MCP servers
// and commands (Controls).
type conversation struct {
	*cadre.Conversation
	rt *cadre.Runtime
}

func (c conversation) StopTask(ctx context.Context, taskID string) error {
	_, err := c.rt.StopTask(ctx, taskID)
	return err
}

func (c conversation) Background(toolUseID string) bool {
	moved, err := c.Conversation.Background(toolUseID)
	return err == nil && (moved || toolUseID == "")
}

func (c conversation) MCPStatus(ctx context.Context) []cadre.MCPServer { return c.rt.MCPServers(ctx) }

func (c conversation) ReloadCommands() ([]cadre.SlashCommand, []string) { return c.rt.ReloadCommands() }

func (c conversation) Send(ctx context.Context, in Input) error {
	m, err := message(in)
	if err != nil {
		return err
	}
	return c.Conversation.Send(ctx, m)
}

// message is a program's user message in the runtime's terms: text as
// text, a list of blocks as blocks (text and images).
func message(in Input) (cadre.Message, error) {
	if in.Blocks == nil {
		return cadre.Message{Text: in.Text, UUID: in.UUID}, nil
	}
	m := cadre.Message{UUID: in.UUID}
	for i, raw := range in.Blocks {
		var b llm.Block
		if err := json.Unmarshal(raw, &b); err != nil {
			return cadre.Message{}, fmt.Errorf("user message content block %d: %w", i, err)
		}
		m.Blocks = append(m.Blocks, b)
	}
	return m, nil
}

func (c conversation) SetPermissionMode(mode string) error {
	return c.Conversation.SetPermissionMode(cadre.PermissionMode(mode))
}
