package agent

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Resolved is where a run of a definition works and what its system
// prompt starts from.
type Resolved struct {
	// Cwd is the run's workspace root.
	Cwd string
	// PromptBase is the definition's part of the system prompt.
	PromptBase string
	// Created is true when Resolve made the isolated workspace directory.
	Created bool
}

// Resolve applies the workspace table (DESIGN.md S-D5) for a run of d
// under the main workspace mainCwd:
//
//	case                       prompt base                    runtime workspace
//	built-in general-purpose   its built-in prompt            mainCwd
//	workspace.path + isolated  <path>/AGENTS.md ("" if none)  <path>
//	workspace.path + shared    <path>/AGENTS.md ("" if none)  mainCwd
//	no path + isolated         the body (Prompt)              mainCwd/agents/<name>/workspace, created
//	no path + shared           the body (Prompt)              mainCwd
//
// A relative workspace.path (and "~/…") resolves against mainCwd (the home
// directory). A Workspace of nil, or with no mode, takes the format's
// default: isolated for harness declarations, shared for every other. A
// remote definition (URL) runs on its server: Resolve gives mainCwd and no
// prompt base. DESIGN.md gives general-purpose no prompt base "beyond the
// subagent context"; its built-in prompt is that context, so it is
// returned like any other body.
func (d Definition) Resolve(mainCwd string) (Resolved, error) {
	main, err := filepath.Abs(mainCwd)
	if err != nil {
		return Resolved{}, fmt.Errorf("agent %s: main workspace %q: %w", d.Name, mainCwd, err)
	}
	if d.URL != "" {
		return Resolved{Cwd: main}, nil
	}
	mode, path := WorkspaceShared, ""
	if d.Format == FormatHarness {
		mode = WorkspaceIsolated
	}
	if d.Workspace != nil {
		if d.Workspace.Mode != "" {
			mode = d.Workspace.Mode
		}
		path = d.Workspace.Path
	}
	if mode != WorkspaceIsolated && mode != WorkspaceShared {
		return Resolved{}, fmt.Errorf("agent %s: workspace mode %q is not valid: want isolated or shared", d.Name, mode)
	}

	if path == "" {
		r := Resolved{Cwd: main, PromptBase: d.Prompt}
		if mode == WorkspaceShared {
			return r, nil
		}
		// The name becomes a directory: never let it leave agents/.
		if err := ValidateName(d.Name); err != nil {
			return Resolved{}, fmt.Errorf("isolated workspace: %w", err)
		}
		r.Cwd = filepath.Join(main, "agents", foldName(d.Name), "workspace")
		if _, err := os.Stat(r.Cwd); errors.Is(err, fs.ErrNotExist) {
			r.Created = true
		}
		if err := os.MkdirAll(r.Cwd, 0o755); err != nil {
			return Resolved{}, fmt.Errorf("agent %s: create isolated workspace: %w", d.Name, err)
		}
		return r, nil
	}

	if rest, ok := strings.CutPrefix(path, "~/"); ok {
		home, err := os.UserHomeDir()
		if err != nil {
			return Resolved{}, fmt.Errorf("agent %s: workspace.path %q: %w", d.Name, path, err)
		}
		path = filepath.Join(home, rest)
	}
	if !filepath.IsAbs(path) {
		path = filepath.Join(main, path)
	}
	path = filepath.Clean(path)
	info, err := os.Stat(path)
	if err != nil {
		return Resolved{}, fmt.Errorf("agent %s: workspace.path: %w", d.Name, err)
	}
	if !info.IsDir() {
		return Resolved{}, fmt.Errorf("agent %s: workspace.path %s is not a directory", d.Name, path)
	}
	base, err := readLimited(filepath.Join(path, "AGENTS.md"))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return Resolved{}, fmt.Errorf("agent %s: read the definition workspace's AGENTS.md: %w", d.Name, err)
	}
	r := Resolved{Cwd: main, PromptBase: strings.TrimSpace(string(base))}
	if mode == WorkspaceIsolated {
		r.Cwd = path
	}
	return r, nil
}
