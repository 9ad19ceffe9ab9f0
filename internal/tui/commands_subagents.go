package tui

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/cadre-dev/cadre"
	"github.com/cadre-dev/cadre/internal/tui/render"
	"github.com/cadre-dev/cadre/internal/tui/screen"
)

// /subagents list|stop|log|info|send and /stop, with OpenClaw's meanings
// (stop cascades to descendants), and Claude Code's /tasks.

func (m *Model) subagentsCommand(args string) tea.Cmd {
	st, ok := m.steering("/subagents")
	if !ok {
		return nil
	}
	verb, rest, _ := strings.Cut(args, " ")
	rest = strings.TrimSpace(rest)
	switch verb {
	case "", "list":
		runs, err := st.Subagents(m.ctx)
		if err != nil {
			m.Error(err.Error())
			return nil
		}
		m.Info(m.subagentTable(runs))
		return nil
	case "stop":
		if rest == "" {
			m.Error("/subagents stop needs a target: #N, an id, or all")
			return nil
		}
		return m.async(func(ctx context.Context) (string, error) {
			ids, err := st.StopSubagent(ctx, rest)
			if err != nil {
				return "", err
			}
			if len(ids) == 0 {
				return "No subagent was running.", nil
			}
			return fmt.Sprintf("Stopped %d subagent%s (descendants included): %s", len(ids), render.Plural(len(ids)), strings.Join(shortIDs(ids), ", ")), nil
		})
	case "log":
		target, limit, tools, err := logArgs(rest)
		if err != nil {
			m.Error(err.Error())
			return nil
		}
		return m.async(func(ctx context.Context) (string, error) {
			run, log, err := st.SubagentLog(ctx, target, limit, tools)
			if err != nil {
				return "", err
			}
			return subagentLog(run, log), nil
		})
	case "info":
		if rest == "" {
			m.Error("/subagents info needs a target: #N or an id")
			return nil
		}
		now := m.cfg.Now()
		return m.async(func(ctx context.Context) (string, error) {
			d, err := st.SubagentInfo(ctx, rest)
			if err != nil {
				return "", err
			}
			return subagentInfo(d, now), nil
		})
	case "send":
		target, text, _ := strings.Cut(rest, " ")
		if target == "" || strings.TrimSpace(text) == "" {
			m.Error("/subagents send needs a target and a message: /subagents send #N what to do")
			return nil
		}
		return m.async(func(ctx context.Context) (string, error) {
			return st.SendSubagent(ctx, target, strings.TrimSpace(text))
		})
	}
	m.Error(fmt.Sprintf("unknown /subagents action %q: want list, stop, log, info or send", verb))
	return nil
}

// logArgs reads "<target> [limit] [tools]".
func logArgs(s string) (target string, limit int, tools bool, err error) {
	f := strings.Fields(s)
	if len(f) == 0 {
		return "", 0, false, errors.New("/subagents log needs a target: #N or an id")
	}
	target = f[0]
	for _, w := range f[1:] {
		switch {
		case w == "tools":
			tools = true
		case limit == 0:
			n, err := strconv.Atoi(w)
			if err != nil || n <= 0 {
				return "", 0, false, fmt.Errorf("/subagents log: %q is not a message count (a positive number) or \"tools\"", w)
			}
			limit = n
		default:
			return "", 0, false, fmt.Errorf("/subagents log: unexpected %q: /subagents log <#|id> [limit] [tools]", w)
		}
	}
	return target, limit, tools, nil
}

// subagentTable is /subagents list: running first, as OpenClaw counts
// them, each with its stable number.
func (m *Model) subagentTable(runs []cadre.SubagentRun) string {
	if len(runs) == 0 {
		return "No subagents in this conversation yet."
	}
	active := 0
	for _, r := range runs {
		if r.Running() {
			active++
		}
	}
	rows := [][]string{{"#", "STATUS", "AGENT", "ELAPSED", "TOKENS", "DESCRIPTION"}}
	now := m.cfg.Now()
	for _, r := range runs {
		status := string(r.Status)
		if r.Running() && r.CurrentTool != "" {
			status += " · " + r.CurrentTool
		}
		if r.Background && r.Running() {
			status += " · bg"
		}
		end := r.Ended
		if end.IsZero() {
			end = now
		}
		agent := strings.Repeat("  ", max(r.Depth-1, 0)) + r.Agent
		if r.Name != "" {
			agent += " (" + r.Name + ")"
		}
		rows = append(rows, []string{fmt.Sprintf("#%d", r.Index), status, agent, render.Elapsed(end.Sub(r.Started)), render.Count(r.Tokens), render.OneLine(r.Description)})
	}
	return fmt.Sprintf("Subagents: %d running · %d done\n", active, len(runs)-active) + render.Table(rows, m.width)
}

