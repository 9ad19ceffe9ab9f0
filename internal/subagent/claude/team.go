package claude

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/cadre-dev/cadre/internal/event"
	"github.com/cadre-dev/cadre/internal/ids"
	"github.com/cadre-dev/cadre/internal/subagent"
	"github.com/cadre-dev/cadre/internal/subagent/prompt"

	"github.com/cadre-dev/cadre/internal/agent"
	"github.com/cadre-dev/cadre/internal/hook"
	"github.com/cadre-dev/cadre/internal/permission"
	"github.com/cadre-dev/cadre/internal/queue"
	"github.com/cadre-dev/cadre/internal/runner"
	"github.com/cadre-dev/cadre/internal/task"
	"github.com/cadre-dev/cadre/internal/tasklist"
	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/tool"
)

// Agent teams (S-A6), claude profile. With teams on, an Agent call of the
// main agent (the lead) that names the agent adds a teammate to the main
// session's one team instead of starting a child that reports once. A
// teammate is a background run whose tools are its definition's plus the
// team's (teamTool); when its turn ends it is idle — its task record ends
// as any background run's, and the lead is notified once — and a message
// wakes it through the resume path (a continued session, started for the
// lead, so that its next notification reaches the lead again).
//
// The roster lives in this process, by main session id; the task list
// lives in the store (tasklist.Store, list id = the main session's id).

// defaultTeamName is the implicit team's name when the lead names none.
const defaultTeamName = "default"

// leadName is how teammates address the lead, as in Claude Code.
const leadName = "main"

// maxIdleBlocks bounds how often TeammateIdle hooks may keep one teammate
// working in a row: a hook that always blocks must not keep it forever.
const maxIdleBlocks = 8

// teams are the teams of one Service, by main session id.
type teams struct {
	mu sync.Mutex
	by map[string]*team
}

// team is one main session's team.
type team struct {
	id   string          // the main session's id, and its task list's
	lead subagent.Caller // spawns and wakes teammates: their notifications are the lead's

	mu      sync.Mutex
	name    string
	named   bool // the lead gave the name (team_name)
	members []*member
	// noticed are the list items whose completion the lead was told of.
	noticed map[string]bool
}

// member is one teammate. id is "" until its run is launched; its name
// is taken from the moment the spawn is checked.
type member struct {
	name, agentType, id string
	call                string // the Agent call that added it
	// plan is set when the lead added it with mode "plan": it works in
	// plan mode until the lead approves its plan (team_plan.go).
	plan *planState
}

func teamTool(name string) bool {
	switch name {
	case "SendMessage", "TaskCreate", "TaskGet", "TaskList", "TaskUpdate", "ListAgents":
		return true
	}
	return false
}

// teamsOn reports whether c leads a team: teams are on, the profile is
// claude's, and c is the main agent.
func (s *profile) teamsOn(c subagent.Caller) bool {
	cfg := s.svc.Config()
	return (cfg.Teams || cfg.Coordinator) && c.Depth == 0 && !c.Fork
}

// teamOf is c's team: a teammate's, or the lead's own, made on first use
// — from the roster kept beside the task list when an earlier process led
// it (roster.go) — and forgotten when the lead's run tree ends.
func (s *profile) teamOf(c subagent.Caller) *team {
	s.teams.mu.Lock()
	tm := s.teams.by[c.RootSessionID]
	s.teams.mu.Unlock()
	if tm != nil || c.Teammate != "" || !s.teamsOn(c) {
		return tm
	}
	stored := s.storedRoster(c) // read outside the lock: it is a store round trip
	s.teams.mu.Lock()
	defer s.teams.mu.Unlock()
	if tm := s.teams.by[c.RootSessionID]; tm != nil {
		return tm
	}
	if s.teams.by == nil {
		s.teams.by = map[string]*team{}
	}
	tm = &team{id: c.RootSessionID, lead: c, name: defaultTeamName, noticed: map[string]bool{}}
	tm.restore(stored)
	s.teams.by[c.RootSessionID] = tm
	context.AfterFunc(c.Group.Context(), func() {
		s.teams.mu.Lock()
		defer s.teams.mu.Unlock()
		if s.teams.by[tm.id] == tm {
			delete(s.teams.by, tm.id)
		}
	})
	return tm
}

