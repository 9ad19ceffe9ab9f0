package spawnpolicy

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/cadre-dev/cadre/internal/agent"
	"github.com/cadre-dev/cadre/internal/config"
	"github.com/cadre-dev/cadre/internal/permission"
	"github.com/cadre-dev/cadre/internal/provider"
	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/tool"
)

// Place is where a child works.
type Place struct {
	// Root is its workspace root, which bounds what it may touch; Cwd its
	// working directory, inside Root or a directory the user added.
	Root, Cwd string
	// PromptBase is its workspace's prompt base, if any (S-D5).
	PromptBase string
}

// Where decides where a child of definition def works, its parent's policy
// being parent (its Workspace the parent's root) and mainCwd the main
// workspace. cwd is the one the call asked for ("" for none; relative to
// callerCwd); recorded says it is where a continued agent worked before,
// checked when it started.
//
// Where the parent may work bounds where its child may: the child's
// workspace root is the parent's, or its definition's own workspace (S-D5)
// when that lies inside it; a worktree child gets its checkout later. Path
// rules stay anchored to the project whatever the root (Policy.Project).
func Where(parent permission.Policy, mainCwd string, def agent.Definition, callerCwd, cwd string, recorded bool) (Place, error) {
	ws, err := def.Resolve(mainCwd)
	if err != nil {
		return Place{}, fmt.Errorf("agent %q: %w", def.Name, err)
	}
	p := Place{Root: parent.Workspace, Cwd: parent.Workspace, PromptBase: ws.PromptBase}
	if filepath.Clean(ws.Cwd) != filepath.Clean(mainCwd) {
		if !parent.Contains(ws.Cwd) {
			return Place{}, fmt.Errorf("agent %q: its workspace %s is outside the workspace (%s); an agent's workspace must lie inside it or in a directory the user added (permissions.additionalDirectories)", def.Name, ws.Cwd, parent.Workspace)
		}
		p.Root, p.Cwd = ws.Cwd, ws.Cwd
	}
	if cwd == "" {
		return p, nil
	}
	asked := cwd
	if !filepath.IsAbs(cwd) {
		cwd = filepath.Join(callerCwd, cwd)
	}
	cwd = filepath.Clean(cwd)
	if st, err := os.Stat(cwd); err != nil || !st.IsDir() {
		return Place{}, fmt.Errorf("cwd %q is not a directory", asked)
	}
	p.Cwd = cwd
	switch {
	case recorded:
		// A continued agent goes on where it worked before (its kept
		// worktree, say), which was checked when it started.
		p.Root = cwd
	case !parent.Contains(cwd):
		return Place{}, fmt.Errorf("cwd %q is outside the workspace (%s): a subagent works inside its parent's workspace or a directory the user added (permissions.additionalDirectories)", asked, parent.Workspace)
	}
	return p, nil
}

// Models picks children's models.
type Models struct {
	// Resolve builds the model with this name.
	Resolve func(name string) (llm.Model, provider.Ref, error)
	// Parse says which provider a model name selects, reading nothing;
	// nil parses with no aliases or custom providers.
	Parse func(name string) (provider.Ref, error)
	// Default is subagents.model ("" for none).
	Default string
}

// Choose picks the child's model (S-A3): the call's, the definition's, the
// subagents default, else the parent's. "inherit" means the parent's; a
// name that does not resolve is skipped with a warning.
//
// The call's model comes from a model's tool input, and may not be the
// scripted model: its name is a file path, and loading it reads that file.
// Only the user picks it (--model, settings, an agent definition).
//
// The agent's own model failing for want of its key (a provider
// profile's apiKeyEnv unset) is an error, not a fallback: the definition
// chose that account, and the parent's would get work meant for another.
func (m Models) Choose(call, def string, parent llm.Model, parentRef provider.Ref) (llm.Model, provider.Ref, []string, error) {
	var warnings []string
	type candidate struct {
		name, from string
		byTool     bool // named in a model's tool call
	}
	for _, cand := range []candidate{{call, "the call's model", true}, {def, "the agent's model", false}, {m.Default, "subagents.model", false}} {
		if cand.name == "" {
			continue
		}
		if cand.name == "inherit" {
			break
		}
		if cand.byTool && m.scripted(cand.name) {
			warnings = append(warnings, fmt.Sprintf("%s %q cannot be used (a tool call cannot choose the scripted model; only --model, settings or an agent definition can); falling back", cand.from, cand.name))
			continue
		}
		model, ref, err := m.Resolve(cand.name)
		if err == nil {
			return model, ref, warnings, nil
		}
		if le := (*llm.Error)(nil); cand.from == "the agent's model" && errors.As(err, &le) && le.Kind == llm.ErrAuth {
			return nil, provider.Ref{}, nil, fmt.Errorf("its model %q cannot be used and no other account stands in for it: %w", cand.name, err)
		}
		warnings = append(warnings, fmt.Sprintf("%s %q cannot be used (%v); falling back", cand.from, cand.name, err))
	}
	return parent, parentRef, warnings, nil
}

// scripted reports whether name selects the scripted model, without
// building (or reading) anything.
func (m Models) scripted(name string) bool {
	parse := m.Parse
	if parse == nil {
		parse = func(n string) (provider.Ref, error) { return provider.Parse(n, provider.Config{}) }
	}
	ref, err := parse(name)
	return err == nil && ref.Provider == "script"
}

