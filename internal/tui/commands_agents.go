package tui

import (
	"fmt"
	"strings"

	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"
	"github.com/cadre-dev/cadre"
	"github.com/cadre-dev/cadre/internal/tui/render"
	"github.com/cadre-dev/cadre/internal/tui/screen"
	"github.com/charmbracelet/x/ansi"
)

// /agents: the definitions with their source and validity, one in full,
// and the short form that creates one (Runtime.CreateAgent).

func (m *Model) agentsCommand(args string) tea.Cmd {
	rt, ok := m.runtime("/agents")
	if !ok {
		return nil
	}
	verb, rest, _ := strings.Cut(args, " ")
	rest = strings.TrimSpace(rest)
	switch verb {
	case "", "list":
		m.Info(m.agentTable(rt.Agents()))
		return nil
	case "show":
		if rest == "" {
			m.Error("/agents show needs an agent's name")
			return nil
		}
		return m.showAgent(rt, rest)
	case "create", "new":
		return screen.Push(newAgentForm(m, rt, rest))
	}
	// "/agents NAME" shows it too.
	return m.showAgent(rt, args)
}

// agentTable lists every definition found: the one in effect for each
// name, what it shadows, and the invalid ones with their first error.
func (m *Model) agentTable(entries []cadre.AgentEntry) string {
	rows := [][]string{{"NAME", "STATUS", "SOURCE", "DESCRIPTION"}}
	for _, e := range entries {
		status := "active"
		desc := render.OneLine(e.Agent.Description)
		switch {
		case e.Err != nil:
			status, desc = "invalid", "error: "+render.OneLine(e.Err.Error())
		case !e.Active:
			status, desc = "shadowed", "overridden by "+e.ShadowedBy
		case len(e.Warnings) > 0:
			status = fmt.Sprintf("active, %d warning%s", len(e.Warnings), render.Plural(len(e.Warnings)))
		}
		where := string(e.Source)
		if e.Path != "" {
			where += " " + m.relative(e.Path)
		}
		rows = append(rows, []string{e.Agent.Name, status, where, desc})
	}
	return render.Table(rows, m.width) + "\n" + render.Dim.Render("/agents show NAME prints one · /agents create writes a new one")
}

// relative is path from the working directory when it lies inside it.
func (m *Model) relative(path string) string {
	if m.cfg.Runtime == nil {
		return path
	}
	if rest, ok := strings.CutPrefix(path, m.cfg.Runtime.Cwd()+"/"); ok {
		return rest
	}
	return path
}

// showAgent prints the definition in effect for name, or the entry that
// failed to load.
func (m *Model) showAgent(rt Runtime, name string) tea.Cmd {
	var lines []string
	for _, e := range rt.Agents() {
		if !strings.EqualFold(e.Agent.Name, name) || (e.Err == nil && !e.Active) {
			continue
		}
		a := e.Agent
		where := string(e.Source)
		if e.Path != "" {
			where += fmt.Sprintf(" %s:%d", e.Path, e.Line)
		}
		lines = append(lines, fmt.Sprintf("Agent %s · %s", a.Name, where))
		if e.Err != nil {
			lines = append(lines, "  invalid: "+e.Err.Error())
			continue
		}
		field := func(k, v string) {
			if v != "" {
				lines = append(lines, fmt.Sprintf("  %-16s %s", k, v))
			}
		}
		field("description", render.OneLine(a.Description))
		tools := "all"
		if a.Tools != nil {
			tools = strings.Join(a.Tools, ", ")
			if len(a.Tools) == 0 {
				tools = "none"
			}
		}
		field("tools", tools)
		field("disallowed", strings.Join(a.DisallowedTools, ", "))
		field("model", a.Model)
		field("permission mode", string(a.PermissionMode))
		if a.Background {
			field("background", "yes")
		}
		field("isolation", string(a.Isolation))
		if a.MaxTurns > 0 {
			field("max turns", fmt.Sprint(a.MaxTurns))
		}
		if a.Hidden {
			field("hidden", "yes (not offered to @ and the Agent tool's list)")
		}
		for _, w := range e.Warnings {
			lines = append(lines, "  warning: "+render.OneLine(w))
		}
		if p := strings.TrimSpace(a.Prompt); p != "" {
			lines = append(lines, "  prompt:")
			for _, l := range strings.Split(p, "\n") {
				lines = append(lines, "    "+l)
			}
		}
	}
	if len(lines) == 0 {
		var names []string
		for _, e := range rt.Agents() {
			if e.Active {
				names = append(names, e.Agent.Name)
			}
		}
		m.Error(fmt.Sprintf("no agent named %q (these exist: %s)", name, orNone(names)))
		return nil
	}
	m.Info(strings.Join(lines, "\n"))
	return nil
}