// teammate is the member named name of root's team.
func (s *profile) teammate(root, name string) (member, bool) {
	if name == "" {
		return member{}, false
	}
	s.teams.mu.Lock()
	tm := s.teams.by[root]
	s.teams.mu.Unlock()
	if tm == nil {
		return member{}, false
	}
	return tm.find(name)
}

// teammateNamed is the name on root's team of the teammate with this
// name and agent id, "" when id is no teammate there.
func (s *profile) teammateNamed(root, name, id string) string {
	if m, ok := s.teammate(root, name); ok && m.id == id {
		return m.name
	}
	return ""
}

// find is the member with this name or agent id, as it is now.
func (tm *team) find(to string) (member, bool) {
	tm.mu.Lock()
	defer tm.mu.Unlock()
	for _, m := range tm.members {
		if strings.EqualFold(m.name, to) || (m.id != "" && m.id == to) {
			return *m, true
		}
	}
	return member{}, false
}

func (tm *team) roster() (name string, ms []member) {
	tm.mu.Lock()
	defer tm.mu.Unlock()
	for _, m := range tm.members {
		ms = append(ms, *m)
	}
	return tm.name, ms
}

// join takes name for a new teammate, and the team's name when the lead
// gives one first.
func (tm *team) join(name, teamName string) (*member, error) {
	tm.mu.Lock()
	defer tm.mu.Unlock()
	if teamName != "" && !strings.EqualFold(teamName, tm.name) {
		if tm.named || len(tm.members) > 0 {
			return nil, fmt.Errorf("this session's team is %q: a session has one team; omit team_name or pass %q", tm.name, tm.name)
		}
		tm.name, tm.named = teamName, true
	}
	for _, m := range tm.members {
		if strings.EqualFold(m.name, name) {
			return nil, fmt.Errorf("team %q already has a teammate named %q (agent %s); message it with SendMessage, or pick another name", tm.name, m.name, cmp.Or(m.id, "starting"))
		}
	}
	m := &member{name: name}
	tm.members = append(tm.members, m)
	return m, nil
}

func (tm *team) leave(m *member) {
	tm.mu.Lock()
	defer tm.mu.Unlock()
	tm.members = slices.DeleteFunc(tm.members, func(x *member) bool { return x == m })
}

// firstCompletion reports whether the lead is yet to hear that item id
// was completed.
func (tm *team) firstCompletion(id string) bool {
	tm.mu.Lock()
	defer tm.mu.Unlock()
	if tm.noticed[id] {
		return false
	}
	tm.noticed[id] = true
	return true
}

// TeamAgentInput is the lead's Agent input: Claude Code's, with the team.
type TeamAgentInput struct {
	AgentInput
	TeamName string `json:"team_name,omitempty"`
	// Mode "plan" makes the teammate plan read-only until the lead
	// approves (team_plan.go); Claude Code's other modes are accepted and
	// ignored, as Claude Code ignores them: a teammate runs in its agent's
	// mode, capped by the lead's.
	Mode string `json:"mode,omitempty"`
}

// teamAgentSchema is the Agent schema with team_name added, and name
// described as what makes a teammate.
var teamAgentSchema = sync.OnceValue(func() json.RawMessage {
	var sch map[string]any
	if err := json.Unmarshal(schema("agent"), &sch); err != nil {
		panic("subagent: the agent schema does not decode: " + err.Error()) // caught by the tests
	}
	props := sch["properties"].(map[string]any)
	props["name"] = map[string]any{"type": "string", "description": "Add the agent as a teammate with this name: a long-lived peer on your team that shares the task list and that you and its teammates message by this name"}
	props["team_name"] = map[string]any{"type": "string", "description": "The team's name (one team per session; optional)"}
	props["mode"] = map[string]any{"type": "string", "enum": []string{"acceptEdits", "auto", "bypassPermissions", "default", "dontAsk", "plan"},
		"description": "plan: the teammate plans read-only and sends you its plan (ExitPlanMode) to approve before it changes anything. Other values are ignored: a teammate runs in its agent's permission mode, capped by yours"}
	b, err := json.Marshal(sch)
	if err != nil {
		panic("subagent: the team agent schema does not encode: " + err.Error())
	}
	return b
})

