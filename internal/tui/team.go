package tui

import (
	"context"
	"fmt"

	tea "charm.land/bubbletea/v2"
	"github.com/cadre-dev/cadre"
	"github.com/cadre-dev/cadre/internal/tui/screen"
	"github.com/cadre-dev/cadre/internal/tui/teamview"
)

// The team the main agent leads (issue 26): a summary on the status line,
// /team's roster and board (internal/tui/teamview), and "@name text" to
// message a teammate. The team is the runtime's (cadre.Conversation.Team),
// read again whenever an event may have changed it.

// Teams is what the team view needs of the conversation;
// *cadre.Conversation has it.
type Teams interface {
	Team(ctx context.Context) (cadre.Team, error)
}

var _ Teams = (*cadre.Conversation)(nil)

// teamEvent reports whether e may change the team: a run started or
// ended (a teammate joined, went idle, woke), or the task list changed.
func teamEvent(e cadre.Event) bool {
	if e.Type != cadre.EventSystem {
		return false
	}
	switch e.Subtype {
	case cadre.SubtypeTeamTask, cadre.SubtypeTaskStarted, cadre.SubtypeTaskNotification, cadre.SubtypeInit:
		return true
	}
	return false
}

// loadTeam reads the team again, outside Update; one read at a time, and
// a change during it reads again once it is back (teamLoaded).
func (m *Model) loadTeam() tea.Cmd {
	teams, ok := m.conv.(Teams)
	if !ok {
		return nil
	}
	if m.teamLoading {
		m.teamDirty = true
		return nil
	}
	m.teamLoading = true
	ctx := m.ctx
	return func() tea.Msg {
		t, err := teams.Team(ctx)
		return teamview.TeamMsg{Team: t, Err: err}
	}
}

// teamLoaded keeps the team read (a failed read keeps the last one: the
// team screen says why).
func (m *Model) teamLoaded(msg teamview.TeamMsg) tea.Cmd {
	m.teamLoading = false
	if msg.Err == nil {
		m.team = msg.Team
	}
	m.refresh()
	if m.teamDirty {
		m.teamDirty = false
		return m.loadTeam()
	}
	return nil
}

// teamCommand is /team: the roster and the task board, live.
func (m *Model) teamCommand(string) tea.Cmd {
	if _, ok := m.conv.(Teams); !ok {
		m.Error("/team is not available: this conversation has no team view")
		return nil
	}
	cfg := teamview.Config{Ctx: m.ctx}
	if rt := m.cfg.Runtime; rt != nil {
		cfg.Open = func(id string) tea.Cmd { return m.pushTree(rt, id) }
	}
	if st, ok := m.conv.(Steering); ok {
		cfg.Send = st.SendSubagent
	}
	return tea.Batch(screen.Push(teamview.New(cfg, m.team)), m.loadTeam())
}

// messageTeammate is "@name text" for a teammate: the text goes to it
// with SendMessage's meaning (a running teammate reads it after its
// step, an idle one wakes with it); the main agent is not involved.
func (m *Model) messageTeammate(mate cadre.Teammate, text, line string) tea.Cmd {
	if text == "" {
		m.Error(fmt.Sprintf("@%s needs a message: @%s what to do next", mate.Name, mate.Name))
		return nil
	}
	st, ok := m.steering("@" + mate.Name)
	if !ok {
		return nil
	}
	m.Info("→ " + line)
	return m.async(func(ctx context.Context) (string, error) {
		return st.SendSubagent(ctx, mate.Name, text)
	})
}
