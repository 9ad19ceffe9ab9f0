package app

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/cadre-dev/cadre/internal/agent"
	"github.com/cadre-dev/cadre/internal/config"
	"github.com/cadre-dev/cadre/internal/hook"
	"github.com/cadre-dev/cadre/internal/permission"
	"github.com/cadre-dev/cadre/internal/trust"
	"github.com/cadre-dev/cadre/tool"
)

// withTools is the base pool of every agent: the built-in tools, then
// Options.Tools. An added tool may not take a name (or alias) that a
// built-in or an earlier added tool has: the model could not tell them
// apart, and rules naming the tool would apply to both.
func withTools(builtins, added []tool.Tool) ([]tool.Tool, error) {
	owner := map[string]string{}
	for _, t := range builtins {
		info := t.Info()
		for _, n := range append([]string{info.Name}, info.Aliases...) {
			owner[n] = "the built-in tool " + info.Name
		}
	}
	out := append([]tool.Tool(nil), builtins...)
	for i, t := range added {
		if t == nil {
			return nil, fmt.Errorf("Options.Tools[%d] is nil", i)
		}
		info := t.Info()
		if info.Name == "" {
			return nil, fmt.Errorf("Options.Tools[%d] has no name", i)
		}
		for _, n := range append([]string{info.Name}, info.Aliases...) {
			if o, taken := owner[n]; taken {
				return nil, fmt.Errorf("Options.Tools[%d]: tool %q: the name %q is taken by %s", i, info.Name, n, o)
			}
			owner[n] = fmt.Sprintf("Options.Tools[%d] (%s)", i, info.Name)
		}
		out = append(out, t)
	}
	// Clipped: each run appends its spawn tools to a copy.
	return slices.Clip(out), nil
}

// Offered reports whether t is in the pool names allows (Options.ToolNames):
// nil allows every tool.
func Offered(t tool.Tool, names []string) bool {
	if names == nil {
		return true
	}
	info := t.Info()
	return slices.ContainsFunc(names, func(n string) bool { return n == info.Name || slices.Contains(info.Aliases, n) })
}

// ToolNames is Config.ToolNames: the whole pool when not nil (--tools).
func (a *App) ToolNames() []string { return a.cfg.ToolNames }

func hasTool(tools []tool.Tool, name string) bool {
	for _, t := range tools {
		if t.Info().Name == name {
			return true
		}
	}
	return false
}

// hookEngine is the runtime's hooks: the settings' command hooks, layer by
// layer (none with disableAllHooks; the project's only in a trusted
// workspace), then Config.Hooks.
func (a *App) hookEngine(env []string) (*hook.Engine, error) {
	var configs []hook.Config
	s := a.Cfg.Settings
	for _, l := range a.Cfg.Hooks {
		if s.DisableAllHooks {
			break
		}
		if l.Scope == config.ScopeProject && !a.Cfg.ProjectHooks() {
			continue // listed in the workspace's trust warning
		}
		c, warnings, err := l.Hooks.Config(l.Path+": hooks", "")
		if err != nil {
			return nil, err
		}
		a.Warnings = append(a.Warnings, warnings...)
		configs = append(configs, c)
	}
	if len(a.cfg.Hooks) > 0 {
		configs = append(configs, a.cfg.Hooks)
	}
	o := hook.Options{ProjectDir: a.Cwd, Env: env, Logger: a.Log, HideEnv: a.Sandbox.HideEnv}
	if s.Sandbox.Hooks {
		o.Sandbox = a.Sandbox
	}
	return hook.New(o, configs...)
}

// loadAgents loads the agent registry — files, settings and the
// program's declarations — and applies the main agent's definition.
// A broken or mistyped agent file is reported by every run, not only by
// `cadre agents`: once per file, with file:line.
func (a *App) loadAgents() error {
	// A factory is called once: a reload (CreateAgent) reuses its answer.
	factories := slices.Clone(a.cfg.Factories)
	for i, f := range factories {
		factories[i] = sync.OnceValues(f)
	}
	a.AgentLoad = agent.LoadOptions{
		Cwd: a.Cwd, UserDir: filepath.Join(a.Cfg.Home, "agents"),
		Settings: a.Cfg.Settings.Agents, SettingsFile: "settings (agents)",
		Declared: a.cfg.Declared, Factories: factories,
		KnownProvider: a.ProviderConfig().Known,
	}
	if !a.cfg.Trusted {
		a.AgentLoad.Narrow = func(d *agent.Definition) { trust.NarrowAgent(d) }
	}
	a.Agents = agent.Load(a.AgentLoad)
	if err := sdkProblems(a.Agents); err != nil {
		return err
	}
	if err := a.asMainAgent(); err != nil {
		return err
	}
	a.Warnings = append(a.Warnings, a.Agents.Report()...)
	return nil
}

// sdkProblems are the registry's findings about the program's
// declarations: errors, unlike a bad file's, since the program that
// declared them can be fixed at once.
func sdkProblems(r *agent.Registry) error {
	var errs []error
	for _, p := range r.Problems() {
		if strings.HasPrefix(p.Path, "SDK ") {
			errs = append(errs, &p)
		}
	}
	if len(errs) == 0 {
		return nil
	}
	return fmt.Errorf("invalid agent declarations: %w", errors.Join(errs...))
}

// asMainAgent makes the main agent run as the definition Config.Agent
// names (Claude Code's --agent): its prompt is the system prompt, its
// tools and disallowedTools bound the main pool, and its model and
// permission mode apply unless the caller set its own. An unknown name is
// a start failure that lists the agents there are.
func (a *App) asMainAgent() error {
	name := strings.TrimSpace(a.cfg.Agent)
	if name == "" {
		return nil
	}
	def, ok := a.Agents.Get(strings.ToLower(name))
	if !ok {
		var known []string
		for _, d := range a.Agents.All() {
			known = append(known, d.Name)
		}
		slices.Sort(known)
		return fmt.Errorf("agent %q (--agent) is not defined; known agents: %s", name, strings.Join(known, ", "))
	}
	if a.SystemPrompt == "" && def.Prompt != "" {
		a.SystemPrompt = def.Prompt
	}
	if a.cfg.Overrides.Model == "" && a.cfg.LLM == nil && def.Model != "" && def.Model != "inherit" {
		a.Cfg.Settings.Model, a.DefaultModel = def.Model, false
	}
	if a.cfg.PermissionMode == "" && def.PermissionMode != "" {
		mode, err := permission.ParseMode(def.PermissionMode)
		if err != nil {
			return fmt.Errorf("agent %q (--agent): %w", def.Name, err)
		}
		a.Policy.Mode = mode
	}
	a.MainAgent = &def
	return nil
}

// MainAgentOffers reports whether the main agent's definition (--agent)
// lets it have t; without one every tool is offered.
func (a *App) MainAgentOffers(t tool.Tool) bool {
	d := a.MainAgent
	if d == nil {
		return true
	}
	info := t.Info()
	if d.Tools != nil && !slices.Contains(d.Tools, "*") && !agentNames(d.Tools, info.Name, info.Aliases) {
		return false
	}
	return !agentNames(d.DisallowedTools, info.Name, info.Aliases)
}

// agentNames reports whether a definition's tool list names the tool:
// "Bash(git:*)" names Bash, and names may be wildcards.
func agentNames(list []string, name string, aliases []string) bool {
	for _, n := range list {
		n, _, _ = strings.Cut(n, "(")
		n = strings.ToLower(strings.TrimSpace(n))
		for _, x := range append([]string{name}, aliases...) {
			if permission.WildcardMatch(n, strings.ToLower(x)) {
				return true
			}
		}
	}
	return false
}
