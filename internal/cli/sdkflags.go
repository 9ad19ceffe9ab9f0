package cli

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"strconv"
	"strings"

	"github.com/cadre-dev/cadre/llm"
	"github.com/spf13/pflag"
)

// sdkFlags are the flags the Claude Agent SDK passes to the executable it
// starts (its sdk.mjs builds the argv), beyond the ones cadre has always
// had. Each is accepted in both --flag value and --flag=value forms.
type sdkFlags struct {
	settingSources       string
	settings             string
	permissionPromptTool string
	includePartial       bool
	tools                string
	mcpConfig            []string
	strictMCPConfig      bool
	addDir               []string
	fallbackModel        string
	maxThinkingTokens    int
	thinking             string
	effort               string
	jsonSchema           string
	sessionID            string
	noPersist            bool
	forkSession          bool
	agent                string
	coordinator          bool
	agents               string
	maxBudgetUSD         float64
	replayUserMessages   bool
	debugFile            string

	// ignored holds the flags cadre accepts so that the SDK can start it,
	// but that have no effect in cadre (yet).
	ignored map[string]*string
}

// ignoredFlags are accepted and warned about: the SDK passes them for
// features cadre does not have. The value says why they do nothing.
var ignoredFlags = []struct{ name, why string }{
	{"betas", "cadre sends no beta headers"},
	{"debug-to-stderr", "use --debug"},
	{"permission-prompts", ""},
	{"thinking-display", ""},
	{"task-budget", ""},
	{"project-config-root", ""},
	{"plugin-dir", "cadre has no plugins"},
	{"plugin-dir-no-mcp", "cadre has no plugins"},
	{"resume-session-at", ""},
	{"resume-drops-turn", ""},
	{"initialize-fields", ""},
	{"managed-settings", "cadre has no managed settings"},
	{"channels", ""},
}

// ignoredBools are the boolean flags of ignoredFlags' kind.
var ignoredBools = []struct{ name, why string }{
	{"include-hook-events", "hook events are not streamed"},
	{"session-mirror", ""},
	{"managed-settings-in-initialize", "cadre has no managed settings"},
	{"await-initialize", ""},
	{"no-optional-locks", ""},
}

func (f *sdkFlags) register(fl *pflag.FlagSet) {
	fl.StringVar(&f.settingSources, "setting-sources", "", "settings files to read: a comma-separated list of user, project, local (default: all)")
	fl.StringVar(&f.settings, "settings", "", "one more settings layer: a settings file's path, or settings as JSON")
	fl.StringVar(&f.permissionPromptTool, "permission-prompt-tool", "", `who is asked when a call needs approval: "stdio" (the control protocol of --input-format stream-json)`)
	fl.BoolVar(&f.includePartial, "include-partial-messages", false, "stream-json: also write the model's streaming events as stream_event lines")
	fl.StringVar(&f.tools, "tools", "default", `the only tools offered, comma-separated ("" for none, "default" for all)`)
	fl.StringArrayVar(&f.mcpConfig, "mcp-config", nil, "more MCP servers: a file or JSON text of {\"mcpServers\": …} (docs/mcp.md)")
	fl.BoolVar(&f.strictMCPConfig, "strict-mcp-config", false, "use only the MCP servers of --mcp-config")
	fl.StringArrayVar(&f.addDir, "add-dir", nil, "another directory the agents may work in, as the working directory")
	fl.StringVar(&f.fallbackModel, "fallback-model", "", "model the turn switches to when the main model is overloaded or unavailable")
	fl.IntVar(&f.maxThinkingTokens, "max-thinking-tokens", 0, "extended thinking with this token budget")
	fl.StringVar(&f.thinking, "thinking", "", "extended thinking: adaptive or disabled")
	fl.StringVar(&f.effort, "effort", "", "reasoning effort: low, medium, high, xhigh or max")
	fl.StringVar(&f.jsonSchema, "json-schema", "", "JSON schema the final answer must follow; the result's structured_output holds it")
	fl.StringVar(&f.sessionID, "session-id", "", "id of the new session (a UUID)")
	fl.BoolVar(&f.noPersist, "no-session-persistence", false, "keep the session in memory only")
	fl.BoolVar(&f.forkSession, "fork-session", false, "with --resume or --continue: continue in a new session, a copy")
	fl.StringVar(&f.agent, "agent", "", "run the main agent as this agent definition")
	fl.BoolVar(&f.coordinator, "coordinator", false, "coordinator mode: the main agent only orchestrates agents, all in the background (docs/agents.md)")
	fl.StringVar(&f.agents, "agents", "", `subagents as JSON: {"name": {"description": …, "prompt": …, "tools": […], "model": …}}`)
	fl.Float64Var(&f.maxBudgetUSD, "max-budget-usd", 0, "stop when the run has cost this much (USD)")
	fl.BoolVar(&f.replayUserMessages, "replay-user-messages", false, "--input-format stream-json: echo each user message on standard output")
	fl.StringVar(&f.debugFile, "debug-file", "", "also write debug detail to this file")
	fl.Bool("allow-dangerously-skip-permissions", false, "allow --permission-mode bypassPermissions (cadre allows it without this flag)")
	f.ignored = map[string]*string{}
	for _, x := range ignoredFlags {
		f.ignored[x.name] = fl.String(x.name, "", "accepted for the Agent SDK; no effect in cadre")
	}
	for _, x := range ignoredBools {
		fl.Bool(x.name, false, "accepted for the Agent SDK; no effect in cadre")
	}
	for _, x := range append(append([]struct{ name, why string }{}, ignoredFlags...), ignoredBools...) {
		fl.Lookup(x.name).Hidden = true
	}
}

