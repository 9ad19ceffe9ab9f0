package tui

import (
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"

	tea "charm.land/bubbletea/v2"
	"github.com/cadre-dev/cadre"
	"github.com/cadre-dev/cadre/internal/mention"
)

// key takes a key press on the conversation screen.
func (m *Model) key(k tea.KeyPressMsg) tea.Cmd {
	s := k.String()
	if s != "ctrl+c" {
		m.quitArmed = false
	} else if m.quitArmed && m.cfg.Now().Sub(m.quitAt) < quitWindow {
		// Twice quits, whatever is on screen (prompts still waiting are
		// denied as the conversation stops).
		return tea.Quit
	}
	if len(m.approvals) > 0 {
		return m.approvalKey(k)
	}
	if m.shortcuts {
		// Any key closes the sheet; "?" and Esc only that.
		m.shortcuts = false
		m.refresh()
		if s == "?" || s == "esc" {
			return nil
		}
	} else if s == "?" && m.input.Value() == "" {
		m.shortcuts = true
		m.refresh()
		return nil
	}
	switch s {
	case "ctrl+c":
		m.completion = nil
		switch {
		case m.busy:
			// As in Claude Code: the first thing Ctrl+C stops is the
			// turn. A second press quits, for a turn that will not stop.
			m.interrupt()
			return m.armQuit()
		case m.input.Value() != "":
			m.quitArmed = false
			m.input.Reset()
			m.refresh()
			return nil
		}
		return m.armQuit()
	case "esc":
		if m.completion != nil {
			m.completion = nil
			m.refresh()
			return nil
		}
		if m.busy {
			m.interrupt()
		}
		return nil
	case "shift+tab":
		next := cadre.NextPermissionMode(m.mode, m.startMode)
		if err := m.conv.SetPermissionMode(next); err != nil {
			m.Error(err.Error())
			return nil
		}
		m.mode = next
		m.refresh()
		return nil
	case "ctrl+b":
		m.background()
		return nil
	case "ctrl+t":
		return m.openTree()
	case "ctrl+o":
		m.expanded = !m.expanded
		for _, it := range m.items {
			it.cache = ""
		}
		m.refresh()
		return nil
	case "pgup":
		m.view.PageUp()
		m.refresh()
		return nil
	case "pgdown":
		m.view.PageDown()
		m.refresh()
		return nil
	case "enter":
		if m.completion != nil {
			m.complete()
			return nil
		}
		return m.submit()
	case "tab":
		if m.completion != nil {
			m.complete()
		}
		return nil
	case "up":
		if m.input.Line() == 0 && m.browse(-1) {
			return nil
		}
	case "down":
		if m.input.Line() == m.input.LineCount()-1 && m.browse(+1) {
			return nil
		}
	}
	var cmd tea.Cmd
	m.input, cmd = m.input.Update(k)
	m.suggest()
	m.refresh()
	return cmd
}

// interrupt stops the turn in progress; running background subagents go
// on.
func (m *Model) interrupt() {
	m.conv.Interrupt()
	m.Info("Interrupted.")
}

// armQuit shows "press again to quit" for quitWindow: a second Ctrl+C
// within it quits.
func (m *Model) armQuit() tea.Cmd {
	m.quitArmed, m.quitAt = true, m.cfg.Now()
	m.quitSeq++
	m.refresh()
	return m.after(quitWindow, quitExpiredMsg{m.quitSeq})
}

// submit sends what was typed: a command, an "@name" run, or a message.
func (m *Model) submit() tea.Cmd {
	text := m.input.Value()
	line := strings.TrimSpace(text)
	if line == "" {
		return nil
	}
	m.input.Reset()
	m.completion = nil
	if len(m.history) == 0 || m.history[len(m.history)-1] != text {
		m.history = append(m.history, text)
	}
	m.historyAt, m.draft = len(m.history), ""
	defer m.refresh()
	if strings.HasPrefix(line, "/") {
		return m.command(line)
	}
	if strings.HasPrefix(line, "!") {
		m.runShell(line)
		return nil
	}
	name, prompt, isMention := agentMention(line)
	if mate, ok := m.team.Member(name); isMention && ok {
		// A teammate's name comes first: the team is who the user
		// works with now (/agents' types stay reachable through
		// the main agent).
		return m.messageTeammate(mate, prompt, line)
	}
	if isMention && slices.Contains(m.cfg.Agents, name) {
		if prompt == "" {
			m.Error(fmt.Sprintf("@%s needs a prompt: @%s what to do", name, name))
			return nil
		}
		m.runAgent(name, prompt, line)
		return nil
	}
	files, err := m.attachments(text)
	if err == nil && isMention && !slices.ContainsFunc(files, func(f mention.File) bool { return f.Mention == name }) {
		err = fmt.Errorf("no agent or file named %q for @ (agents: %s)", name, orNone(m.cfg.Agents))
	}
	if err != nil {
		// Nothing is sent (Up brings the text back to fix).
		m.Error(err.Error())
		return nil
	}
	m.sendFiles(text, files)
	return nil
}