// subagentLog renders /subagents log.
func subagentLog(run cadre.SubagentRun, log []cadre.LogMessage) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Log of #%d %s %s (%s)", run.Index, run.Agent, render.OneLine(run.Description), run.Status)
	if len(log) == 0 {
		b.WriteString("\n  (no messages yet)")
	}
	for _, l := range log {
		who := "user"
		if l.Role == "assistant" {
			who = run.Agent
		}
		fmt.Fprintf(&b, "\n%s: %s", who, strings.ReplaceAll(l.Text, "\n", "\n  "))
	}
	return b.String()
}

// subagentInfo renders /subagents info: OpenClaw's fields.
func subagentInfo(d cadre.SubagentDetails, now time.Time) string {
	at := func(t time.Time) string {
		if t.IsZero() {
			return "—"
		}
		return t.Local().Format(time.DateTime) + " (" + render.Elapsed(now.Sub(t)) + " ago)"
	}
	runtime := "—"
	if !d.Started.IsZero() {
		end := d.Ended
		if end.IsZero() {
			end = now
		}
		runtime = render.Elapsed(end.Sub(d.Started))
	}
	outcome := string(d.Status)
	if d.Error != "" {
		outcome += ": " + render.OneLine(d.Error)
	}
	cleanup := d.Cleanup
	if cleanup == "keep" {
		cleanup += fmt.Sprintf(" (archived %d min after it ends)", d.ArchiveAfterMinutes)
	}
	rows := [][]string{
		{"Subagent", fmt.Sprintf("#%d %s", d.Index, d.Agent)},
		{"Status", outcome},
		{"Description", render.OneLine(d.Description)},
		{"Task", render.OneLine(d.Prompt)},
		{"Session", d.Key},
		{"Session id", d.SessionID},
		{"Transcript", d.TranscriptPath},
		{"Runtime", runtime},
		{"Created", at(d.Created)},
		{"Started", at(d.Started)},
		{"Ended", at(d.Ended)},
		{"Tokens", render.Count(d.Tokens)},
		{"Cost", d.CostUSD.String()},
		{"Cleanup", cleanup},
	}
	if d.Background {
		out := d.OutputFile
		if out == "" {
			// The store keeps the transcript: the output is read from it.
			out = "in the store: cadre tasks output " + d.SessionID
		}
		rows = append(rows, []string{"Output", out})
	}
	var b strings.Builder
	for i, r := range rows {
		if i > 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "%-12s %s", r[0], r[1])
	}
	return b.String()
}

// stopCommand is OpenClaw's /stop.
func (m *Model) stopCommand(string) tea.Cmd {
	st, ok := m.steering("/stop")
	if !ok {
		return nil
	}
	return m.async(func(ctx context.Context) (string, error) {
		ids, err := st.Abort(ctx)
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("Stopped the turn and %d subagent%s.", len(ids), render.Plural(len(ids))), nil
	})
}

// tasksCommand is /tasks: the background tasks of this conversation.
func (m *Model) tasksCommand(args string) tea.Cmd {
	rt, ok := m.runtime("/tasks")
	if !ok {
		return nil
	}
	st, ok := m.steering("/tasks")
	if !ok {
		return nil
	}
	verb, target, _ := strings.Cut(args, " ")
	target = strings.TrimSpace(target)
	root := st.SessionID()
	// A task's number is its run's in /subagents (the runtime's, in
	// start order): the same run is #N in both, and stop #N means it.
	var runs []cadre.SubagentRun
	var tasks []cadre.Task
	if verb == "" || verb == "output" || verb == "stop" {
		var err error
		if tasks, err = rt.Tasks(m.ctx, root, 0); err == nil {
			runs, err = st.Subagents(m.ctx)
		}
		if err != nil {
			m.Error(err.Error())
			return nil
		}
	}
	switch verb {
	case "":
		m.Info(m.taskTable(tasks, runs))
		return nil
	case "output", "stop":
		if target == "" {
			m.Error(fmt.Sprintf("/tasks %s needs a task: #N or its id", verb))
			return nil
		}
		t, err := findTask(tasks, runs, target)
		if err != nil {
			m.Error(err.Error())
			return nil
		}
		if verb == "stop" {
			return m.async(func(ctx context.Context) (string, error) { return rt.StopTask(ctx, t.ID) })
		}
		ctx := m.ctx
		return func() tea.Msg {
			out, err := rt.TaskOutput(ctx, t.ID)
			if err != nil {
				return commandMsg{err: err}
			}
			title := fmt.Sprintf("Task %s · %s · %s — %s", render.Short(t.ID), t.Agent, t.Status, render.OneLine(t.Description))
			// A running task's output grows: r reads it again.
			p := screen.NewPager(title, out).Reloads(ctx, func(ctx context.Context) (string, error) { return rt.TaskOutput(ctx, t.ID) })
			return commandMsg{then: screen.Push(p)}
		}
	}
	m.Error(fmt.Sprintf("unknown /tasks action %q: want output or stop (or nothing, to list them)", verb))
	return nil
}

