package claude

import (
	"fmt"

	"github.com/cadre-dev/cadre/internal/subagent"
	"github.com/cadre-dev/cadre/tool"
)

// profile is the claude profile of one Service; it keeps the teams of its
// main sessions.
type profile struct {
	svc   *subagent.Service
	teams teams
}

// New is the claude profile on svc (subagent.NewProfile).
func New(svc *subagent.Service) subagent.Profile { return &profile{svc: svc} }

// Tools are Agent and the task tools; with teams on, the lead's tools for
// the main agent and the team's for a teammate.
func (s *profile) Tools(c subagent.Caller) []tool.Tool {
	if c.Teammate != "" {
		return s.teammateTools(c)
	}
	if !s.svc.MaySpawn(c) {
		return nil
	}
	if s.teamsOn(c) {
		return s.leadTools(c)
	}
	return append([]tool.Tool{s.agentTool(c)}, s.taskTools(c)...)
}

// SpawnTool is Agent.
func (s *profile) SpawnTool() string { return "Agent" }

// ShellCalls are TaskOutput (and BashOutput) and TaskStop.
func (s *profile) ShellCalls(id string) (output, stop string) {
	return fmt.Sprintf("TaskOutput with task_id %q (block: false to look without waiting; BashOutput with bash_id and a regex filter works too)", id),
		fmt.Sprintf("TaskStop with task_id %q", id)
}

// The claude profile keeps the teams the core asks about.
var _ subagent.Teams = (*profile)(nil)