// leadTools are the main agent's tools with teams on: Agent (adding
// teammates), the team's SendMessage, TaskOutput and TaskStop for any
// background run, the team's task list — whose TaskList replaces the
// background-task list, which the per-turn context keeps (S-A5) — and
// ListAgents.
func (s *profile) leadTools(c subagent.Caller) []tool.Tool {
	plain := s.agentTool(c)
	agentTool := subagent.CallerTool(s.svc, tool.Info{
		Name: "Agent", Aliases: []string{"Task"}, InputSchema: teamAgentSchema(),
		Description: plain.Info().Description + "\n\n" + prompt.Render(teamAgentTmpl(), nil),
		Access:      tool.AccessAgent, ConcurrencySafe: true,
	}, func(ctx context.Context, env tool.Env, in TeamAgentInput) (tool.Result, error) {
		if s.svc.Config().Coordinator {
			in.AgentInput = coordinated(in.AgentInput)
		}
		if in.Name != "" {
			return s.spawnTeammate(ctx, c, env, in)
		}
		return s.runAgent(ctx, c, env, in.AgentInput)
	})
	agentTool.TargetOf = func(_ tool.Env, in TeamAgentInput) string {
		// As the plain Agent tool's: permission rules name the agent type.
		switch {
		case in.SubagentType != "":
			return in.SubagentType
		case s.svc.Config().Fork && in.SessionID == "" && in.Name == "":
			return "fork"
		}
		return "general-purpose"
	}
	var out []tool.Tool
	out = append(out, agentTool, s.teamSendTool(c))
	for _, t := range s.taskTools(c) {
		if n := t.Info().Name; n == "TaskOutput" || n == "TaskStop" {
			out = append(out, t)
		}
	}
	return append(append(out, s.listTools(c)...), s.listAgentsTool(c))
}

// teammateTools are a teammate's own tools beside its definition's: no
// spawn tool — a teammate adds no teammates and starts no agents.
func (s *profile) teammateTools(c subagent.Caller) []tool.Tool {
	out := append(append([]tool.Tool{s.teamSendTool(c)}, s.listTools(c)...), s.listAgentsTool(c))
	if m, ok := s.teammate(c.RootSessionID, c.Teammate); ok && m.plan != nil {
		out = append(out, s.exitPlanModeTool(c))
	}
	return out
}

