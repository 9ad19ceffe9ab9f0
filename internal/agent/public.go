package agent

import (
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/cadre-dev/cadre/agent"
	"github.com/cadre-dev/cadre/event"
)

// FromPublic converts a declaration for the registry, which validates it.
func FromPublic(a agent.Definition) Definition {
	d := Definition{
		Name: a.Name, Description: a.Description, Prompt: a.Prompt,
		Tools: slices.Clone(a.Tools), DisallowedTools: slices.Clone(a.DisallowedTools),
		Model: a.Model, PermissionMode: string(a.PermissionMode), Background: a.Background,
		Isolation: string(a.Isolation), MaxTurns: a.MaxTurns, Hidden: a.Hidden, Mode: string(a.Mode),
		Allow: slices.Clone(a.Allow), Ask: slices.Clone(a.Ask), Deny: slices.Clone(a.Deny),
		Format: Format(a.Format), URL: a.URL, Headers: maps.Clone(a.Headers),
	}
	if a.Workspace != nil {
		d.Workspace = &Workspace{Mode: string(a.Workspace.Mode), Path: a.Workspace.Path}
	}
	for _, r := range a.TaskRules {
		d.TaskRules = append(d.TaskRules, TaskRule{Pattern: r.Pattern, Action: string(r.Action)})
	}
	return d
}

// Public converts a registry definition for SDK users.
func (d Definition) Public() agent.Definition {
	a := agent.Definition{
		Name: d.Name, Description: d.Description, Prompt: d.Prompt,
		Tools: slices.Clone(d.Tools), DisallowedTools: slices.Clone(d.DisallowedTools),
		Model: d.Model, PermissionMode: event.PermissionMode(d.PermissionMode), Background: d.Background,
		Isolation: agent.Isolation(d.Isolation), MaxTurns: d.MaxTurns, Hidden: d.Hidden, Mode: agent.Mode(d.Mode),
		Allow: slices.Clone(d.Allow), Ask: slices.Clone(d.Ask), Deny: slices.Clone(d.Deny),
		Format: agent.Format(d.Format), URL: d.URL, Headers: maps.Clone(d.Headers),
	}
	if d.Workspace != nil {
		a.Workspace = &agent.Workspace{Mode: agent.WorkspaceMode(d.Workspace.Mode), Path: d.Workspace.Path}
	}
	for _, r := range d.TaskRules {
		a.TaskRules = append(a.TaskRules, agent.TaskRule{Pattern: r.Pattern, Action: agent.RuleAction(r.Action)})
	}
	return a
}

// Public converts a registry entry for SDK users.
func (e Entry) Public() agent.Entry {
	return agent.Entry{
		Agent: e.Definition.Public(), Source: agent.Source(e.Definition.Source),
		Path: e.Definition.Path, Line: e.Definition.Line, Warnings: slices.Clone(e.Definition.Warnings),
		Active: e.Active, ShadowedBy: e.ShadowedBy, Err: e.Err,
	}
}

// Declarations converts the SDK's Options.Agents and AgentFactories for
// the registry. A Format other than the two a declaration may carry is
// refused here; the registry checks the rest.
func Declarations(agents []agent.Definition, factoryFuncs []func() ([]agent.Definition, error)) ([]Definition, []func() ([]Definition, error), error) {
	var errs []error
	var defs []Definition
	for i, a := range agents {
		if err := checkFormat(a); err != nil {
			errs = append(errs, fmt.Errorf("Options.Agents[%d]: %w", i, err))
		}
		defs = append(defs, FromPublic(a))
	}
	var factories []func() ([]Definition, error)
	for i, f := range factoryFuncs {
		if f == nil {
			errs = append(errs, fmt.Errorf("Options.AgentFactories[%d] is nil", i))
			continue
		}
		factories = append(factories, func() ([]Definition, error) {
			as, err := f()
			if err != nil {
				return nil, err
			}
			out := make([]Definition, len(as))
			for j, a := range as {
				if err := checkFormat(a); err != nil {
					return nil, fmt.Errorf("definition %d: %w", j+1, err)
				}
				out[j] = FromPublic(a)
			}
			return out, nil
		})
	}
	return defs, factories, errors.Join(errs...)
}

func checkFormat(a agent.Definition) error {
	switch a.Format {
	case "", agent.FormatSDK, agent.FormatHarness:
		return nil
	}
	return fmt.Errorf("agent %q: Format: %q is not for declarations: want %q or %q", a.Name, a.Format, agent.FormatSDK, agent.FormatHarness)
}
