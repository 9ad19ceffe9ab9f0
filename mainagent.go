package cadre

import (
	"fmt"
	"slices"
	"strings"

	"github.com/cadre-dev/cadre/internal/permission"
	"github.com/cadre-dev/cadre/tool"
)

// asMainAgent makes the main agent run as the definition Options.Agent
// names (Claude Code's --agent): its prompt is the system prompt, its
// tools and disallowedTools bound the main pool, and its model and
// permission mode apply unless Options set their own. An unknown name is
// a start failure that lists the agents there are.
func (r *Runtime) asMainAgent() error {
	name := strings.TrimSpace(r.opts.Agent)
	if name == "" {
		return nil
	}
	def, ok := r.agents.Get(strings.ToLower(name))
	if !ok {
		var known []string
		for _, d := range r.agents.All() {
			known = append(known, d.Name)
		}
		slices.Sort(known)
		return fmt.Errorf("agent %q (--agent) is not defined; known agents: %s", name, strings.Join(known, ", "))
	}
	if r.opts.SystemPrompt == "" && def.Prompt != "" {
		r.opts.SystemPrompt = def.Prompt
	}
	if r.opts.Model == "" && r.opts.LLM == nil && def.Model != "" && def.Model != "inherit" {
		r.cfg.Settings.Model, r.defaultModel = def.Model, false
	}
	if r.opts.PermissionMode == "" && def.PermissionMode != "" {
		mode, err := permission.ParseMode(def.PermissionMode)
		if err != nil {
			return fmt.Errorf("agent %q (--agent): %w", def.Name, err)
		}
		r.policy.Mode = mode
	}
	r.mainAgent = &def
	return nil
}

// mainAgentOffers reports whether the main agent's definition (--agent)
// lets it have t; without one every tool is offered.
func (r *Runtime) mainAgentOffers(t tool.Tool) bool {
	d := r.mainAgent
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
