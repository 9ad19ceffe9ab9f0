package app

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/cadre-dev/cadre/internal/agent"
	"github.com/cadre-dev/cadre/internal/event"
	"github.com/cadre-dev/cadre/internal/mcp"
	"github.com/cadre-dev/cadre/internal/sandbox"
	"github.com/cadre-dev/cadre/tool"
)

// MCP servers (docs/mcp.md): the runtime's come from the settings,
// .mcp.json and Options.MCPConfig; an agent definition may add its own for
// its runs.

// defaultMCPWait bounds how long a run's first model call waits for
// servers still starting, unless MCP_TIMEOUT (milliseconds, as Claude Code
// reads it) says otherwise; S-E1's bound for required servers.
const defaultMCPWait = 30 * time.Second

// MCP is the runtime's MCP client: the plan made by New, started on
// first need (a run, MCPServers) so that commands that run nothing
// (sessions, agents) start no server.
type MCP struct {
	plan    mcp.Plan
	manager *mcp.Manager
	wait    time.Duration
	// callTimeout bounds one tool call (MCP_TOOL_TIMEOUT; 0: none).
	callTimeout time.Duration
	start       sync.Once
	// deadline is when the first run stops waiting: start + wait.
	deadline time.Time
	late     sync.Once
}

func (a *App) openMCP() error {
	plan, err := mcp.Resolve(mcp.Sources{Cwd: a.Cwd, Settings: a.Cfg, Flags: a.cfg.MCPConfig, Strict: a.cfg.StrictMCPConfig})
	if err != nil {
		return err
	}
	for _, h := range plan.Held {
		a.Warnings = append(a.Warnings, fmt.Sprintf("MCP server %s (%s) is not started: %s: %s", h.Name, h.Source, h.State, h.Err))
	}
	wait, err := millis(a.Getenv, "MCP_TIMEOUT", defaultMCPWait)
	if err != nil {
		return err
	}
	a.MCP = &MCP{plan: plan, wait: wait}
	if a.MCP.callTimeout, err = millis(a.Getenv, "MCP_TOOL_TIMEOUT", 0); err != nil {
		return err
	}
	a.MCP.manager = a.newMCPManager()
	return nil
}

// newMCPManager makes a manager whose stdio servers get the settings' env
// on top of cadre's environment, as the tools cadre runs do.
func (a *App) newMCPManager() *mcp.Manager {
	// A server's own env block may still pass a key on purpose: it is
	// the user's choice, written where the server is declared.
	environ := sandbox.WithoutVars(os.Environ(), a.Sandbox.HideEnv)
	for _, k := range slices.Sorted(maps.Keys(a.Cfg.Settings.Env)) {
		environ = append(environ, k+"="+a.Cfg.Settings.Env[k])
	}
	return mcp.NewManager(mcp.Options{Cwd: a.Cwd, Getenv: a.Getenv, Environ: environ, Logger: a.Log,
		HTTPClient: a.cfg.HTTPClient, Version: a.cfg.Version, CallTimeout: a.MCP.callTimeout, Sandbox: a.Sandbox, HideEnv: a.Sandbox.HideEnv})
}

// millis reads an environment variable holding milliseconds; unset is
// def, anything but a positive whole number an error naming it.
func millis(getenv func(string) string, name string, def time.Duration) (time.Duration, error) {
	v := getenv(name)
	if v == "" {
		return def, nil
	}
	ms, err := strconv.Atoi(v)
	if err != nil || ms <= 0 {
		return 0, fmt.Errorf("%s=%q: want a positive number of milliseconds", name, v)
	}
	return time.Duration(ms) * time.Millisecond, nil
}

// MCPReady starts the runtime's servers if they are not started yet and
// waits until each has connected or failed, but never past MCP_TIMEOUT
// after the start: a server still starting then is reported once, left
// out of the pools built meanwhile, and keeps connecting for later ones.
// Only the first run waits; later ones take what is connected.
func (a *App) MCPReady(ctx context.Context) *mcp.Manager {
	m := a.MCP.manager
	a.MCP.start.Do(func() {
		a.MCP.deadline = time.Now().Add(a.MCP.wait)
		m.Start(a.MCP.plan.Start...)
		m.Hold(a.MCP.plan.Held...)
	})
	ctx, cancel := context.WithDeadline(ctx, a.MCP.deadline)
	defer cancel()
	m.Wait(ctx)
	if ctx.Err() != nil {
		a.MCP.late.Do(func() {
			for _, st := range m.Status() {
				if st.State == mcp.StatePending {
					a.Log.Warn("MCP server is still starting; its tools are left out until it connects", "server", st.Name, "waited", a.MCP.wait)
				}
			}
		})
	}
	return m
}