// spawnTeammate adds a teammate: a background run of its type, with the
// team's tools, named on the team.
func (s *profile) spawnTeammate(ctx context.Context, c subagent.Caller, env tool.Env, in TeamAgentInput) (tool.Result, error) {
	if err := in.refusals(); err != nil {
		return tool.Errorf("%v", err), nil
	}
	switch {
	case strings.EqualFold(in.Name, leadName):
		return tool.Errorf("the name %q is the lead's (yours): pick another name for the teammate", leadName), nil
	case in.SessionID != "":
		return tool.Errorf("session_id continues an agent and name adds a teammate: pass one of them"), nil
	case in.TeamName != "" && agentNameError(in.TeamName) != nil:
		return tool.Errorf("invalid team_name %q: %v", in.TeamName, agentNameError(in.TeamName)), nil
	}
	if in.Mode != "" {
		if _, err := permission.ParseMode(in.Mode); err != nil {
			return tool.Errorf("invalid mode: %v", err), nil
		}
	}
	tm := s.teamOf(c)
	m, err := tm.join(in.Name, in.TeamName)
	if err != nil {
		return tool.Errorf("%v", err), nil
	}
	teamName, _ := tm.roster()
	intro := prompt.Render(teamIntroTmpl(), map[string]any{"Name": in.Name, "Team": teamName, "Lead": leadName}) + "\n\n" + in.Prompt
	if in.Mode == string(permission.ModePlan) {
		tm.mu.Lock()
		m.plan = &planState{}
		tm.mu.Unlock()
		intro = strings.TrimSpace(teamPlanIntroText) + "\n\n" + intro
	}
	out, err := s.svc.Spawn(ctx, c, subagent.SpawnRequest{
		ToolUseID: env.ToolUseID, Description: in.Description, Prompt: intro,
		SubagentType: in.SubagentType, Model: in.Model, Cwd: in.Cwd, Isolation: in.Isolation,
		Name: in.Name, Background: true, Teammate: in.Name,
	})
	if err != nil {
		tm.leave(m)
		return tool.Errorf("%v", err), nil
	}
	tm.mu.Lock()
	m.id, m.agentType, m.call = out.SessionID(), out.Def().Name, env.ToolUseID
	tm.mu.Unlock()
	s.saveRoster(ctx, tm)
	text := prompt.Render(teamSpawnedTmpl(), map[string]any{"ID": out.SessionID(), "Name": in.Name, "Team": teamName, "Type": out.Def().Name})
	for _, w := range out.Warnings() {
		text += "\n(Note: " + w + ")"
	}
	return tool.Result{
		Content: []llm.Block{llm.Text(text)},
		Meta: map[string]any{
			"status": "teammate_spawned", "teammate_id": out.SessionID(), "agent_id": out.SessionID(),
			"name": in.Name, "team_name": teamName, "agent_type": out.Def().Name, "description": in.Description,
		},
	}, nil
}

// agentNameError checks a team name as an agent name is checked: it is
// written into prompts and hook inputs.
func agentNameError(name string) error {
	if name == "*" {
		return errors.New("\"*\" means every teammate")
	}
	return agent.ValidateName(name)
}

// teamSendTool is SendMessage on a team: to a teammate's name, "main" for
// the lead, or "*" for every teammate but the sender. The lead may still
// name its other background agents.
func (s *profile) teamSendTool(c subagent.Caller) tool.Tool {
	return subagent.CallerTool(s.svc, tool.Info{Name: "SendMessage", InputSchema: schema("send_message"), Description: prompt.Render(teamSendMessageTmpl(), nil), Access: tool.AccessAgent},
		func(ctx context.Context, env tool.Env, in SendMessageInput) (tool.Result, error) {
			return s.teamSend(ctx, c, env, in)
		})
}

