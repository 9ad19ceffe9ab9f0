package childprompt

import (
	_ "embed"
	"strings"
	"sync"
	"time"

	"github.com/cadre-dev/cadre/internal/agent"
	"github.com/cadre-dev/cadre/internal/contextfiles"
	"github.com/cadre-dev/cadre/internal/runner"
	"github.com/cadre-dev/cadre/internal/subagent/prompt"
	"github.com/cadre-dev/cadre/internal/task"
	"github.com/cadre-dev/cadre/internal/tmplexec"
	"github.com/cadre-dev/cadre/llm"
)

var (
	//go:embed child_system.md
	childSystemText string
	//go:embed context.md
	contextText string

	// Parsed on first use: a process that never spawns does not pay for
	// them. They run on tmplexec (see its doc.go).
	childSystemTmpl = lazy("child_system", childSystemText)
	contextTmpl     = lazy("context", contextText)
)

func lazy(name, text string) func() *tmplexec.Template { return prompt.Lazy(name, text, nil) }

func render(t *tmplexec.Template, data any) string { return prompt.Render(t, data) }

// key is everything a child's system prompt depends on but the platform,
// which a process does not change.
type key struct{ name, base, cwd, date string }

// Systems builds children's system prompts, each once per definition,
// workspace and day: the ten children of one message share one. It grows
// with the definitions, working directories and days a process sees. The
// zero value is ready; it is safe for concurrent use.
type Systems struct{ cache sync.Map }

// System is the system prompt of a child of agent name working in cwd: its
// prompt base (its definition's prompt, or its workspace's), the
// environment, and a note on its role. memory, if set, is its memory
// section: such a prompt is never cached, since the agent changes its
// memory as it runs. Whether the workspace is a git repository is read with
// the first build: a child started later that day sees its first sibling's
// answer.
func (s *Systems) System(name, base, memory, cwd string, now time.Time) string {
	role := func() string { return render(childSystemTmpl(), map[string]any{"Name": name}) }
	if memory != "" {
		return runner.SystemPrompt(base+"\n\n"+memory, cwd, now, role())
	}
	k := key{name: name, base: base, cwd: cwd, date: now.Format("2006-01-02")}
	if p, ok := s.cache.Load(k); ok {
		return p.(string)
	}
	p := runner.SystemPrompt(base, cwd, now, role())
	s.cache.Store(k, p)
	return p
}

// Preamble is the context block a child opens with (S-E4): a fork's is its
// parent's, whole (files); another child gets AGENTS.md and TOOLS.md (the
// gateway's rule), and the CLAUDE.md files only where Claude Code gives a
// subagent them — an agent in Claude Code's format (and the built-in
// general-purpose, Claude Code's own) that does not say omitClaudeMd.
func Preamble(files []contextfiles.File, def agent.Definition, fork bool) []llm.Block {
	if fork {
		return contextfiles.Blocks(files)
	}
	claude := (def.Format == agent.FormatClaude || (def.Format == agent.FormatBuiltin && strings.EqualFold(def.Name, agent.GeneralPurposeName))) && !def.OmitClaudeMD
	return contextfiles.Blocks(contextfiles.ForSubagent(files, claude))
}

// Task is one background task as the main agent's context lists it. Its
// fields are shown as they are: the caller makes model text safe.
type Task struct{ ID, Name, Agent, Description, Status, Age string }

// Tasks are recs as the main agent's context lists them, their ages at
// now. A description is model text: one line, and no tags of its own.
func Tasks(recs []task.Task, now time.Time) []Task {
	var out []Task
	for _, t := range recs {
		out = append(out, Task{ID: t.ID, Name: t.Name, Agent: t.Agent, Description: prompt.Escape(prompt.OneLine(t.Description)),
			Status: string(t.Status), Age: now.Sub(t.Created).Round(time.Second).String()})
	}
	return out
}

// Context is the block the main agent sees each turn (S-A5): the agents
// it may delegate to with tool, and the session's background tasks; ""
// when there is neither.
func Context(agents []string, tool string, tasks []Task) string {
	if len(agents) == 0 && len(tasks) == 0 {
		return ""
	}
	return render(contextTmpl(), map[string]any{"Agents": agents, "Tool": tool, "Tasks": tasks})
}
