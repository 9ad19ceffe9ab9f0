package subagent

import (
	"context"
	"fmt"
	"strings"

	"github.com/cadre-dev/cadre/internal/subagent/routing"
	"github.com/cadre-dev/cadre/tool"
)

// Message gives message to agent to of c's tree — its name, given at spawn
// time, or its agent id — as the SendMessage tools do: queued while it
// runs (it reads it after its current step), else it is resumed in the
// background, from its transcript, with the message. The result is the
// tool's: what happened, or why it could not (IsError); the error is a
// failure to queue.
func (s *Service) Message(ctx context.Context, c Caller, toolUseID, to, message, summary string) (tool.Result, error) {
	if strings.TrimSpace(message) == "" {
		return tool.Errorf("message is empty"), nil
	}
	if strings.TrimSpace(summary) == "" {
		return tool.Errorf("summary is required: a 5-10 word preview of the message"), nil
	}
	id, err := routing.Addressee(ctx, s.cfg.Tasks, c.RootSessionID, to)
	if err == nil {
		err = s.InTree(ctx, c, id)
	}
	if err == nil {
		err = s.RefuseShell(ctx, id)
	}
	if err != nil {
		return tool.Errorf("%v", err), nil
	}
	if _, queued, err := s.send(ctx, id, message); err != nil {
		return tool.Result{}, err
	} else if queued {
		return tool.Text(fmt.Sprintf("Message queued for agent %s; it will read it after its current step.", id)), nil
	}
	// Stopped or evicted: resume it from its transcript, in the background.
	name, call := "", ""
	if rec, err := s.cfg.Tasks.GetTask(ctx, id); err == nil {
		name, call = rec.Name, rec.ToolUseID
	}
	req := SpawnRequest{ToolUseID: toolUseID, AgentCall: call, Description: summary, Prompt: message, SessionID: id, Name: name, Background: true}
	// A teammate woken from outside its team's tools (a front end's
	// message) stays a teammate.
	if tm := s.teams(); tm != nil {
		req.Teammate = tm.Teammate(c, name, id)
	}
	out, err := s.Spawn(ctx, c, req)
	if err != nil {
		return tool.Errorf("cannot reach agent %q: %v", to, err), nil
	}
	where := out.task.OutputFile
	if where == "" {
		where = "TaskOutput " + id
	}
	return tool.Text(fmt.Sprintf("Agent %s was not running; it has been resumed in the background with your message and its earlier context. You will be notified when it finishes (output: %s).", id, where)), nil
}