func (s *profile) teamSend(ctx context.Context, c subagent.Caller, env tool.Env, in SendMessageInput) (tool.Result, error) {
	if strings.TrimSpace(in.Message) == "" {
		return tool.Errorf("message is empty"), nil
	}
	if strings.TrimSpace(in.Summary) == "" {
		return tool.Errorf("summary is required: a 5-10 word preview of the message"), nil
	}
	tm := s.teamOf(c)
	if tm == nil {
		return tool.Errorf("%v", tasklist.ErrNoTeam), nil
	}
	from := cmp.Or(c.Teammate, leadName)
	to := strings.TrimSpace(in.To)
	text := prompt.Render(teamMessageTmpl(), map[string]any{"From": from, "Summary": prompt.OneLine(in.Summary), "Message": in.Message})
	teamName, ms := tm.roster()
	planAnswer, isPlanAnswer := asPlanResponse(in.Message)
	switch {
	case isPlanAnswer && c.Teammate != "":
		return tool.Errorf("%v", errNotLead), nil
	case isPlanAnswer && to == "*":
		return tool.Errorf("a plan_approval_response answers one teammate: send it to the teammate by name"), nil
	case to == "*":
		var sent, failed []string
		for _, m := range ms {
			if strings.EqualFold(m.name, from) || m.id == "" {
				continue
			}
			if _, err := s.deliver(ctx, tm, m, in.Summary, text); err != nil {
				failed = append(failed, fmt.Sprintf("%s (%v)", m.name, err))
				continue
			}
			sent = append(sent, m.name)
		}
		if len(sent) == 0 && len(failed) == 0 {
			return tool.Errorf("there is nobody on team %q to broadcast to yet", teamName), nil
		}
		out := fmt.Sprintf("Message broadcast to %d teammate(s): %s.", len(sent), strings.Join(sent, ", "))
		if len(failed) > 0 {
			out += " Not delivered to: " + strings.Join(failed, "; ") + "."
		}
		return tool.Text(out), nil
	case strings.EqualFold(to, leadName) || to == tm.lead.AgentID && to != "":
		if c.Teammate == "" {
			return tool.Errorf("you are %q, the lead: message a teammate by its name (ListAgents lists them)", leadName), nil
		}
		s.svc.Config().Queue.Push(queue.Entry{Priority: queue.Later, Mode: queue.ModeMessage, Target: tm.lead.AgentID, Message: llm.UserText(text)})
		return tool.Text(fmt.Sprintf("Message sent to %s (the lead).", leadName)), nil
	}
	m, found := tm.find(to)
	switch {
	case !found && c.Teammate == "":
		// The lead's other background agents are reached as before.
		return s.sendMessage(ctx, c, env, in)
	case !found:
		return tool.Errorf("team %q has no teammate %q: ListAgents lists whom you can message (%q is the lead)", teamName, to, leadName), nil
	case strings.EqualFold(m.name, from):
		return tool.Errorf("%q is you: message a teammate or %q", m.name, leadName), nil
	case m.id == "":
		return tool.Errorf("teammate %q is still being started: try again in a moment", m.name), nil
	}
	if isPlanAnswer {
		answer, err := answerPlan(c, m, planAnswer)
		if err != nil {
			return tool.Errorf("%v", err), nil
		}
		s.saveRoster(ctx, tm)
		text = prompt.Render(teamMessageTmpl(), map[string]any{"From": from, "Summary": prompt.OneLine(in.Summary), "Message": answer})
	}
	woke, err := s.deliver(ctx, tm, m, in.Summary, text)
	if err != nil {
		return tool.Errorf("cannot reach teammate %q: %v", m.name, err), nil
	}
	if woke {
		return tool.Text(fmt.Sprintf("Teammate %q was idle; your message woke it.", m.name)), nil
	}
	return tool.Text(fmt.Sprintf("Message queued for teammate %q; it will read it after its current step.", m.name)), nil
}

// deliver gives a teammate a message: queued while it runs, else it
// wakes it — a continued run started for the lead, whose notification
// reaches the lead. Two senders waking it at once both reach it: the
// one that loses the wake queues its message instead.
func (s *profile) deliver(ctx context.Context, tm *team, m member, summary, text string) (woke bool, err error) {
	for range 3 {
		_, queued, err := s.svc.Send(ctx, m.id, text)
		if err != nil {
			return false, err
		}
		if queued {
			return false, nil
		}
		_, err = s.svc.Spawn(ctx, tm.lead, subagent.SpawnRequest{
			ToolUseID: m.call, AgentCall: m.call, Description: prompt.OneLine(summary), Prompt: text,
			SessionID: m.id, Name: m.name, Background: true, Teammate: m.name,
		})
		if err == nil {
			return true, nil
		}
		if s.svc.Running(m.id) == nil {
			return false, err
		}
		// Another sender woke it first: queue the message now.
	}
	return false, fmt.Errorf("teammate %q is being woken by another message; try again", m.name)
}

