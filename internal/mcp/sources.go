package mcp

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"

	"github.com/cadre-dev/cadre/internal/config"
)

// ProjectFile is the project's server file, at the project root.
const ProjectFile = ".mcp.json"

// Sources is everything that decides which servers a runtime starts.
type Sources struct {
	// Cwd is the project root, where .mcp.json is read.
	Cwd string
	// Settings are the layers' mcpServers and the approval keys, merged.
	Settings *config.Loaded
	// Flags are the --mcp-config values (files or JSON strings); Strict
	// (--strict-mcp-config) uses them alone.
	Flags  []string
	Strict bool
}

// Plan is the outcome of Resolve: the servers to start, and those that
// will not start (a project server nobody approved, a disabled or broken
// one), with their status saying why.
type Plan struct {
	Start []Server
	Held  []Status
}

// Resolve decides the servers. Later sources win by name: user settings,
// project settings, local settings, .mcp.json, then --mcp-config.
//
// Servers from the repository — .mcp.json and the project's shared
// settings — are a trust boundary: they name commands to run, and cloning
// a repository must not run them. Such a server starts only when the
// user's own settings (user or local layer) approve it, with
// enableAllProjectMcpServers or by name in enabledMcpjsonServers, and is
// not in disabledMcpjsonServers; otherwise it is held with state
// needs-approval. A held server never shadows a trusted one of the same
// name. A definition that does not parse is held as failed; a broken
// --mcp-config is an error, since the user gave it on purpose.
func Resolve(src Sources) (Plan, error) {
	type cand struct {
		srv     Server
		project bool
		err     error
	}
	var cands []cand
	if !src.Strict && src.Settings != nil {
		for _, l := range src.Settings.MCP {
			for _, name := range slices.Sorted(maps.Keys(l.Servers)) {
				c, err := ParseConfig(name, l.Servers[name])
				cands = append(cands, cand{srv: Server{Name: name, Config: c, Source: "settings " + l.Path}, project: l.Scope == config.ScopeProject, err: err})
			}
		}
		path := filepath.Join(src.Cwd, ProjectFile)
		if data, err := os.ReadFile(path); err == nil {
			var doc struct {
				MCPServers map[string]json.RawMessage `json:"mcpServers"`
			}
			if err := json.Unmarshal(data, &doc); err != nil {
				cands = append(cands, cand{srv: Server{Name: ProjectFile, Source: path}, err: fmt.Errorf("%s: %w", path, err), project: true})
			}
			for _, name := range slices.Sorted(maps.Keys(doc.MCPServers)) {
				c, err := ParseConfig(name, doc.MCPServers[name])
				if err != nil {
					err = fmt.Errorf("%s: %w", path, err)
				}
				cands = append(cands, cand{srv: Server{Name: name, Config: c, Source: ProjectFile}, project: true, err: err})
			}
		}
	}
	for _, f := range src.Flags {
		servers, err := ReadFlag(f, src.Cwd)
		if err != nil {
			return Plan{}, err
		}
		for _, s := range servers {
			cands = append(cands, cand{srv: s})
		}
	}
	var s config.Settings
	if src.Settings != nil {
		s = src.Settings.Settings
	}
	chosen := map[string]cand{}
	held := map[string]Status{}
	var order []string
	for _, c := range cands {
		name := c.srv.Name
		if !slices.Contains(order, name) {
			order = append(order, name)
		}
		st := Status{Name: name, Source: c.srv.Source, Transport: c.srv.Config.Type}
		switch {
		case c.err != nil:
			st.State, st.Err = StateFailed, c.err.Error()
		case c.srv.Config.Type == TransportSDK:
			st.State, st.Err = StateFailed, "an Agent SDK server (type sdk) runs in the SDK's process and is reached over the control protocol, which cadre's MCP client does not support yet"
		case c.project && slices.Contains(s.DisabledMcpjsonServers, name):
			st.State, st.Err = StateDisabled, "listed in disabledMcpjsonServers"
		case c.project && (src.Settings == nil || !src.Settings.ProjectMCP(name)):
			st.State, st.Err = StateNeedsApproval, "a project server starts only in a trusted workspace: review what the project asks for and trust it with `cadre trust` (enableAllProjectMcpServers and enabledMcpjsonServers no longer approve on their own)"
		default:
			chosen[name] = c
			delete(held, name)
			continue
		}
		if _, ok := chosen[name]; !ok {
			held[name] = st
		}
	}
	var plan Plan
	for _, name := range order {
		if c, ok := chosen[name]; ok {
			c.srv.Project = c.project
			plan.Start = append(plan.Start, c.srv)
		} else if st, ok := held[name]; ok {
			plan.Held = append(plan.Held, st)
		}
	}
	return plan, nil
}
