package acp

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"unicode"

	acpsdk "github.com/coder/acp-go-sdk"
)

// agentTools are the names under which the tool surfaces (claude,
// opencode, harness, gateway) start a subagent. A call of one of them is
// drawn as the subagent's run.
var agentTools = map[string]bool{"Agent": true, "Task": true, "task": true, "agent_spawn": true, "sessions_spawn": true}

// kinds gives editors an icon for a tool. Tools not listed are "other".
var kinds = map[string]acpsdk.ToolKind{
	"Read": acpsdk.ToolKindRead, "NotebookRead": acpsdk.ToolKindRead,
	"Write": acpsdk.ToolKindEdit, "Edit": acpsdk.ToolKindEdit, "MultiEdit": acpsdk.ToolKindEdit, "NotebookEdit": acpsdk.ToolKindEdit,
	"Bash": acpsdk.ToolKindExecute, "BashOutput": acpsdk.ToolKindExecute, "KillShell": acpsdk.ToolKindExecute,
	"Glob": acpsdk.ToolKindSearch, "Grep": acpsdk.ToolKindSearch, "LS": acpsdk.ToolKindSearch,
	"WebFetch": acpsdk.ToolKindFetch, "WebSearch": acpsdk.ToolKindFetch,
	"TodoWrite": acpsdk.ToolKindThink,
}

// titleLen bounds the argument quoted in a tool call's title.
const titleLen = 80

// toolInput is the union of the input fields a title, a location or a diff
// is made from.
type toolInput struct {
	FilePath     string `json:"file_path"`
	NotebookPath string `json:"notebook_path"`
	Path         string `json:"path"`
	Offset       int    `json:"offset"`
	Command      string `json:"command"`
	Description  string `json:"description"`
	Pattern      string `json:"pattern"`
	URL          string `json:"url"`
	Query        string `json:"query"`
	OldString    string `json:"old_string"`
	NewString    string `json:"new_string"`
	Content      string `json:"content"`
	SubagentType string `json:"subagent_type"`
	AgentID      string `json:"agent_id"`
	Label        string `json:"label"`
	Task         string `json:"task"`
}

// call is how a tool call is shown: its title, kind, the files it touches
// and, for an edit, the diff it proposes.
type call struct {
	title     string
	kind      acpsdk.ToolKind
	locations []acpsdk.ToolCallLocation
	diff      []acpsdk.ToolCallContent
}

// present describes a tool call from its name and input; cwd resolves a
// relative path so that locations are absolute, as ACP requires.
func present(name string, input json.RawMessage, cwd string) call {
	var in toolInput
	_ = json.Unmarshal(input, &in) // a malformed input still gets a call, titled by its name
	c := call{title: oneLine(name), kind: kinds[name]}
	if c.kind == "" {
		c.kind = acpsdk.ToolKindOther
	}
	file := in.FilePath
	if file == "" {
		file = in.NotebookPath
	}
	if file != "" {
		file = abs(file, cwd)
		c.locations = []acpsdk.ToolCallLocation{{Path: file}}
		if in.Offset > 0 {
			c.locations[0].Line = acpsdk.Ptr(in.Offset)
		}
	}
	switch {
	case agentTools[name]:
		c.kind = acpsdk.ToolKindThink
		who := first(in.SubagentType, in.AgentID, "subagent")
		c.title = oneLine(who) + " (subagent)"
		if what := oneLine(first(in.Description, in.Label, in.Task)); what != "" {
			c.title += ": " + what
		}
	case name == "Bash":
		c.title = "Run " + quote(first(in.Command, in.Description))
	case file != "":
		c.title = join(c.title, short(file, cwd))
		switch name {
		case "Edit":
			c.diff = []acpsdk.ToolCallContent{acpsdk.ToolDiffContent(file, in.NewString, in.OldString)}
		case "Write":
			c.diff = []acpsdk.ToolCallContent{acpsdk.ToolDiffContent(file, in.Content)}
		}
	case in.Pattern != "":
		c.title = join(c.title, quote(in.Pattern))
		if in.Path != "" {
			c.title += " in " + short(abs(in.Path, cwd), cwd)
		}
	case in.Path != "":
		c.title = join(c.title, short(abs(in.Path, cwd), cwd))
		c.locations = []acpsdk.ToolCallLocation{{Path: abs(in.Path, cwd)}}
	case in.URL != "":
		c.title = join(c.title, quote(in.URL))
	case in.Query != "":
		c.title = join(c.title, quote(in.Query))
	}
	return c
}

// todo is one entry of a TodoWrite call's list.
type todo struct {
	Content string `json:"content"`
	Status  string `json:"status"`
}

// plan turns a TodoWrite call's list into an ACP plan; ok is false when
// the input holds no list.
func plan(input json.RawMessage) (entries []acpsdk.PlanEntry, ok bool) {
	var in struct {
		Todos []todo `json:"todos"`
	}
	if json.Unmarshal(input, &in) != nil || in.Todos == nil {
		return nil, false
	}
	entries = []acpsdk.PlanEntry{}
	for _, t := range in.Todos {
		status := acpsdk.PlanEntryStatusPending
		switch t.Status {
		case "in_progress":
			status = acpsdk.PlanEntryStatusInProgress
		case "completed":
			status = acpsdk.PlanEntryStatusCompleted
		}
		entries = append(entries, acpsdk.PlanEntry{Content: t.Content, Status: status, Priority: acpsdk.PlanEntryPriorityMedium})
	}
	return entries, true
}

func abs(p, cwd string) string {
	if filepath.IsAbs(p) || cwd == "" {
		return filepath.Clean(p)
	}
	return filepath.Join(cwd, p)
}

// short shows a path inside the workspace relative to it.
func short(p, cwd string) string {
	if rel, err := filepath.Rel(cwd, p); err == nil && cwd != "" && !strings.HasPrefix(rel, "..") {
		return rel
	}
	return p
}

// quote puts an argument in backquotes, on one line and bounded.
func quote(s string) string {
	s = oneLine(s)
	if s == "" {
		return ""
	}
	if r := []rune(s); len(r) > titleLen {
		s = string(r[:titleLen-1]) + "…"
	}
	return "`" + strings.ReplaceAll(s, "`", "'") + "`"
}

// oneLine makes s one line: control characters become spaces and runs of
// spaces one.
func oneLine(s string) string {
	return strings.Join(strings.FieldsFunc(s, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }), " ")
}

func join(a, b string) string {
	if b == "" {
		return a
	}
	return a + " " + b
}

func first(ss ...string) string {
	for _, s := range ss {
		if strings.TrimSpace(s) != "" {
			return s
		}
	}
	return ""
}

// agentLabel names an agent in titles: the main agent as "main", a
// subagent by its type.
func agentLabel(agentType string) string {
	if agentType == "" {
		return "main"
	}
	return oneLine(agentType)
}

// sized bounds a tool result shown in an editor: a Read of a large file
// would otherwise travel whole in every update.
func sized(s string, limit int) string {
	if len(s) <= limit {
		return s
	}
	cut := limit
	for cut > 0 && !utf8Start(s[cut]) {
		cut--
	}
	return s[:cut] + fmt.Sprintf("\n… (%d more bytes)", len(s)-cut)
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }
