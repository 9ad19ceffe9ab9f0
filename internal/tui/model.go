package tui

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textarea"
	"charm.land/bubbles/v2/viewport"
	tea "charm.land/bubbletea/v2"
	"github.com/cadre-dev/cadre"
	"github.com/cadre-dev/cadre/internal/mention"
	"github.com/cadre-dev/cadre/internal/tui/screen"
	"github.com/cadre-dev/cadre/internal/tui/teamview"
	"github.com/cadre-dev/cadre/llm"
)

// Conversation is what the TUI needs of a live conversation;
// *cadre.Conversation is one, tests use a fake.
type Conversation interface {
	Send(ctx context.Context, m cadre.Message) error
	RunAgent(ctx context.Context, agent, prompt string) error
	Shell(ctx context.Context, command string) error
	Interrupt()
	SetPermissionMode(m cadre.PermissionMode) error
	Background(toolUseID string) (bool, error)
	Stats() cadre.ConversationStats
}

// Config is what a Model starts with.
type Config struct {
	// Conversation is the live conversation the model drives.
	Conversation Conversation
	// Approvals is the queue of permission requests the model answers
	// (the conversation's PermissionFunc is its Ask); nil when nobody
	// asks.
	Approvals *cadre.Approvals
	// Model and Mode are shown until the conversation's init event says
	// them; Mode also anchors the Shift+Tab cycle.
	Model string
	Mode  cadre.PermissionMode
	// Agents are the names "@" completes (cadre.Runtime.MentionableAgents).
	Agents []string
	// Now is the clock for elapsed times; default time.Now.
	Now func() time.Time
	// History is the transcript of the session resumed (-c, -r), shown
	// before anything new.
	History []cadre.TranscriptEntry
	// Sent is a message already sent to the conversation (the command
	// line's prompt): shown as the first message, its turn running.
	Sent string
	// Reopen, if set, asks for another conversation in the same TUI
	// (/clear, /resume): the caller of Run opens it once the program
	// has quit, and runs the TUI again over it.
	Reopen func(cadre.OpenRequest)
	// Cwd is the workspace, named by the welcome line (and the root of
	// "@path" mentions).
	Cwd string
	// Runtime serves the slash commands (commands.go); nil leaves out
	// those that need it.
	Runtime Runtime
}

// Model is the TUI's Bubble Tea model.
type Model struct {
	cfg  Config
	ctx  context.Context
	conv Conversation

	width, height int
	input         textarea.Model
	view          viewport.Model
	screens       []screen.Screen

	// Conversation state.
	items  []*item
	calls  map[string]*item // tool items by tool-use id
	stream *item            // the main agent's reply still streaming
	runs   *cadre.Activity
	// announced are the background runs whose end the transcript told.
	announced map[string]bool
	queued    []string // messages sent while a turn runs, oldest first
	// shell is the "!command" whose turn runs now: its result is the
	// turn's.
	shell    *item
	busy     bool // a turn of the main agent is going on
	thinking bool // its reply streams a thinking block now
	model    string
	mode     cadre.PermissionMode
	// startMode is the mode the conversation opened in: Shift+Tab's
	// cycle keeps it.
	startMode cadre.PermissionMode
	// initSeen is set by the conversation's first init event.
	initSeen bool
	stats    cadre.ConversationStats
	// retry is the main agent's model call waiting to be retried, since
	// retryAt: the status line counts down to it.
	retry    *cadre.RetryInfo
	retryAt  time.Time
	commands []string // the project's slash commands (init event)
	// team is the team the main agent leads as last read (team.go);
	// teamLoading says a read is out, teamDirty that another is due.
	team                   cadre.Team
	teamLoading, teamDirty bool

	// Input state.
	history    []string
	historyAt  int    // index into history while browsing; len(history) when not
	draft      string // the unsent text kept while browsing history
	completion []string
	shortcuts  bool // the shortcut sheet is open ("?" on an empty prompt)

	// Approval state: the requests waiting, the first shown.
	approvals []cadre.Approval
	decided   map[uint64]bool // answered here, maybe still in a list sent before
	reasoning bool            // typing a reason for a denial
	reason    textarea.Model

	expanded bool // tool results unfolded (Ctrl+O)
	// rows are the transcript rows of the run lines, by call, as last
	// rendered (rowBase is the row a group of them starts at); panel is
	// the background panel drawn.
	rows    map[string]int
	rowBase int
	panel   []string
	// quitArmed is set by a first Ctrl+C at quitAt; quitSeq names the
	// expiry tick of the latest, so an older tick cannot end a newer one.
	quitArmed bool
	quitAt    time.Time
	quitSeq   int
	// after returns the command that delivers msg in d (tea.Tick; tests
	// deliver it when they choose).
	after   func(d time.Duration, msg tea.Msg) tea.Cmd
	ticking bool // a tick is scheduled
	frame   int
	endErr  error // why its events ended, if they failed
}

