package tui

import (
	"fmt"
	"slices"
	"strings"

	tea "charm.land/bubbletea/v2"
	"github.com/cadre-dev/cadre"
	"github.com/cadre-dev/cadre/internal/tui/render"
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
		verdict = render.Dim.Render("withdrawn before the answer")
	case d.Allow:
		verdict = render.OK.Render("allowed")
	default:
		verdict = render.Err.Render("denied")
		if r := strings.TrimPrefix(d.Message, "The user denied this tool call"); strings.HasPrefix(r, ": ") {
			verdict += render.Dim.Render(" — " + r[2:])
		}
	}
	m.items = append(m.items, &item{kind: kindInfo, text: fmt.Sprintf("%s %s: %s", who(a.Request), render.OneLine(a.Request.Tool)+render.Hint(a.Request.Input), verdict)})
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
	return "subagent " + render.OneLine(r.Agent)
}

// approvalView is the prompt of the first request waiting.
func (m *Model) approvalView() string {
	a := m.approvals[0]
	r := a.Request
	w := m.width
	var b strings.Builder
	title := fmt.Sprintf("Permission: %s wants to use %s", who(r), render.OneLine(r.Tool))
	if run, ok := m.runs.Run(r.ParentToolUseID); ok && r.ParentToolUseID != "" {
		// Which of several runs of one agent type asks, and how deep.
		if d := render.OneLine(run.Description); d != "" {
			title += fmt.Sprintf(" (%s", d)
			if run.Depth > 1 {
				title += fmt.Sprintf(", depth %d", run.Depth)
			}
			title += ")"
		}
	}
	b.WriteString(render.Warn.Bold(true).Render(ansi.Truncate(title, w, "…")) + "\n")
	body := inputLines(r, w-2, 6)
	if c := r.Change; c != nil && c.Diff != "" {
		// An edit shows what it changes, not its strings.
		body = render.Diff(c, w-2, min(16, max(3, m.height/2)))
	}
	for _, line := range body {
		b.WriteString("  " + line + "\n")
	}
	if r.Reason != "" {
		b.WriteString(render.Dim.Render(ansi.Truncate("  why: "+render.OneLine(r.Reason), w, "…")) + "\n")
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
		b.WriteString(render.Dim.Render(fmt.Sprintf("(%d more waiting)", n)) + "\n")
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
	fields := render.Fields(r.Input)
	for _, f := range fields {
		if len(out) == n {
			out = append(out, render.Dim.Render(fmt.Sprintf("… %d more fields", len(fields)-n)))
			break
		}
		out = append(out, ansi.Truncate(render.Tool.Render(render.OneLine(f[0])+": ")+render.OneLine(f[1]), width, "…"))
	}
	if len(out) == 0 && r.Target != "" {
		out = append(out, ansi.Truncate(render.OneLine(r.Target), width, "…"))
	}
	return out
}