// taskTable lists tasks oldest first, each with its run's number in
// /subagents; a task that is no subagent (a background shell command)
// has a number of its own, sN (taskNumbers).
func (m *Model) taskTable(tasks []cadre.Task, runs []cadre.SubagentRun) string {
	if len(tasks) == 0 {
		return "No background tasks in this conversation."
	}
	rows := [][]string{{"#", "ID", "STATUS", "AGENT", "ELAPSED", "COST", "DESCRIPTION · PROGRESS"}}
	now := m.cfg.Now()
	numbers := taskNumbers(tasks, runs)
	for _, t := range oldestFirst(tasks) {
		start := t.Started
		if start.IsZero() {
			start = t.Created
		}
		end := t.Finished
		if end.IsZero() {
			end = now
		}
		what := render.OneLine(t.Description)
		if t.Progress != "" && !t.Status.Terminal() {
			what += " · " + render.OneLine(t.Progress)
		}
		rows = append(rows, []string{numbers[t.ID], render.Short(t.ID), string(t.Status), t.Agent, render.Elapsed(end.Sub(start)), t.CostUSD.String(), what})
	}
	return render.Table(rows, m.width) + "\n" + render.Dim.Render("/tasks output #N opens one's output · /tasks stop #N stops one · #N is the run's number in /subagents, sN a shell command's")
}

// taskNumbers are the tasks' numbers by id: a subagent's is its run's
// ("#2", as /subagents shows it); other tasks (background shell
// commands) are counted apart, oldest first ("s1"), so that neither
// numbering shifts when the other grows.
func taskNumbers(tasks []cadre.Task, runs []cadre.SubagentRun) map[string]string {
	out := make(map[string]string, len(tasks))
	for _, r := range runs {
		out[r.ID] = fmt.Sprintf("#%d", r.Index)
	}
	shells := 0
	for _, t := range oldestFirst(tasks) {
		if _, ok := out[t.ID]; !ok {
			shells++
			out[t.ID] = fmt.Sprintf("s%d", shells)
		}
	}
	return out
}

// oldestFirst reverses the store's newest-first listing.
func oldestFirst(tasks []cadre.Task) []cadre.Task {
	out := make([]cadre.Task, len(tasks))
	for i, t := range tasks {
		out[len(tasks)-1-i] = t
	}
	return out
}

// findTask reads "#N" (the subagent's number, as taskTable and
// /subagents show it), an id, or a unique start or end of one (the table
// shows ids' ends).
func findTask(tasks []cadre.Task, runs []cadre.SubagentRun, target string) (cadre.Task, error) {
	list := oldestFirst(tasks)
	if n := strings.TrimPrefix(target, "#"); len(n) > 1 && n[0] == 's' {
		if _, err := strconv.Atoi(n[1:]); err == nil {
			numbers := taskNumbers(tasks, runs)
			for _, t := range list {
				if numbers[t.ID] == n {
					return t, nil
				}
			}
			return cadre.Task{}, fmt.Errorf("no task %s in this conversation (/tasks lists them)", n)
		}
	}
	if n, err := strconv.Atoi(strings.TrimPrefix(target, "#")); err == nil {
		i := slices.IndexFunc(runs, func(r cadre.SubagentRun) bool { return r.Index == n })
		if i < 0 {
			return cadre.Task{}, fmt.Errorf("no subagent #%d in this conversation (/tasks and /subagents list them)", n)
		}
		for _, t := range list {
			if t.ID == runs[i].ID {
				return t, nil
			}
		}
		return cadre.Task{}, fmt.Errorf("subagent #%d ran in the foreground: it is no background task (/subagents stop #%d stops it)", n, n)
	}
	var found []cadre.Task
	for _, t := range list {
		if t.ID == target {
			return t, nil
		}
		if strings.HasPrefix(t.ID, target) || strings.HasSuffix(t.ID, target) {
			found = append(found, t)
		}
	}
	switch len(found) {
	case 1:
		return found[0], nil
	case 0:
		return cadre.Task{}, fmt.Errorf("no task %q in this conversation (/tasks lists them)", target)
	}
	return cadre.Task{}, fmt.Errorf("%q matches %d task ids: give more of it, or its #", target, len(found))
}

func shortIDs(ids []string) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = render.Short(id)
	}
	return out
}