// maxInputLines bounds the input's height; longer text scrolls inside it.
const maxInputLines = 8

// New returns a model over cfg.Conversation. ctx bounds the calls it
// makes to the conversation.
func New(ctx context.Context, cfg Config) *Model {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Mode == "" {
		cfg.Mode = cadre.PermissionDefault
	}
	in := textarea.New()
	in.Prompt = "› "
	in.Placeholder = "Message cadre · Enter sends · Ctrl+J new line · /help"
	in.ShowLineNumbers = false
	in.DynamicHeight = true
	in.MinHeight = 1
	in.MaxHeight = maxInputLines
	in.KeyMap.InsertNewline = key.NewBinding(key.WithKeys("shift+enter", "alt+enter", "ctrl+j"))
	// Up and Down browse the history on the first and last line (input.go).
	// A blinking cursor would wake the program twice a second: an idle
	// screen must cost nothing.
	in.SetStyles(static(in.Styles()))
	in.Focus()
	reason := textarea.New()
	reason.Prompt = "reason › "
	reason.Placeholder = "optional: tell the model why (Enter denies)"
	reason.ShowLineNumbers = false
	reason.SetHeight(1)
	reason.SetStyles(static(reason.Styles()))
	m := &Model{
		cfg: cfg, ctx: ctx, conv: cfg.Conversation,
		input: in, reason: reason, view: viewport.New(),
		calls: map[string]*item{}, runs: cadre.NewActivity(), announced: map[string]bool{}, decided: map[uint64]bool{},
		model: cfg.Model, mode: cfg.Mode, startMode: cfg.Mode,
	}
	m.after = func(d time.Duration, msg tea.Msg) tea.Cmd {
		// Unlike tea.Tick, it ends with the program's context: Bubble
		// Tea does not wait for its commands' goroutines.
		return func() tea.Msg {
			t := time.NewTimer(d)
			defer t.Stop()
			select {
			case <-t.C:
				return msg
			case <-m.ctx.Done():
				return nil
			}
		}
	}
	m.items = append(m.items, &item{kind: kindWelcome})
	m.replay(cfg.History)
	if cfg.Sent != "" {
		m.busy = true
		m.items = append(m.items, &item{kind: kindUser, text: cfg.Sent})
	}
	m.resize(80, 24)
	return m
}

// Conversation is the conversation the model drives (for commands).
func (m *Model) Conversation() Conversation { return m.conv }

// Init starts the input's cursor; nothing ticks until something runs.
func (m *Model) Init() tea.Cmd { return nil }

// EventMsg carries one event of the conversation into the program.
type EventMsg struct{ Event cadre.Event }

// EndedMsg says the conversation's events ended: the conversation is over.
type EndedMsg struct{ Err error }

// ApprovalsMsg carries the permission requests waiting now.
type ApprovalsMsg struct{ Pending []cadre.Approval }

// tickMsg advances spinners and elapsed times while something runs.
type tickMsg struct{}

// quitExpiredMsg ends the "press again to quit" state armed as seq.
type quitExpiredMsg struct{ seq int }

// quitWindow is how long a first Ctrl+C waits for the second: a stray
// press minutes later must not quit.
const quitWindow = 2 * time.Second