// attachments are the files text mentions with "@path" in the workspace.
// A mention that names no file stays text (an e-mail address, a name); one
// that leaves the workspace, or a file that cannot be attached, is an
// error, and nothing is sent.
func (m *Model) attachments(text string) ([]mention.File, error) {
	if m.cfg.Cwd == "" {
		return nil, nil
	}
	var files []mention.File
	for _, tok := range mention.Tokens(text) {
		if slices.Contains(m.cfg.Agents, tok) {
			continue
		}
		f, err := mention.Read(m.cfg.Cwd, tok)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			continue
		case err != nil:
			return nil, err
		}
		files = append(files, f)
	}
	return files, nil
}

// agentMention splits "@name text" into the agent's name and the prompt.
func agentMention(line string) (name, prompt string, ok bool) {
	if !strings.HasPrefix(line, "@") {
		return "", "", false
	}
	name, prompt, _ = strings.Cut(line[1:], " ")
	if name == "" {
		return "", "", false
	}
	return name, strings.TrimSpace(prompt), true
}

// browse moves through the history: dir -1 older, +1 newer. It reports
// whether it moved.
func (m *Model) browse(dir int) bool {
	if len(m.history) == 0 {
		return false
	}
	if m.historyAt > len(m.history) || m.historyAt < 0 {
		m.historyAt = len(m.history)
	}
	at := m.historyAt + dir
	if at < 0 || at > len(m.history) {
		return false
	}
	if m.historyAt == len(m.history) {
		m.draft = m.input.Value()
	}
	m.historyAt = at
	if at == len(m.history) {
		m.input.SetValue(m.draft)
	} else {
		m.input.SetValue(m.history[at])
	}
	m.refresh()
	return true
}

// maxFileCompletions bounds the paths "@" offers.
const maxFileCompletions = 8

// suggest offers what completes the word being typed: a command, or after
// "@" the agents (at the start of the input) and the workspace's paths.
func (m *Model) suggest() {
	m.completion = nil
	v := m.input.Value()
	if strings.HasPrefix(v, "/") && !strings.Contains(v, "\n") {
		// A whole command typed is not completed: Enter runs it.
		for _, c := range m.commandCompletions(v) {
			if c != strings.TrimRight(v, " ") {
				m.completion = append(m.completion, c)
			}
		}
		return
	}
	start, word := lastWord(v)
	if !strings.HasPrefix(word, "@") {
		return
	}
	prefix := word[1:]
	if start == 0 {
		for _, t := range m.team.Members {
			if strings.HasPrefix(strings.ToLower(t.Name), strings.ToLower(prefix)) {
				m.completion = append(m.completion, t.Name)
			}
		}
		for _, a := range m.cfg.Agents {
			if strings.HasPrefix(strings.ToLower(a), strings.ToLower(prefix)) {
				m.completion = append(m.completion, a)
			}
		}
	}
	if m.cfg.Cwd != "" {
		for _, p := range mention.Complete(m.cfg.Cwd, prefix, maxFileCompletions) {
			if p != prefix && !slices.Contains(m.completion, p) {
				m.completion = append(m.completion, p)
			}
		}
	}
}

// lastWord is the word the input ends with and where it starts.
func lastWord(v string) (int, string) {
	i := strings.LastIndexAny(v, " \n\t") + 1
	return i, v[i:]
}

// complete puts the first completion in the input, in place of the word
// it completes; a directory stays open for the next part of its path.
func (m *Model) complete() {
	v := m.input.Value()
	switch {
	case len(m.completion) > 0 && strings.HasPrefix(m.completion[0], "/"):
		m.input.SetValue(m.completion[0] + " ")
	case len(m.completion) > 0:
		start, _ := lastWord(v)
		c := m.completion[0]
		if !strings.HasSuffix(c, "/") {
			c += " "
		}
		m.input.SetValue(v[:start] + "@" + c)
	}
	m.completion = nil
	if strings.HasSuffix(m.input.Value(), "/") {
		m.suggest()
	}
	m.refresh()
}

// background moves the running foreground subagents to the background
// (Ctrl+B).
func (m *Model) background() {
	if !m.runs.Foreground() {
		m.Info("No foreground subagent is running: Ctrl+B moves running subagents to the background.")
		return
	}
	moved, err := m.conv.Background("")
	switch {
	case err != nil:
		m.Error(err.Error())
	case moved:
		m.Info("Moved the running subagents to the background: their results come as notifications.")
	default:
		m.Info("The subagents were finishing: nothing moved to the background.")
	}
}

// orNone lists names, or says there are none.
func orNone(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}
