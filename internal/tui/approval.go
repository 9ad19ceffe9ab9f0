package tui

import (
	"fmt"
	"slices"
	"strings"

	tea "charm.land/bubbletea/v2"
	"github.com/cadre-dev/cadre"
	"github.com/charmbracelet/x/ansi"
)

// setApprovals takes the requests waiting now: the first is the prompt
// shown; a request that left the queue (answered, or its caller gave up)
// takes its reason input with it.
func (m *Model) setApprovals(p []cadre.Approval) {
	// A list read before an answer arrives after it: what was answered
	// here is not shown again.
	fresh := p[:0:0]
	for _, a := range p {
		if !m.decided[a.ID] {
			fresh = append(fresh, a)
		}
	}
	for id := range m.decided {
		if !slices.ContainsFunc(p, func(a cadre.Approval) bool { return a.ID == id }) {
			delete(m.decided, id) // gone from the queue: no stale list can name it
		}
	}
	p = fresh
	if len(p) == 0 || len(m.approvals) == 0 || p[0].ID != m.approvals[0].ID {
		m.reasoning = false
		m.reason.Reset()
	}
	m.approvals = p
	m.refresh()
}

// approvalKey answers the prompt shown: y/1 once, a/2 for the session,
// n/3 deny with a reason typed next, Esc deny now.
func (m *Model) approvalKey(k tea.KeyPressMsg) tea.Cmd {
	a := m.approvals[0]
	if m.reasoning {
		switch k.String() {
		case "enter":
			m.answer(a, cadre.PermissionDecision{Message: denial(strings.TrimSpace(m.reason.Value()))})
			return nil
		case "esc":
			m.answer(a, cadre.PermissionDecision{Message: denial("")})
			return nil
		case "ctrl+c":
			m.answer(a, cadre.PermissionDecision{Message: denial("")})
			return m.armQuit()
		}
		var cmd tea.Cmd
		m.reason, cmd = m.reason.Update(k)
		m.refresh()
		return cmd
	}
	switch k.String() {
	case "y", "1":
		m.answer(a, cadre.PermissionDecision{Allow: true})
	case "a", "2":
		d := cadre.PermissionDecision{Allow: true, Remember: a.Request.Suggestions}
		switch {
		case !m.answer(a, d):
		case len(d.Remember) > 0:
			m.Info("Allowed for this session: added the rule " + strings.Join(d.Remember, ", "))
		default:
			m.Info("No rule can allow such calls for the session: allowed this once.")
		}
	case "n", "3":
		m.reasoning = true
		m.reason.Focus()
		m.refresh()
	case "esc":
		m.answer(a, cadre.PermissionDecision{Message: denial("")})
	case "ctrl+c":
		// Quitting must stay possible with a prompt open: deny first.
		m.answer(a, cadre.PermissionDecision{Message: denial("")})
		return m.armQuit()
	}
	return nil
}

// denial is what the model is told of a denial, with the user's reason.
func denial(reason string) string {
	if reason == "" {
		return "The user denied this tool call."
	}
	return "The user denied this tool call: " + reason
}

// answer answers a and shows the next request, if any.
func (m *Model) answer(a cadre.Approval, d cadre.PermissionDecision) bool {
	m.decided[a.ID] = true
	took := m.cfg.Approvals.Answer(a.ID, d)
	var verdict string
	switch {
	case !took:
		// Its caller gave up (the turn was interrupted, the run stopped).
		verdict = styleDim.Render("withdrawn before the answer")
	case d.Allow:
		verdict = styleOK.Render("allowed")
	default:
		verdict = styleError.Render("denied")
		if r := strings.TrimPrefix(d.Message, "The user denied this tool call"); strings.HasPrefix(r, ": ") {
			verdict += styleDim.Render(" — " + r[2:])
		}
	}
	m.items = append(m.items, &item{kind: kindInfo, text: fmt.Sprintf("%s %s: %s", who(a.Request), oneLine(a.Request.Tool)+hint(a.Request.Input), verdict)})
	m.approvals = m.approvals[1:]
	m.reasoning = false
	m.reason.Reset()
	m.refresh()
	return took
}