// tickEvery is the spinner's and elapsed times' pace while something runs.
const tickEvery = 150 * time.Millisecond

// Update takes a message.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	var cmds []tea.Cmd
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.resize(msg.Width, msg.Height)
	case screen.PushMsg:
		m.screens = append(m.screens, msg.Screen)
		return m, nil
	case screen.PopMsg:
		if n := len(m.screens); n > 0 {
			m.screens = m.screens[:n-1]
		}
		m.refresh()
		return m, nil
	case EventMsg:
		m.event(msg.Event)
		if teamEvent(msg.Event) {
			cmds = append(cmds, m.loadTeam())
		}
	case teamview.TeamMsg:
		cmds = append(cmds, m.teamLoaded(msg))
	case EndedMsg:
		m.endErr = msg.Err
		return m, tea.Quit
	case ApprovalsMsg:
		m.setApprovals(msg.Pending)
	case commandMsg:
		cmds = append(cmds, m.commandDone(msg))
	case quitExpiredMsg:
		if m.quitArmed && msg.seq == m.quitSeq {
			m.quitArmed = false
			m.refresh()
		}
	case tickMsg:
		m.ticking = false
		m.frame++
		m.stats = m.conv.Stats()
		m.refresh()
	}
	if n := len(m.screens); n > 0 {
		// The screen on top gets everything; keys only it.
		s, cmd := m.screens[n-1].Update(msg)
		m.screens[n-1] = s
		cmds = append(cmds, cmd)
		if _, isKey := msg.(tea.KeyPressMsg); isKey {
			return m, tea.Batch(append(cmds, m.tick())...)
		}
		if _, isPaste := msg.(tea.PasteMsg); isPaste {
			return m, tea.Batch(cmds...)
		}
	} else {
		switch msg := msg.(type) {
		case tea.KeyPressMsg:
			cmds = append(cmds, m.key(msg))
		case tea.MouseWheelMsg:
			m.wheel(msg.Mouse())
		case tea.PasteMsg:
			var cmd tea.Cmd
			if m.reasoning {
				m.reason, cmd = m.reason.Update(msg)
			} else {
				m.input, cmd = m.input.Update(msg)
			}
			cmds = append(cmds, cmd)
		}
	}
	cmds = append(cmds, m.tick())
	return m, tea.Batch(cmds...)
}

// wheelLines is how far one notch of the mouse wheel scrolls.
const wheelLines = 3

// wheel scrolls the transcript with the mouse wheel.
func (m *Model) wheel(e tea.Mouse) {
	switch e.Button {
	case tea.MouseWheelUp:
		m.view.ScrollUp(wheelLines)
	case tea.MouseWheelDown:
		m.view.ScrollDown(wheelLines)
	default:
		return
	}
	m.refresh()
}

// running reports whether anything moves on screen: a turn, a subagent.
func (m *Model) running() bool {
	return m.busy || m.runs.Running() > 0
}

// idle reports whether nothing is going on or waiting: no turn, no
// subagent, no message queued, no background run.
func (m *Model) idle() bool {
	return !m.running() && len(m.queued) == 0 && m.conv.Stats().BackgroundTasks == 0
}

// tick schedules the next tick if something runs and none is scheduled:
// an idle screen does no work at all.
func (m *Model) tick() tea.Cmd {
	if m.ticking || !m.running() {
		return nil
	}
	m.ticking = true
	return tea.Tick(tickEvery, func(time.Time) tea.Msg { return tickMsg{} })
}

// resize lays the screen out for a window of w×h.
func (m *Model) resize(w, h int) {
	if w < 20 {
		w = 20
	}
	if h < 8 {
		h = 8
	}
	m.width, m.height = w, h
	m.input.SetWidth(w)
	m.reason.SetWidth(w)
	for _, it := range m.items {
		it.cache = ""
	}
	m.refresh()
}

