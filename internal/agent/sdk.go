package agent

import (
	"fmt"
	"strings"
)

// checkCode validates a Go SDK definition with the code rules: what is a
// warning in a file (a workspace path beside a prompt) is an error here,
// since the program's author can fix it at once. A definition whose
// Format is FormatHarness gets the harness defaults (isolated workspace,
// 10 turns when MaxTurns is 0); any other is FormatSDK.
func checkCode(in Definition, where string) (Definition, []*Problem) {
	d := in.clone()
	d.Source, d.Path, d.Line, d.Warnings = SourceSDK, "", 0, nil
	if d.Format != FormatHarness {
		d.Format = FormatSDK
	}
	var problems []*Problem
	bad := func(format string, args ...any) {
		problems = append(problems, &Problem{Path: where, Message: fmt.Sprintf(format, args...)})
	}

	if err := ValidateName(d.Name); err != nil {
		bad("Name: %v", err)
	} else {
		d.Name = foldName(d.Name)
	}
	if d.Description = strings.TrimSpace(d.Description); d.Description == "" {
		bad("Description is required: say when the parent agent should use this agent")
	}
	if d.PermissionMode != "" {
		m, err := checkPermissionMode(d.PermissionMode)
		if err != nil {
			bad("PermissionMode: %v", err)
		}
		d.PermissionMode = m
	}
	enum := func(field string, v *string, allowed ...string) {
		if *v == "" {
			return
		}
		c, err := oneOf(*v, allowed...)
		if err != nil {
			bad("%s: %v", field, err)
		}
		*v = c
	}
	enum("Isolation", &d.Isolation, IsolationWorktree, IsolationRemote)
	enum("Memory", &d.Memory, "user", "project", "local")
	enum("Mode", &d.Mode, ModePrimary, ModeSubagent, ModeAll)
	if d.Workspace != nil {
		enum("Workspace.Mode", &d.Workspace.Mode, WorkspaceIsolated, WorkspaceShared)
	}
	if d.MaxTurns < 0 {
		bad("MaxTurns must not be negative, got %d", d.MaxTurns)
	}
	for _, f := range []struct {
		name string
		list []string
	}{{"Tools", d.Tools}, {"DisallowedTools", d.DisallowedTools}} {
		for i, t := range f.list {
			if strings.TrimSpace(t) == "" {
				bad("%s[%d] is empty", f.name, i)
			}
		}
	}
	for i, r := range d.TaskRules {
		if strings.TrimSpace(r.Pattern) == "" {
			bad("TaskRules[%d]: the pattern is empty", i)
		}
		a, err := checkAction(r.Action)
		if err != nil {
			bad("TaskRules[%d]: %v", i, err)
		}
		d.TaskRules[i].Action = a
	}

	// S-D3: definition workspace, inline prompt and remote URL are
	// mutually exclusive.
	hasPath := d.Workspace != nil && d.Workspace.Path != ""
	if d.URL != "" {
		if err := checkURL(d.URL); err != nil {
			bad("URL: %v", err)
		}
		if hasPath {
			bad("URL cannot be combined with Workspace.Path: a remote agent has no definition workspace")
		}
		if strings.TrimSpace(d.Prompt) != "" {
			bad("URL cannot be combined with Prompt: a remote agent's prompt lives on its server")
		}
	} else if hasPath && strings.TrimSpace(d.Prompt) != "" {
		bad("Workspace.Path cannot be combined with Prompt: the workspace's AGENTS.md is the prompt base")
	}

	if len(problems) > 0 {
		for _, p := range problems {
			p.Name = d.Name
			if d.Name != "" {
				p.Message = fmt.Sprintf("agent %q: %s", d.Name, p.Message)
			}
		}
		return d, problems
	}
	applyDefaults(&d, d.MaxTurns != 0)
	return d, nil
}
