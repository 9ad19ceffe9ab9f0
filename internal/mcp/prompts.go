package mcp

import (
	"context"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// IsPromptCommand reports whether a slash command's name is an MCP
// prompt's: mcp__<server>__<prompt>.
func IsPromptCommand(name string) bool {
	rest, ok := strings.CutPrefix(name, "mcp__")
	return ok && strings.Contains(rest, "__")
}

// Prompt expands the slash command /mcp__<server>__<prompt> args: the
// words of args fill the prompt's arguments in order (the last one takes
// the rest), and the prompt's messages, as text, are what the user sends.
// Names are matched as ToolName makes them.
func (m *Manager) Prompt(ctx context.Context, command, args string) (string, error) {
	var known []string
	for _, c := range m.snapshot() {
		cs, err := c.live()
		if err != nil || !c.status().Prompts {
			continue
		}
		for p, err := range cs.Prompts(ctx, nil) {
			if err != nil {
				return "", fmt.Errorf("list prompts of MCP server %q: %w", c.srv.Name, err)
			}
			name := ToolName(c.srv.Name, p.Name)
			if !strings.EqualFold(name, command) {
				known = append(known, "/"+name)
				continue
			}
			res, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: p.Name, Arguments: promptArgs(p.Arguments, args)})
			if err != nil {
				return "", fmt.Errorf("/%s: %w", command, err)
			}
			return promptText(res), nil
		}
	}
	if len(known) == 0 {
		return "", fmt.Errorf("unknown command /%s: no connected MCP server offers prompts", command)
	}
	return "", fmt.Errorf("unknown command /%s (MCP prompts: %s)", command, strings.Join(known, ", "))
}

func promptArgs(params []*mcp.PromptArgument, args string) map[string]string {
	words := strings.Fields(args)
	out := map[string]string{}
	for i, p := range params {
		if i >= len(words) {
			break
		}
		if i == len(params)-1 {
			out[p.Name] = strings.Join(words[i:], " ")
			break
		}
		out[p.Name] = words[i]
	}
	return out
}

func promptText(r *mcp.GetPromptResult) string {
	var parts []string
	for _, msg := range r.Messages {
		if msg == nil || msg.Content == nil {
			continue
		}
		if b := block(msg.Content); b.Text != "" {
			parts = append(parts, b.Text)
		}
	}
	return strings.Join(parts, "\n\n")
}