// listTools are the team's task-list tools for c: the lead's as "main",
// a teammate's under its name.
func (s *profile) listTools(c subagent.Caller) []tool.Tool {
	who := func(ctx context.Context, _ tool.Env) (tasklist.Caller, error) {
		tm := s.teamOf(c)
		switch {
		case tm != nil:
			return tasklist.Caller{List: tm.id, Agent: cmp.Or(c.Teammate, leadName)}, nil
		case c.Teammate != "":
			// A teammate another node took (store.dispatch any): its
			// roster is in the lead's process, its list in the store,
			// under the lead's session id as everywhere.
			return tasklist.Caller{List: c.RootSessionID, Agent: c.Teammate}, nil
		}
		return tasklist.Caller{}, tasklist.ErrNoTeam
	}
	return tasklist.Tools(tasklist.Options{
		Store: s.svc.Config().TaskLists, Who: who, Now: s.svc.Config().Now,
		Created: func(ctx context.Context, _ tasklist.Caller, it tasklist.Item) error {
			return s.teamHook(ctx, c, hook.TaskCreated, &it)
		},
		Completing: func(ctx context.Context, _ tasklist.Caller, it tasklist.Item) error {
			return s.teamHook(ctx, c, hook.TaskCompleted, &it)
		},
		Changed: func(ctx context.Context, lc tasklist.Caller, ch tasklist.Change) {
			s.publishTeamTask(c, lc, ch)
			s.taskChanged(c, lc, ch)
		},
	})
}

// publishTeamTask puts a change of the team's list on the bus (stream-json's
// team_task_changed), a teammate's tagged with the Agent call that added
// it, as its other lines are.
func (s *profile) publishTeamTask(c subagent.Caller, lc tasklist.Caller, ch tasklist.Change) {
	tm := s.teamOf(c)
	if s.svc.Config().Bus == nil || tm == nil {
		return
	}
	name, _ := tm.roster()
	change, fields := "updated", ch.Fields
	switch {
	case ch.Deleted:
		change = "deleted"
	case slices.Equal(fields, []string{"created"}):
		change, fields = "created", nil
	}
	it := ch.Item
	ev := event.Event{
		Type: event.TypeSystem, Subtype: event.SubtypeTeamTask, SessionID: c.RootSessionID, Time: s.svc.Config().Now(), UUID: ids.New(),
		TeamTask: &event.TeamTask{
			Team: name, By: lc.Agent, Change: change, Fields: fields, From: string(ch.From), To: string(ch.To), Unblocked: ch.Unblocked,
			// blocked_by is a list in every line, empty too.
			Task: event.TeamTaskRef{ID: it.ID, Subject: it.Subject, Status: string(it.Status), Owner: it.Owner, BlockedBy: append([]string{}, it.BlockedBy...)},
		},
	}
	if m, ok := tm.find(c.Teammate); ok && c.Teammate != "" {
		ev.ParentToolUseID, ev.AgentID, ev.AgentType = m.call, m.id, m.agentType
	}
	s.svc.Config().Bus.Publish(ev)
}

// taskChanged tells the lead, once per item, that a teammate completed it.
func (s *profile) taskChanged(c subagent.Caller, lc tasklist.Caller, ch tasklist.Change) {
	if ch.To != tasklist.Completed || lc.Agent == leadName {
		return
	}
	tm := s.teamOf(c)
	if tm == nil || !tm.firstCompletion(ch.Item.ID) {
		return
	}
	var unblocked []string
	for _, id := range ch.Unblocked {
		unblocked = append(unblocked, "#"+id)
	}
	text := prompt.Render(teamTaskDoneTmpl(), map[string]any{"Name": lc.Agent, "ID": ch.Item.ID, "Subject": ch.Item.Subject, "Unblocked": strings.Join(unblocked, ", ")})
	s.svc.Config().Queue.Push(queue.Entry{Priority: queue.Later, Mode: queue.ModeMessage, Target: tm.lead.AgentID, Message: llm.UserText(text)})
}

// teamHook runs the runtime's hooks of a team event for c; a hook that
// blocks (exit 2) refuses what the event guards, its reason saying why.
func (s *profile) teamHook(ctx context.Context, c subagent.Caller, ev hook.Event, it *tasklist.Item) error {
	if !s.svc.Config().Hooks.Has(ev) {
		return nil
	}
	res := s.svc.Config().Hooks.Run(ctx, s.teamHookInput(c, ev, it))
	if res.Blocked {
		return fmt.Errorf("a %s hook refused it: %s", ev, cmp.Or(strings.TrimSpace(res.Reason), "no reason given"))
	}
	return nil
}

