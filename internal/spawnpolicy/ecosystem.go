package spawnpolicy

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/cadre-dev/cadre/internal/agent"
	"github.com/cadre-dev/cadre/internal/hook"
	"github.com/cadre-dev/cadre/internal/memory"
	"github.com/cadre-dev/cadre/internal/permission"
)

// Memory gives a definition with a memory scope its memory directory on
// pol: the allow rules to read and change it, and the lifting of its
// protection as part of .claude. It returns the directory ("" for none).
func Memory(def agent.Definition, mainCwd string, pol *permission.Policy) (string, error) {
	dir := memory.Dir(def.Memory, def.Name, mainCwd, pol.Home)
	if dir == "" {
		return "", nil
	}
	if err := memory.CheckDir(dir, memory.Root(def.Memory, mainCwd, pol.Home)); err != nil {
		return "", fmt.Errorf("agent %q: %w", def.Name, err)
	}
	pol.Writable = append(slices.Clone(pol.Writable), dir)
	for _, raw := range memory.Rules(dir) {
		r, err := permission.ParseRule(raw)
		if err != nil {
			return "", fmt.Errorf("agent %q: memory rule %q: %w", def.Name, raw, err)
		}
		pol.Rules.Allow = append(pol.Rules.Allow, r)
	}
	return dir, nil
}

// ErrProjectHooks is OwnHooks' reason for not running a project's agent
// file's hooks.
var ErrProjectHooks = errors.New("the agent file's hooks did not run: they are the project's, which runs them only once trusted (cadre trust)")

// OwnHooks are the hooks of def's own file that may run for its runs: none
// with disableAllHooks (disableAll), and a project's only with
// enableProjectHooks (project): they are commands the repository chose.
// An error says why hooks the file has do not run.
func OwnHooks(def agent.Definition, project, disableAll bool) (hook.Config, error) {
	if def.Hooks == nil || disableAll {
		return nil, nil
	}
	if !project && !personal(def) {
		return nil, ErrProjectHooks
	}
	return DefinitionHooks(def)
}

// personal reports whether a definition is the user's own (their agent
// files, built-ins, code), whose hooks run without the project's approval.
func personal(def agent.Definition) bool {
	switch def.Source {
	case agent.SourceUser, agent.SourceBuiltin, agent.SourceSDK:
		return true
	}
	return false
}

// DefinitionHooks is the engine configuration of a definition's hooks
// field. As in Claude Code, a Stop hook in an agent file fires when that
// agent stops: on SubagentStop.
func DefinitionHooks(def agent.Definition) (hook.Config, error) {
	if def.Hooks == nil {
		return nil, nil
	}
	raw, err := json.Marshal(def.Hooks)
	if err != nil {
		return nil, fmt.Errorf("hooks: %w", err)
	}
	set, err := hook.ParseSettings(raw)
	if err != nil {
		return nil, err
	}
	if stop, ok := set[string(hook.Stop)]; ok {
		delete(set, string(hook.Stop))
		set[string(hook.SubagentStop)] = append(set[string(hook.SubagentStop)], stop...)
	}
	c, _, err := set.Config(def.Path+": hooks", "")
	return c, err
}