// agentForm is /agents create: the short form of a definition, one field
// a line; Tab and Shift+Tab move, Enter on the last field (or Ctrl+S)
// writes it, Esc goes back without writing.
type agentForm struct {
	m      *Model
	rt     Runtime
	fields []textinput.Model
	focus  int
	err    string
}

// agentFormFields are the form's labels and placeholders.
var agentFormFields = [][2]string{
	{"name", "reviewer (letters, digits, - and _)"},
	{"description", "when the main agent should use it"},
	{"tools", "Read, Grep, Bash (empty: every tool)"},
	{"model", "sonnet, haiku, inherit… (empty: the default)"},
	{"prompt", "its system prompt"},
}

func newAgentForm(m *Model, rt Runtime, name string) *agentForm {
	f := &agentForm{m: m, rt: rt}
	for _, def := range agentFormFields {
		in := textinput.New()
		in.Prompt = fmt.Sprintf("%-12s ", def[0])
		in.Placeholder = def[1]
		s := in.Styles()
		s.Cursor.Blink = false // an idle form must not wake the program
		in.SetStyles(s)
		f.fields = append(f.fields, in)
	}
	f.fields[0].SetValue(name)
	f.fields[0].Focus()
	return f
}

func (f *agentForm) Update(msg tea.Msg) (screen.Screen, tea.Cmd) {
	k, ok := msg.(tea.KeyPressMsg)
	if !ok {
		if p, isPaste := msg.(tea.PasteMsg); isPaste {
			var cmd tea.Cmd
			f.fields[f.focus], cmd = f.fields[f.focus].Update(p)
			return f, cmd
		}
		return f, nil
	}
	switch k.String() {
	case "esc":
		f.m.Info("/agents create: cancelled, nothing written.")
		return f, screen.Pop
	case "tab", "down":
		f.move(1)
		return f, nil
	case "shift+tab", "up":
		f.move(-1)
		return f, nil
	case "ctrl+s":
		return f.save()
	case "enter":
		if f.focus < len(f.fields)-1 {
			f.move(1)
			return f, nil
		}
		return f.save()
	}
	var cmd tea.Cmd
	f.fields[f.focus], cmd = f.fields[f.focus].Update(k)
	return f, cmd
}

func (f *agentForm) move(d int) {
	f.fields[f.focus].Blur()
	f.focus = (f.focus + d + len(f.fields)) % len(f.fields)
	f.fields[f.focus].Focus()
}

// save writes the agent through the runtime, which checks it as loading
// would; a refusal stays on the form, with the reason.
func (f *agentForm) save() (screen.Screen, tea.Cmd) {
	v := func(i int) string { return strings.TrimSpace(f.fields[i].Value()) }
	a := cadre.NewAgent{Name: v(0), Description: v(1), Model: v(3), Prompt: v(4)}
	if t := v(2); t != "" {
		for _, name := range strings.Split(t, ",") {
			a.Tools = append(a.Tools, strings.TrimSpace(name))
		}
	}
	e, err := f.rt.CreateAgent(f.m.ctx, a)
	if err != nil {
		f.err = err.Error()
		return f, nil
	}
	msg := fmt.Sprintf("Created agent %s in %s: @%s runs it, and the main agent may delegate to it.", e.Agent.Name, f.m.relative(e.Path), e.Agent.Name)
	for _, w := range e.Warnings {
		msg += "\n  warning: " + render.OneLine(w)
	}
	f.m.Info(msg)
	f.m.cfg.Agents = appendAgent(f.m.cfg.Agents, e)
	return f, screen.Pop
}

// appendAgent adds a created agent to the names "@" completes, unless it
// is hidden or a main agent only.
func appendAgent(names []string, e cadre.AgentEntry) []string {
	if e.Agent.Hidden || e.Agent.Mode == cadre.AgentModePrimary {
		return names
	}
	for _, n := range names {
		if n == e.Agent.Name {
			return names
		}
	}
	return append(names, e.Agent.Name)
}

func (f *agentForm) View(width, height int) string {
	var b strings.Builder
	b.WriteString(render.Heading.Render("New agent") + render.Dim.Render(" · written to .cadre/agents/NAME.md, checked as cadre loads it") + "\n")
	b.WriteString(render.Dim.Render(strings.Repeat("─", width)) + "\n")
	for i := range f.fields {
		f.fields[i].SetWidth(max(width-14, 10))
		b.WriteString(f.fields[i].View() + "\n")
	}
	lines := 2 + len(f.fields)
	if f.err != "" {
		e := render.Err.Render(ansi.Wrap("✗ "+f.err, width, ""))
		b.WriteString("\n" + e + "\n")
		lines += 1 + strings.Count(e, "\n") + 1
	}
	for ; lines < height-1; lines++ {
		b.WriteString("\n")
	}
	b.WriteString(render.Dim.Render(ansi.Truncate("Tab/Shift+Tab move · Enter on the prompt (or Ctrl+S) creates · Esc cancels", width, "…")))
	return b.String()
}