func (s *profile) teamHookInput(c subagent.Caller, ev hook.Event, it *tasklist.Item) hook.Input {
	name := ""
	if tm := s.teamOf(c); tm != nil {
		name, _ = tm.roster()
	}
	in := hook.Input{
		Event: ev, SessionID: c.RootSessionID, TranscriptPath: c.RootTranscriptPath,
		Cwd: cmp.Or(c.Cwd, s.svc.Config().MainCwd), PermissionMode: string(c.Current().Mode),
		TeammateName: cmp.Or(c.Teammate, leadName), TeamName: name,
	}
	if c.Depth > 0 {
		in.AgentID, in.AgentType = c.AgentID, c.Agent
	}
	if it != nil {
		in.TaskID, in.TaskSubject, in.TaskDescription = it.ID, it.Subject, it.Description
	}
	return in
}

// Idle runs the TeammateIdle hooks of teammate c whose turn has ended
// (subagent.Teams): a hook that blocks keeps it working, its reason the
// teammate's next prompt. blocked counts the blocks in a row, which are
// bounded.
func (s *profile) Idle(ctx context.Context, c subagent.Caller, hooks *runner.Hooks, res *runner.Result, blocked int) string {
	if c.Teammate == "" || hooks == nil || !hooks.Engine.Has(hook.TeammateIdle) || res.Err != nil || ctx.Err() != nil {
		return ""
	}
	if blocked >= maxIdleBlocks {
		s.svc.Logger().WarnContext(ctx, "TeammateIdle hooks kept a teammate working too often in a row; it goes idle", "teammate", c.Teammate, "agent_id", c.AgentID, "blocks", blocked)
		return ""
	}
	in := s.teamHookInput(c, hook.TeammateIdle, nil)
	in.AgentTranscriptPath = hooks.AgentTranscriptPath
	out := hooks.Engine.Run(ctx, in)
	if !out.Blocked {
		return ""
	}
	return cmp.Or(strings.TrimSpace(out.Reason), "A TeammateIdle hook asked you to keep working.")
}

// ListAgentsInput is ListAgents' input, in Claude Code 2.1.330's shape.
type ListAgentsInput struct {
	Channel string `json:"channel,omitempty"`
	Q       string `json:"q,omitempty"`
	Cursor  string `json:"cursor,omitempty"`
}

// ListedAgent is one row of ListAgents' result.
type ListedAgent struct {
	Name      string `json:"name"`
	AgentType string `json:"agent_type,omitempty"`
	AgentID   string `json:"agent_id,omitempty"`
	Status    string `json:"status"`
}

func (s *profile) listAgentsTool(c subagent.Caller) tool.Tool {
	return subagent.CallerTool(s.svc, tool.Info{Name: "ListAgents", InputSchema: schema("list_agents"), Description: prompt.Render(listAgentsTmpl(), nil), Access: tool.AccessRead, ConcurrencySafe: true},
		func(ctx context.Context, _ tool.Env, in ListAgentsInput) (tool.Result, error) {
			return s.listAgents(ctx, c, in)
		})
}

