package config

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/cadre-dev/cadre/internal/hook"
	"github.com/cadre-dev/cadre/internal/permission"
)

// Settings is the merged configuration.
type Settings struct {
	// Model is "provider:model", an alias, or a bare model id.
	Model           string `json:"model"`
	DefaultProvider string `json:"defaultProvider"`
	// Aliases map short names to models: "sonnet": "anthropic:claude-sonnet-5-5".
	Aliases map[string]string `json:"aliases"`
	// Providers are keyed "anthropic", "openai", or a custom name with a Type.
	Providers map[string]Provider `json:"providers"`
	// Pricing maps a model name to its price, overriding the built-in table.
	Pricing     map[string]Price `json:"pricing"`
	Permissions Permissions      `json:"permissions"`
	MaxTurns    int              `json:"maxTurns"`
	// Env is set in the environment of the tools cadre runs.
	Env map[string]string `json:"env"`
	// Subagents holds the subagent machinery's defaults and limits.
	Subagents Subagents `json:"subagents"`
	// Compaction tunes automatic context compaction.
	Compaction Compaction `json:"compaction"`
	// Limits bound model streams, replies and tool inputs.
	Limits Limits `json:"limits"`
	// BackgroundShell tunes Bash commands run with run_in_background.
	BackgroundShell BackgroundShell `json:"backgroundShell"`
	// Agents are agent definitions keyed by name; the agent package checks
	// them, so they are kept raw here. Layers merge them by name.
	Agents json.RawMessage `json:"agents"`
	// Hooks run commands on the runtime's events, in Claude Code's format.
	// Every layer's hooks run, so they are kept by layer in Loaded.Hooks;
	// merged here, a later layer's event replaces an earlier one's.
	Hooks hook.Settings `json:"hooks"`
	// DisableAllHooks turns every settings hook off.
	DisableAllHooks bool `json:"disableAllHooks"`
	// EnableProjectHooks lets the project's hooks run: those of its shared
	// settings (.cadre/settings.json, .claude/settings.json) and of its
	// agent files. They are commands a cloned repository would run, so a
	// project's shared settings cannot set this (Load drops it there).
	EnableProjectHooks bool `json:"enableProjectHooks"`
	// MCPServers are MCP server definitions keyed by name, in Claude
	// Code's shape; the mcp package checks them. Which layer defined a
	// server matters (a project's are approved like .mcp.json's), so
	// Loaded.MCP keeps them by layer too.
	MCPServers map[string]json.RawMessage `json:"mcpServers"`
	// EnableAllProjectMcpServers approves every server of the project's
	// .mcp.json; EnabledMcpjsonServers approves the ones named, and
	// DisabledMcpjsonServers refuses the ones named (Claude Code's keys).
	// A project's shared settings cannot approve (Load drops them there).
	EnableAllProjectMcpServers bool     `json:"enableAllProjectMcpServers"`
	EnabledMcpjsonServers      []string `json:"enabledMcpjsonServers"`
	DisabledMcpjsonServers     []string `json:"disabledMcpjsonServers"`
	// Store chooses where session and task records live.
	Store Store `json:"store"`
	// Sandbox puts the commands a model causes inside walls the kernel
	// enforces (sandbox.go).
	Sandbox Sandbox `json:"sandbox"`
}

// Store chooses where the session index and task records live.
type Store struct {
	// URL is a PostgreSQL URL (postgres://...) for a store several
	// processes share; empty means the embedded SQLite file under
	// CADRE_HOME. CADRE_STORE_URL, when set, wins over it. A project's
	// shared settings cannot set it (Load drops it there).
	URL string `json:"url"`
	// HeartbeatSeconds is how often a process sharing a PostgreSQL store
	// records that it is alive; 0 (unset) means 30. Use Heartbeat.
	HeartbeatSeconds int `json:"heartbeatSeconds"`
	// OrphanAfterSeconds is how long a process may stay silent before the
	// tasks it runs are failed as lost; 0 (unset) means 600. It must be at
	// least twice the heartbeat. Use OrphanAfter.
	OrphanAfterSeconds int `json:"orphanAfterSeconds"`
	// Dispatch says where a background run executes with a PostgreSQL
	// store: "sticky", in the process whose agent started it, or "any",
	// on any node with a free place (a job in the shared queue). Empty
	// means the front end's default: sticky for a cadre -p process, any
	// for cadre serve. The SQLite store always runs it where it starts.
	Dispatch string `json:"dispatch"`
}

// Heartbeat is the effective heartbeat interval.
func (s Store) Heartbeat() time.Duration {
	if s.HeartbeatSeconds <= 0 {
		return 30 * time.Second
	}
	return time.Duration(s.HeartbeatSeconds) * time.Second
}

// OrphanAfter is the effective silence after which a process's tasks are
// failed.
func (s Store) OrphanAfter() time.Duration {
	if s.OrphanAfterSeconds <= 0 {
		return 600 * time.Second
	}
	return time.Duration(s.OrphanAfterSeconds) * time.Second
}

// validate checks one layer's store block: the times, when given, are
// positive whole seconds (an explicit 0 is refused rather than read as
// the default, which it would silently be).
func (s Store) validate(generic map[string]any, bad func(key, format string, args ...any) error) error {
	block, _ := generic["store"].(map[string]any)
	for _, n := range []struct {
		key string
		v   int
	}{{"heartbeatSeconds", s.HeartbeatSeconds}, {"orphanAfterSeconds", s.OrphanAfterSeconds}} {
		if _, set := block[n.key]; set && n.v <= 0 {
			return bad("store."+n.key, "want a positive number of seconds, got %d", n.v)
		}
	}
	return nil
}