// MCPTools are the tools of the runtime's servers connected now.
func (a *App) MCPTools() []tool.Tool {
	if a.MCP == nil {
		return nil
	}
	return a.MCP.manager.Tools()
}

// mcpForAgents gives subagents their definitions' servers
// (subagent.MCP).
type mcpForAgents struct{ a *App }

// ForAgent starts def's inline servers for one run and checks its
// required ones. Named servers must be configured ones (their tools are
// in every pool already). Inline servers of project and settings
// definitions come from the repository, as .mcp.json does, and need the
// same approval.
func (f mcpForAgents) ForAgent(ctx context.Context, def agent.Definition) ([]tool.Tool, func(), []string, error) {
	a := f.a
	if len(def.MCPServers) == 0 && len(def.RequiredMCPServers) == 0 {
		return nil, nil, nil, nil
	}
	global := a.MCPReady(ctx)
	configured := map[string]bool{}
	for _, st := range global.Status() {
		configured[st.Name] = true
	}
	s := a.Cfg.Settings
	var warnings []string
	var inline []mcp.Server
	for _, entry := range def.MCPServers {
		switch e := entry.(type) {
		case string:
			if !configured[e] {
				warnings = append(warnings, fmt.Sprintf("agent %s names MCP server %q, which is not configured", def.Name, e))
			}
		case map[string]any:
			for _, name := range slices.Sorted(maps.Keys(e)) {
				raw, err := json.Marshal(e[name])
				if err != nil {
					return nil, nil, warnings, fmt.Errorf("mcpServers.%s: %w", name, err)
				}
				c, err := mcp.ParseConfig(name, raw)
				switch {
				case err != nil:
					warnings = append(warnings, fmt.Sprintf("agent %s: %v", def.Name, err))
				case configured[name]:
					warnings = append(warnings, fmt.Sprintf("agent %s defines MCP server %q, which is configured already; the configured one is used", def.Name, name))
				case (def.Source == agent.SourceProject || def.Source == agent.SourceSettings) && !a.Cfg.ProjectMCP(name):
					// The same rule as .mcp.json's servers: the workspace's
					// trust approves them, a refusal by name still holds.
					warnings = append(warnings, fmt.Sprintf("agent %s defines MCP server %q in the project: it starts only in a trusted workspace that does not refuse it (disabledMcpjsonServers); see `cadre trust`", def.Name, name))
				case slices.Contains(s.DisabledMcpjsonServers, name):
					warnings = append(warnings, fmt.Sprintf("agent %s: MCP server %q is in disabledMcpjsonServers", def.Name, name))
				default:
					// A project's (or a settings file's) agent brought this
					// command with it: it runs inside the sandbox, as
					// .mcp.json's servers do.
					inline = append(inline, mcp.Server{Name: name, Config: c, Source: "agent " + def.Name,
						Project: def.Source == agent.SourceProject || def.Source == agent.SourceSettings})
				}
			}
		}
	}
	var own *mcp.Manager
	stop := func() {}
	if len(inline) > 0 {
		own = a.newMCPManager()
		own.Start(inline...)
		stop = own.Close
		wctx, cancel := context.WithTimeout(ctx, a.MCP.wait)
		own.Wait(wctx)
		cancel()
	}
	for _, name := range def.RequiredMCPServers {
		m := global
		if own != nil && slices.ContainsFunc(inline, func(s mcp.Server) bool { return s.Name == name }) {
			m = own
		}
		if !m.Connected(name) {
			stop()
			why := "it is not configured"
			for _, st := range m.Status() {
				if st.Name == name {
					why = fmt.Sprintf("its status is %s", st.State)
					if st.Err != "" {
						why += ": " + st.Err
					}
				}
			}
			return nil, nil, warnings, fmt.Errorf("required MCP server %q is not connected (%s); the agent cannot start without it", name, why)
		}
	}
	if own == nil {
		return nil, nil, warnings, nil
	}
	// The runtime's resource tools already reach every runtime server; a
	// run's own servers add theirs only when the runtime has none.
	taken := map[string]bool{}
	for _, t := range global.Tools() {
		taken[t.Info().Name] = true
	}
	var tools []tool.Tool
	for _, t := range own.Tools() {
		if !taken[t.Info().Name] {
			tools = append(tools, t)
		}
	}
	return tools, stop, warnings, nil
}

// MCPInit lists the runtime's servers for the init event.
func (a *App) MCPInit() []event.MCPServer {
	var out []event.MCPServer
	for _, st := range a.MCP.manager.Status() {
		out = append(out, event.MCPServer{Name: st.Name, Status: string(st.State)})
	}
	return out
}

// Manager is the runtime's MCP client, started or not.
func (m *MCP) Manager() *mcp.Manager { return m.manager }