func (s *profile) listAgents(ctx context.Context, c subagent.Caller, in ListAgentsInput) (tool.Result, error) {
	tm := s.teamOf(c)
	if tm == nil {
		return tool.Errorf("%v", tasklist.ErrNoTeam), nil
	}
	teamName, ms := tm.roster()
	if in.Channel != "" && !strings.EqualFold(in.Channel, teamName) {
		return tool.Errorf("there is no channel %q: this session has one team, %q", in.Channel, teamName), nil
	}
	var rows []ListedAgent
	if c.Teammate != "" {
		rows = append(rows, ListedAgent{Name: leadName, AgentType: "lead", Status: "lead"})
	}
	for _, m := range ms {
		if strings.EqualFold(m.name, c.Teammate) {
			continue
		}
		words, _ := s.memberState(ctx, m)
		rows = append(rows, ListedAgent{Name: m.name, AgentType: m.agentType, AgentID: m.id, Status: words})
	}
	q := strings.ToLower(strings.TrimSpace(in.Q))
	rows = slices.DeleteFunc(rows, func(r ListedAgent) bool {
		return q != "" && !strings.Contains(strings.ToLower(r.Name), q) && !strings.Contains(strings.ToLower(r.AgentType), q)
	})
	var b strings.Builder
	fmt.Fprintf(&b, "Team %q: whom you can message with SendMessage (\"*\" reaches every teammate).\n", teamName)
	for _, r := range rows {
		fmt.Fprintf(&b, "- %s", r.Name)
		if r.AgentType != "" && r.AgentType != "lead" {
			fmt.Fprintf(&b, " (%s)", r.AgentType)
		}
		fmt.Fprintf(&b, ": %s", r.Status)
		if r.AgentID != "" {
			fmt.Fprintf(&b, ", agent %s", r.AgentID)
		}
		b.WriteString("\n")
	}
	if len(rows) == 0 {
		b.WriteString("(nobody yet)\n")
	}
	if rows == nil {
		rows = []ListedAgent{}
	}
	return tool.Result{Content: []llm.Block{llm.Text(strings.TrimSpace(b.String()))}, Meta: map[string]any{"team_name": teamName, "agents": rows}}, nil
}

// memberState is a teammate's state twice over: the words ListAgents gives
// a model (running while its run goes on, idle once its turn ended, else
// how its run ended) and the one of three a roster shows front ends
// (subagent.TeamMember.State).
func (s *profile) memberState(ctx context.Context, m member) (words, state string) {
	if m.id == "" {
		return "starting", "working"
	}
	if s.svc.Running(m.id) != nil {
		return "running", "working"
	}
	rec, err := s.svc.Config().Tasks.GetTask(ctx, m.id)
	if err != nil {
		return "unknown", "ended"
	}
	switch rec.Status {
	case task.StatusCompleted:
		return "idle", "idle"
	case task.StatusKilled:
		return "stopped", "ended"
	case task.StatusFailed, task.StatusTimeout:
		return "idle (its last turn " + string(rec.Status) + ")", "idle"
	case task.StatusPending:
		return "waiting for a place to run", "working"
	}
	return "running", "working"
}

// IdleNotice is a teammate's idle notification, which replaces a
// background run's (subagent.Teams): ok is false when t is no teammate.
func (s *profile) IdleNotice(t subagent.RunInfo, status task.Status, result string) (string, bool) {
	m, ok := s.teammate(t.RootSessionID, t.Name)
	if !ok || (m.id != "" && m.id != t.ID) {
		return "", false
	}
	return prompt.Render(teamIdleTmpl(), map[string]any{
		"ID": t.ID, "ToolUseID": t.ToolUseID, "OutputFile": t.OutputFile, "Status": status, "Name": m.name,
		"Idle": status == task.StatusCompleted, "Result": result,
	}), true
}

// TeamName is the name of root's team, "" when it has none.
func (s *profile) TeamName(root string) string {
	s.teams.mu.Lock()
	tm := s.teams.by[root]
	s.teams.mu.Unlock()
	if tm == nil {
		return ""
	}
	name, _ := tm.roster()
	return name
}

// Teammate is the name on the team of c's main session of the teammate
// called name whose agent id is id (subagent.Teams), its team read back
// first if an earlier process led it.
func (s *profile) Teammate(c subagent.Caller, name, id string) string {
	s.teamOf(c)
	return s.teammateNamed(c.RootSessionID, name, id)
}

// TeamTool reports whether a teammate keeps the tool whatever its
// definition lists: the team's tools come with being on the team.
func (s *profile) TeamTool(name string) bool { return teamTool(name) }