// checkTimes checks the merged store settings together: a silence that
// short would fail the tasks of a live process between two heartbeats.
func (s Store) checkTimes() error {
	if s.OrphanAfter() < 2*s.Heartbeat() {
		return &Error{File: "settings", Key: "store.orphanAfterSeconds",
			Msg: fmt.Sprintf("want at least twice store.heartbeatSeconds (%d s), got %d s: a live process would look lost between two heartbeats",
				int(s.Heartbeat().Seconds()), int(s.OrphanAfter().Seconds()))}
	}
	return nil
}

// Dispatch modes (Store.Dispatch).
const (
	DispatchSticky = "sticky"
	DispatchAny    = "any"
)

// MCPLayer is the mcpServers object of one settings layer.
type MCPLayer struct {
	Scope, Path string
	Servers     map[string]json.RawMessage
}

// Provider is one model provider's connection settings: the built-in
// "anthropic" and "openai" endpoints, or a provider profile of one of
// those types under its own name, which an agent definition selects with
// model: "name:model" (docs/models.md). Only the user's own layers define
// them (dropProjectProviders).
type Provider struct {
	// Type is "anthropic" or "openai" (any OpenAI-compatible server); it
	// defaults to the provider's key when that is one of the two.
	Type    string `json:"type"`
	BaseURL string `json:"baseURL"`
	APIKey  string `json:"apiKey"`
	// APIKeyEnv names the environment variable holding the key, read
	// when the model is first used; no command cadre starts sees it.
	APIKeyEnv string `json:"apiKeyEnv"`
	// Headers are sent with every request to this provider (a gateway's
	// routing or account headers); the key never goes here.
	Headers map[string]string `json:"headers"`
	// Organization is the OpenAI organization id (type openai only).
	Organization string `json:"organization"`
}

// Price is a model's price in USD per million tokens.
type Price struct {
	Input      float64 `json:"input"`
	Output     float64 `json:"output"`
	CacheRead  float64 `json:"cacheRead"`
	CacheWrite float64 `json:"cacheWrite"`
}

// Permissions holds the rule lists and mode of the permission policy.
type Permissions struct {
	Allow []string `json:"allow"`
	Ask   []string `json:"ask"`
	Deny  []string `json:"deny"`
	// DefaultMode is the session's permission mode; empty means "default".
	DefaultMode           string   `json:"defaultMode"`
	AdditionalDirectories []string `json:"additionalDirectories"`
	// Task maps agent-name patterns to allow, ask or deny: which agents
	// may be spawned (OpenCode's permission.task). Order matters: the last
	// matching rule wins, and layers append theirs after earlier ones'.
	Task permission.TaskRules `json:"task"`
}

// Overrides are the settings given on the command line.
type Overrides struct {
	Model    string
	MaxTurns *int
	// PermissionMode sets permissions.defaultMode.
	PermissionMode string
	// AllowedTools and DisallowedTools hold rule lists as the flags take
	// them: each element one rule or several, separated by commas or spaces
	// ("Bash(git diff:*) Edit,Read").
	AllowedTools, DisallowedTools []string
	// AdditionalDirectories are added to permissions.additionalDirectories
	// (--add-dir).
	AdditionalDirectories []string
	// Settings is --settings: a settings file's path, or settings as JSON
	// text. It is read as a layer above the files and below the flags.
	Settings string
	// Agents are agent definitions keyed by name, as settings' "agents"
	// holds them (--agents); each replaces the layers' agent of its name.
	Agents json.RawMessage
}

func (o Overrides) set() bool {
	return o.Model != "" || o.MaxTurns != nil || o.PermissionMode != "" ||
		len(o.AllowedTools) > 0 || len(o.DisallowedTools) > 0 ||
		len(o.AdditionalDirectories) > 0 || o.Settings != "" || len(o.Agents) > 0
}

// Rules parses the permission rule lists. A deny or ask rule whose tool
// differs from a known tool's name only by case ("bash") is taken to name
// that tool: a restriction that missed by case would fail open, silently.
// Allow rules stay exact, since reading one more widely grants more. Load
// warns about such names either way.
func (s Settings) Rules() (permission.Rules, error) {
	var r permission.Rules
	for _, l := range []struct {
		key string
		src []string
		dst *[]permission.Rule
	}{
		{"allow", s.Permissions.Allow, &r.Allow},
		{"ask", s.Permissions.Ask, &r.Ask},
		{"deny", s.Permissions.Deny, &r.Deny},
	} {
		for i, text := range l.src {
			rule, err := permission.ParseRule(text)
			if err != nil {
				return permission.Rules{}, fmt.Errorf("permissions.%s[%d]: %w", l.key, i, err)
			}
			*l.dst = append(*l.dst, rule)
		}
	}
	return r, nil
}

// Mode is the permission mode the settings ask for: defaultMode, or
// permission.ModeDefault when unset.
func (s Settings) Mode() (permission.Mode, error) {
	if s.Permissions.DefaultMode == "" {
		return permission.ModeDefault, nil
	}
	m, err := permission.ParseMode(s.Permissions.DefaultMode)
	if err != nil {
		return "", fmt.Errorf("permissions.defaultMode: %w", err)
	}
	return m, nil
}

// Compaction is the settings' "compaction" block: when a session's context
// passes Threshold of the model's window, older turns are summarised.
type Compaction struct {
	// Disabled turns automatic compaction off.
	Disabled bool `json:"disabled"`
	// Threshold is the share of the window that triggers it (0 < t ≤ 1;
	// 0 means 0.8).
	Threshold float64 `json:"threshold"`
	// KeepRecent is how many recent messages stay word for word (0 means 6).
	KeepRecent int `json:"keepRecent"`
	// Window overrides the model's context window, in tokens.
	Window int64 `json:"window"`
}