// who names the agent asking.
func who(r cadre.PermissionRequest) string {
	if r.Agent == "" || r.Agent == "main" {
		return "main agent"
	}
	return "subagent " + oneLine(r.Agent)
}

// approvalView is the prompt of the first request waiting.
func (m *Model) approvalView() string {
	a := m.approvals[0]
	r := a.Request
	w := m.width
	var b strings.Builder
	title := fmt.Sprintf("Permission: %s wants to use %s", who(r), oneLine(r.Tool))
	if run, ok := m.runs.Run(r.ParentToolUseID); ok && r.ParentToolUseID != "" {
		// Which of several runs of one agent type asks, and how deep.
		if d := oneLine(run.Description); d != "" {
			title += fmt.Sprintf(" (%s", d)
			if run.Depth > 1 {
				title += fmt.Sprintf(", depth %d", run.Depth)
			}
			title += ")"
		}
	}
	b.WriteString(styleWarn.Bold(true).Render(ansi.Truncate(title, w, "…")) + "\n")
	body := inputLines(r, w-2, 6)
	if c := r.Change; c != nil && c.Diff != "" {
		// An edit shows what it changes, not its strings.
		body = diffLines(c, w-2, min(16, max(3, m.height/2)))
	}
	for _, line := range body {
		b.WriteString("  " + line + "\n")
	}
	if r.Reason != "" {
		b.WriteString(styleDim.Render(ansi.Truncate("  why: "+oneLine(r.Reason), w, "…")) + "\n")
	}
	session := "a/2 allow for this session"
	if len(r.Suggestions) > 0 {
		session += " (adds " + strings.Join(r.Suggestions, ", ") + ")"
	} else {
		session += " (no rule can: allows once)"
	}
	keys := "y/1 allow once · " + session + " · n/3 deny with a reason · esc deny"
	b.WriteString(ansi.Wrap(keys, w, "") + "\n")
	if n := len(m.approvals) - 1; n > 0 {
		b.WriteString(styleDim.Render(fmt.Sprintf("(%d more waiting)", n)) + "\n")
	}
	if m.reasoning {
		b.WriteString(m.reason.View() + "\n")
	}
	return strings.TrimRight(b.String(), "\n")
}

// inputLines shows a call's input: its fields one per line, each cut to
// width, at most n lines.
func inputLines(r cadre.PermissionRequest, width, n int) []string {
	var out []string
	fields := decodeFields(r.Input)
	for _, f := range fields {
		if len(out) == n {
			out = append(out, styleDim.Render(fmt.Sprintf("… %d more fields", len(fields)-n)))
			break
		}
		out = append(out, ansi.Truncate(styleTool.Render(oneLine(f[0])+": ")+oneLine(f[1]), width, "…"))
	}
	if len(out) == 0 && r.Target != "" {
		out = append(out, ansi.Truncate(oneLine(r.Target), width, "…"))
	}
	return out
}

// diffLines shows an edit's change: the file, then its unified diff
// (without the file headers), lines coloured by kind and cut to width, at
// most n diff lines. The file's text is from outside: cleaned of escape
// sequences before it is drawn.
func diffLines(c *cadre.FileChange, width, n int) []string {
	head := oneLine(c.Path)
	if c.Create {
		head += " (new file)"
	}
	out := []string{ansi.Truncate(styleTool.Render(head), width, "…")}
	var lines []string
	for _, l := range strings.Split(strings.TrimSuffix(c.Diff, "\n"), "\n") {
		if !strings.HasPrefix(l, "--- ") && !strings.HasPrefix(l, "+++ ") {
			lines = append(lines, l)
		}
	}
	for i, l := range lines {
		if i == n {
			out = append(out, styleDim.Render(fmt.Sprintf("… %d more lines of the diff", len(lines)-n)))
			break
		}
		text := ansi.Truncate(strings.TrimRight(clean(l), "\r "), width, "…")
		switch {
		case strings.HasPrefix(l, "@@"):
			text = styleDim.Render(text)
		case strings.HasPrefix(l, "+"):
			text = styleOK.Render(text)
		case strings.HasPrefix(l, "-"):
			text = styleError.Render(text)
		}
		out = append(out, text)
	}
	return out
}