// Rules builds the policy a child runs under from base, the runtime's: its
// mode, its workspace root (with the parent's workspace added when the
// root is another), and its definition's allow, ask and deny rules added
// to the runtime's. allowed (a fork command's allowed-tools) allows what
// it names too, unless grantNothing (an untrusted project wrote it).
func Rules(base permission.Policy, mode permission.Mode, root, parentWorkspace string, def agent.Definition, allowed []string, grantNothing bool) (permission.Policy, error) {
	pol := base
	pol.Mode = mode
	pol.Workspace = root
	if root != parentWorkspace {
		pol.AdditionalDirs = append(slices.Clone(pol.AdditionalDirs), parentWorkspace)
	}
	pol.Rules = permission.Rules{
		Allow: slices.Clone(pol.Rules.Allow), Ask: slices.Clone(pol.Rules.Ask), Deny: slices.Clone(pol.Rules.Deny),
	}
	for _, l := range []struct {
		in  []string
		out *[]permission.Rule
	}{{def.Allow, &pol.Rules.Allow}, {def.Ask, &pol.Rules.Ask}, {def.Deny, &pol.Rules.Deny}} {
		for _, raw := range l.in {
			r, err := permission.ParseRule(raw)
			if err != nil {
				return permission.Policy{}, fmt.Errorf("agent %q: permission rule %q: %w", def.Name, raw, err)
			}
			*l.out = append(*l.out, r)
		}
	}
	if grantNothing {
		return pol, nil
	}
	for _, raw := range allowed {
		r, err := permission.ParseRule(raw)
		if err != nil {
			return permission.Policy{}, fmt.Errorf("allowed-tools entry %q: %w", raw, err)
		}
		pol.Rules.Allow = append(pol.Rules.Allow, r)
	}
	return pol, nil
}

// TaskRules are the task rules of def's runs: what they may spawn.
func TaskRules(def agent.Definition) (permission.TaskRules, error) {
	pairs := make([][2]string, len(def.TaskRules))
	for i, r := range def.TaskRules {
		pairs[i] = [2]string{r.Pattern, r.Action}
	}
	rules, err := permission.ParseTaskRules(pairs)
	if err != nil {
		return nil, fmt.Errorf("agent %q: permission.task: %w", def.Name, err)
	}
	return rules, nil
}

// Tools chooses a child's tools from the pool (S-P2): those its
// definition's tools name (all, without the field or with "*") and its
// disallowedTools do not, that the subagent tool policy (subagents.tools)
// lets through, and, when Only is set (a fork command's allowed-tools),
// that it names.
type Tools struct {
	Def      agent.Definition
	Settings config.SubagentTools
	Only     []string
	// Team, when set, says which tools come with being on a team: a
	// teammate gets them whatever its definition lists.
	Team func(name string) bool
}

// Keep reports whether the child gets the tool info describes.
func (f Tools) Keep(info tool.Info) bool {
	allowAll := f.Def.Tools == nil || slices.Contains(f.Def.Tools, "*")
	team := f.Team != nil && f.Team(info.Name)
	if !allowAll && !team && !Named(f.Def.Tools, info.Name, info.Aliases) {
		return false
	}
	if f.Only != nil && !Named(f.Only, info.Name, info.Aliases) {
		return false
	}
	if Named(f.Def.DisallowedTools, info.Name, info.Aliases) || Named(f.Settings.Deny, info.Name, info.Aliases) {
		return false
	}
	return len(f.Settings.Allow) == 0 || Named(f.Settings.Allow, info.Name, info.Aliases)
}

// Named reports whether list names the tool (or one of its aliases):
// "Bash(git:*)" names Bash, and names may be wildcards ("mcp__github__*"),
// as the settings' subagent tool policy and OpenCode tool maps allow.
func Named(list []string, name string, aliases []string) bool {
	for _, n := range list {
		n, _, _ = strings.Cut(n, "(")
		n = strings.ToLower(strings.TrimSpace(n))
		if permission.WildcardMatch(n, strings.ToLower(name)) ||
			slices.ContainsFunc(aliases, func(a string) bool { return permission.WildcardMatch(n, strings.ToLower(a)) }) {
			return true
		}
	}
	return false
}

// Definitions finds agent definitions by name: agent.Registry.
type Definitions interface {
	Get(name string) (agent.Definition, bool)
}

// Route picks the definition for a call's subagent_type (S-A2): the named
// agent, or general-purpose when none is named. A primary agent, or a
// remote one without a url, cannot be spawned. available lists the agents
// the caller may use, for the model to pick from when its choice fails.
func Route(defs Definitions, name string, available func() []string) (agent.Definition, error) {
	if name == "" {
		name = agent.GeneralPurposeName
	}
	if err := agent.ValidateName(name); err != nil {
		return agent.Definition{}, fmt.Errorf("invalid subagent_type: %w", err)
	}
	def, ok := defs.Get(name)
	if !ok {
		return agent.Definition{}, fmt.Errorf("unknown subagent_type %q; available agents: %s", name, strings.Join(available(), ", "))
	}
	if def.Mode == "primary" {
		return agent.Definition{}, fmt.Errorf("agent %q is a primary agent, not a subagent; available agents: %s", def.Name, strings.Join(available(), ", "))
	}
	if def.Isolation == agent.IsolationRemote && def.URL == "" {
		return agent.Definition{}, fmt.Errorf("agent %q has isolation: remote but no url: a remote agent is reached at the http(s) url of its definition", def.Name)
	}
	return def, nil
}