// refresh re-renders the transcript into the viewport, following the
// bottom if the view was there.
func (m *Model) refresh() {
	follow := m.view.AtBottom() || m.view.TotalLineCount() == 0
	m.view.SetWidth(m.width)
	m.view.SetContent(m.transcript())
	// The background panel shows the runs whose lines are out of view,
	// and its height is taken from the view: twice settles it, and the
	// panel drawn is the one the height was computed with.
	for range 2 {
		m.panel = m.backgroundPanel()
		m.view.SetHeight(max(1, m.height-m.chromeHeight()))
		if follow {
			m.view.GotoBottom()
		}
	}
}

// Info adds a line of information to the transcript (commands' output).
func (m *Model) Info(text string) {
	m.add(&item{kind: kindInfo, text: text})
}

// Error adds an error line to the transcript.
func (m *Model) Error(text string) {
	m.add(&item{kind: kindError, text: text})
}

func (m *Model) add(it *item) {
	m.items = append(m.items, it)
	m.refresh()
}

// Width and Height are the window's size (for commands laying out text).
func (m *Model) Width() int  { return m.width }
func (m *Model) Height() int { return m.height }

// send queues text as a message of the conversation; while a turn runs it
// shows as queued until its own turn starts.
func (m *Model) send(text string) { m.sendFiles(text, nil) }

// sendFiles sends text with the files it mentions attached.
func (m *Model) sendFiles(text string, files []mention.File) {
	msg := cadre.Message{Text: text}
	for _, f := range files {
		msg.Blocks = append(msg.Blocks, llm.Text(mention.Block(f)))
	}
	if err := m.conv.Send(m.ctx, msg); err != nil {
		m.Error(err.Error())
		return
	}
	defer func() {
		for _, f := range files {
			m.Info(fmt.Sprintf("  ⎿ attached %s (%d lines)", f.Path, f.Lines))
		}
	}()
	if m.busy {
		m.queued = append(m.queued, text)
		m.refresh()
		return
	}
	m.busy = true
	m.add(&item{kind: kindUser, text: text})
}

// runShell runs "!command" through the conversation (Conversation.Shell:
// the Bash tool's permission checks and sandbox), between turns.
func (m *Model) runShell(line string) {
	command := strings.TrimSpace(strings.TrimPrefix(line, "!"))
	switch {
	case command == "":
		m.Error("! needs a command: !git status")
		return
	case m.busy:
		m.Error("A turn is running: run a ! command when it ends (Esc stops it).")
		return
	}
	if err := m.conv.Shell(m.ctx, command); err != nil {
		m.Error(err.Error())
		return
	}
	input, _ := json.Marshal(map[string]string{"command": command})
	m.busy = true
	m.items = append(m.items, &item{kind: kindUser, text: "!" + command})
	m.shell = &item{kind: kindTool, id: "shell", tool: "Bash", input: input}
	m.add(m.shell)
}

// runAgent runs "@name prompt".
func (m *Model) runAgent(name, prompt, line string) {
	if err := m.conv.RunAgent(m.ctx, name, prompt); err != nil {
		m.Error(err.Error())
		return
	}
	if m.busy {
		m.queued = append(m.queued, line)
		m.refresh()
		return
	}
	m.busy = true
	m.add(&item{kind: kindUser, text: line})
}

// turnEnded moves on to the next queued message, whose turn starts now
// (a conversation answers messages in the order sent, before waiting
// notifications).
func (m *Model) turnEnded() {
	m.busy, m.thinking = false, false
	m.stream = nil
	if len(m.queued) > 0 {
		next := m.queued[0]
		m.queued = m.queued[1:]
		m.busy = true
		m.items = append(m.items, &item{kind: kindUser, text: next})
	}
}

// static is s with a cursor that does not blink.
func static(s textarea.Styles) textarea.Styles {
	s.Cursor.Blink = false
	return s
}

// closeScreens ends what the screens still open started (a tree's watch)
// and waits for it: Run calls it once the program has ended.
func (m *Model) closeScreens() {
	for _, s := range m.screens {
		if c, ok := s.(screen.Closer); ok {
			c.Close()
		}
	}
}
