package agent

import (
	"fmt"
	"strings"

	"github.com/cadre-dev/cadre/internal/excerpt"
)

// Format says which file format (or API) a definition was written in; it
// decides how the name is found and which defaults apply.
type Format string

const (
	// FormatClaude is Claude Code's agent file: user dir, .claude/agents,
	// .cadre/agents.
	FormatClaude Format = "claude"
	// FormatOpenCode is OpenCode's agent file: .opencode/agent(s).
	FormatOpenCode Format = "opencode"
	// FormatHarness is the harness's declaration file: workspace/subagents.
	// SDK declarations may carry it too to get the harness defaults.
	FormatHarness Format = "harness"
	// FormatJSON is an entry of the settings' "agents" object.
	FormatJSON Format = "json"
	// FormatSDK is a Go SDK declaration or factory result.
	FormatSDK Format = "sdk"
	// FormatBuiltin is a definition compiled into cadre.
	FormatBuiltin Format = "builtin"
)

// Sources, in precedence order (later wins by name).
const (
	SourceBuiltin  = "built-in"
	SourceUser     = "user"
	SourceProject  = "project"
	SourceSettings = "settings"
	SourceSDK      = "sdk"
)

// Values accepted by the validated fields.
const (
	ModePrimary  = "primary"
	ModeSubagent = "subagent"
	ModeAll      = "all"

	WorkspaceIsolated = "isolated"
	WorkspaceShared   = "shared"

	IsolationWorktree = "worktree"
	IsolationRemote   = "remote"

	// DefaultHarnessMaxTurns is the turn limit of a harness-format
	// declaration that sets none.
	DefaultHarnessMaxTurns = 10
)

// Definition is one named agent role: what a subagent run of it sees and
// may do. Fields hold what the source said, validated and normalised
// (names case-folded, permission mode spelled canonically); "" or nil means
// "not set", which the runtime reads as "inherit or default".
type Definition struct {
	// Name is the agent id, case-folded (see ValidateName).
	Name string
	// Description tells the parent model when to use the agent.
	Description string
	// Prompt is the system prompt base: a markdown body or JSON "prompt".
	Prompt string

	// Tools is the allowlist; nil or ["*"] means every available tool and
	// an empty non-nil slice means none.
	Tools           []string
	DisallowedTools []string
	// Model is "" (the default chain), "inherit", an alias (sonnet, opus,
	// haiku), provider:model or provider/model, as written.
	Model string
	// Effort is the reasoning effort or thinking level, as written.
	Effort string
	// PermissionMode is "" or one of plan, default, acceptEdits,
	// bypassPermissions.
	PermissionMode string
	Background     bool
	// Isolation is "", "worktree" or "remote".
	Isolation string
	// MaxTurns bounds a run; 0 means the run's own limit.
	MaxTurns int
	// Memory is "", "user", "project" or "local".
	Memory string

	// Stored for later use; checked for type only.
	MCPServers         []any
	RequiredMCPServers []string
	Hooks              any
	Skills             []string

	InitialPrompt string
	Color         string
	// Hidden agents are left out of listings and @ completion but stay
	// callable.
	Hidden bool
	// AllowAgents are the other agents this one may start by name through
	// the gateway's sessions_spawn (S-P1), "*" meaning any; nil falls back
	// to the settings' subagents.allowAgents.
	AllowAgents []string
	// OmitClaudeMD, Claude Code's omitClaudeMd: as a subagent the agent
	// runs without the CLAUDE.md files, AGENTS.md and TOOLS.md only (S-E4).
	OmitClaudeMD bool
	// Mode is "primary", "subagent" or "all"; "" means all.
	Mode        string
	Temperature *float64
	// Workspace is nil for the format's default (see Resolve).
	Workspace *Workspace

	// URL (an absolute http or https URL) declares a remote agent.
	URL     string
	Headers map[string]string

	// TaskRules are the definition's permission.task rules, in order.
	TaskRules []TaskRule
	// Allow, Ask and Deny are Claude Code-syntax permission rules derived
	// from an OpenCode-style permission map ("Bash(git *)", "Edit", …).
	Allow, Ask, Deny []string

	// Provenance.
	Format Format
	Source string // SourceBuiltin, SourceUser, SourceProject, SourceSettings or SourceSDK
	Path   string // the file that declared it; the settings file for FormatJSON
	Line   int

	// Warnings are non-fatal findings, each prefixed with its location.
	Warnings []string
}

// Workspace is a definition's workspace block (DESIGN.md S-D5).
type Workspace struct {
	// Mode is "isolated" or "shared".
	Mode string
	// Path is a definition workspace: a directory whose AGENTS.md is the
	// prompt base. Relative paths resolve against the main workspace.
	Path string
}

// TaskRule is one permission.task rule: agent-name pattern → allow, ask or
// deny. Order matters (the last matching rule wins).
type TaskRule struct {
	Pattern string
	Action  string
}

// Problem is something wrong with one definition: a file that does not
// parse, a bad value, a factory that failed.
type Problem struct {
	Path    string
	Line    int // 0 when the source has no lines (settings, SDK)
	Name    string
	Message string
}

// Error formats the problem as "path:line: message".
func (p *Problem) Error() string {
	switch {
	case p.Path == "":
		return p.Message
	case p.Line > 0:
		return fmt.Sprintf("%s:%d: %s", p.Path, p.Line, p.Message)
	default:
		return p.Path + ": " + p.Message
	}
}

// Entry is one definition as seen by Load, for listings such as
// `cadre agents`.
type Entry struct {
	Definition Definition
	// Active is true for the definition Get returns for its name.
	Active bool
	// ShadowedBy names where the active definition of the same name came
	// from, when this valid one lost to it.
	ShadowedBy string
	// Err is set when the definition is invalid (it was not loaded).
	Err error
}

// ValidateName checks an agent id against DESIGN.md S-C2:
// [a-z0-9][a-z0-9_-]{0,63} after ASCII case folding. Names become
// directory names (agents/<name>/workspace), so anything that could leave
// a directory is refused.
func ValidateName(name string) error {
	switch {
	case name == "":
		return fmt.Errorf("agent name is empty: want 1 to 64 letters, digits, '_' or '-'")
	case strings.ContainsAny(name, `/\`) || strings.Contains(name, ".."):
		return fmt.Errorf("agent name %s is refused: it contains a path separator or \"..\" (path traversal); want letters, digits, '_' or '-'", excerpt.Quote(name))
	case len(name) > 64:
		return fmt.Errorf("agent name %s is %d characters long: at most 64 are allowed", excerpt.Quote(name), len(name))
	}
	for i, r := range name {
		ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9'
		if i > 0 {
			ok = ok || r == '_' || r == '-'
		}
		if !ok {
			if i == 0 && (r == '_' || r == '-') {
				return fmt.Errorf("agent name %s must start with a letter or digit", excerpt.Quote(name))
			}
			return fmt.Errorf("agent name %s has a bad character %q: only letters, digits, '_' and '-' are allowed", excerpt.Quote(name), r)
		}
	}
	return nil
}

// foldName folds ASCII letters only, so that no other rune (the Kelvin
// sign lowers to 'k') can alias a valid name.
func foldName(name string) string {
	b := []byte(name)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}
