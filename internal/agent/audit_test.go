package agent

import (
	"strings"
	"testing"
)

// TestEveryFieldActsOrWarns: an agent file's field either changes what the
// agent does (the place is named) or warns that it does not — never a
// silent drop. A field added to fieldNames without a row here fails.
func TestEveryFieldActsOrWarns(t *testing.T) {
	acts := "acts"
	rows := map[string]struct {
		yaml  string // the field's line(s); "" for name and description, always given
		where string // where it acts, or "warns"
	}{
		"name":               {"", acts + ": the agent's id"},
		"description":        {"", acts + ": the Agent tool's listing"},
		"prompt":             {"prompt: Be brief.", acts + ": the system prompt (when there is no body)"},
		"tools":              {"tools: Read, Grep", acts + ": subagent.pool"},
		"disallowedTools":    {"disallowedTools: Bash", acts + ": subagent.pool"},
		"model":              {"model: inherit", acts + ": subagent.model"},
		"effort":             {"effort: high", acts + ": llm.Request.Thinking (subagent.loopConfig)"},
		"thinking":           {"thinking: 8000", acts + ": llm.Request.Thinking (subagent.loopConfig)"},
		"permissionMode":     {"permissionMode: plan", acts + ": permission.ChildMode"},
		"background":         {"background: true", acts + ": subagent spawn"},
		"isolation":          {"isolation: worktree", acts + ": subagent.isolate; remote: internal/remote via subagent.prepare"},
		"maxTurns":           {"maxTurns: 5", acts + ": runner.Agent.MaxTurns"},
		"maxIters":           {"maxIters: 5", acts + ": runner.Agent.MaxTurns"},
		"memory":             {"memory: project", acts + ": internal/memory via subagent.grantMemory"},
		"mcpServers":         {"mcpServers: [github]", acts + ": internal/mcp (mcp12)"},
		"requiredMcpServers": {"requiredMcpServers: [github]", acts + ": internal/mcp (mcp12)"},
		"hooks":              {"hooks: {}", acts + ": internal/hook (hooks12)"},
		"skills":             {"skills: style", acts + ": subagent.firstMessage"},
		"initialPrompt":      {"initialPrompt: Start here.", acts + ": subagent.firstMessage"},
		"color":              {"color: cyan", acts + ": Event.AgentColor, cli progress"},
		"hidden":             {"hidden: true", acts + ": listings"},
		"omitClaudeMd":       {"omitClaudeMd: true", acts + ": subagent.preamble (its context files)"},
		"allowAgents":        {"allowAgents: [reviewer]", acts + ": subagent.crossAllowed (sessions_spawn's agentId)"},
		"mode":               {"mode: subagent", acts + ": listings"},
		"temperature":        {"temperature: 0.2", acts + ": llm.Request.Temperature (subagent.loopConfig)"},
		"workspace":          {"workspace: {mode: shared}", acts + ": Definition.Resolve"},
		"url":                {"url: https://agents.example.com/a", acts + ": internal/remote (an A2A client as the child's model)"},
		"headers":            {"url: https://agents.example.com/a\nheaders: {X-A: b}", acts + ": with url"},
		"permission":         {"permission: {edit: deny}", acts + ": the child's rules"},
	}
	for _, field := range fieldNames(FormatClaude) {
		row, ok := rows[field]
		if !ok {
			t.Errorf("field %s has no row: say where it acts, or make it warn", field)
			continue
		}
		if row.yaml == "" {
			continue
		}
		t.Run(field, func(t *testing.T) {
			body := "Body.\n"
			if field == "prompt" || field == "url" || field == "headers" {
				body = "" // these stand in for the body
			}
			file := "---\nname: probe\ndescription: Probes.\n" + row.yaml + "\n---\n" + body
			d, problems, _ := parseFile("/p/.claude/agents/probe.md", []byte(file), FormatClaude, SourceProject, "/p")
			if len(problems) > 0 {
				t.Fatalf("problems: %v", problems)
			}
			var mentions []string
			for _, w := range d.Warnings {
				if strings.Contains(w, field) {
					mentions = append(mentions, w)
				}
			}
			if warns := row.where == "warns"; warns != (len(mentions) > 0) {
				t.Errorf("%s: warnings %q; want a warning: %v", field, d.Warnings, warns)
			}
		})
	}
	// A color cadre cannot show warns too, once.
	d, _, _ := parseFile("/p/.claude/agents/probe.md", []byte("---\nname: probe\ndescription: P.\ncolor: chartreuse\n---\nB\n"), FormatClaude, SourceProject, "/p")
	if len(d.Warnings) != 1 || d.Color != "" {
		t.Errorf("color chartreuse: warnings %q, color %q", d.Warnings, d.Color)
	}
}