// warnIgnored says once, for each accepted flag that has no effect, that
// it is ignored and why.
func warnIgnored(fl *pflag.FlagSet, log *slog.Logger) {
	for _, x := range append(append([]struct{ name, why string }{}, ignoredFlags...), ignoredBools...) {
		if !fl.Changed(x.name) {
			continue
		}
		msg := "--" + x.name + " has no effect in cadre; ignored"
		if x.why != "" {
			msg += " (" + x.why + ")"
		}
		log.Warn(msg)
	}
}

// list splits a comma- or space-separated flag value.
func list(v string) []string {
	return strings.FieldsFunc(v, func(r rune) bool { return r == ',' || r == ' ' })
}

// toolNames reads --tools: "default" (or not given) is every tool, ""
// none, else the names listed.
func toolNames(fl *pflag.FlagSet, v string) []string {
	if !fl.Changed("tools") || strings.TrimSpace(v) == "default" {
		return nil
	}
	return append([]string{}, list(v)...)
}

// settingSources reads --setting-sources; "" (the SDK's empty list) reads
// no settings file.
func settingSources(fl *pflag.FlagSet, v string) []string {
	if !fl.Changed("setting-sources") {
		return nil
	}
	return append([]string{}, list(v)...)
}

// thinkingBudget reads --max-thinking-tokens, --thinking and --effort,
// in that order of precedence, as llm.ParseEffort reads effort words.
// --thinking=adaptive (the SDK's default for thinking on) lets cadre pick:
// the medium budget.
func (f *sdkFlags) thinkingBudget() (*llm.Thinking, error) {
	switch {
	case f.maxThinkingTokens > 0:
		t, err := llm.ParseEffort(strconv.Itoa(f.maxThinkingTokens))
		if err != nil {
			return nil, fmt.Errorf("--max-thinking-tokens: %w", err)
		}
		return t, nil
	case f.maxThinkingTokens < 0:
		return nil, fmt.Errorf("--max-thinking-tokens must be positive, got %d", f.maxThinkingTokens)
	case f.thinking != "":
		v := f.thinking
		if v == "adaptive" {
			v = "medium"
		}
		t, err := llm.ParseEffort(v)
		if err != nil {
			return nil, fmt.Errorf("--thinking: want adaptive, enabled or disabled: %w", err)
		}
		return t, nil
	}
	t, err := llm.ParseEffort(f.effort)
	if err != nil {
		return nil, fmt.Errorf("--effort: %w", err)
	}
	return t, nil
}

// jsonSchema reads --json-schema: the schema's JSON text.
func jsonSchema(v string) (json.RawMessage, error) {
	if strings.TrimSpace(v) == "" {
		return nil, nil
	}
	if !json.Valid([]byte(v)) {
		return nil, fmt.Errorf("--json-schema: not valid JSON: %q", v)
	}
	return json.RawMessage(v), nil
}
