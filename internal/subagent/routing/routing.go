package routing

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/cadre-dev/cadre/internal/agent"
	"github.com/cadre-dev/cadre/internal/permission"
	"github.com/cadre-dev/cadre/internal/session"
	"github.com/cadre-dev/cadre/internal/spawnpolicy"
	"github.com/cadre-dev/cadre/internal/task"
)

// Router routes the spawn calls of one runtime. It is cheap to build: the
// core builds one per call from its configuration.
type Router struct {
	Agents *agent.Registry
	Policy *permission.Policy
	// AllowAgents is the settings' allowAgents list (subagents.allowAgents),
	// for a requester whose definition has none.
	AllowAgents []string
	// Index finds the sessions a call continues.
	Index session.Index
}

// Caller is who calls a spawn tool: its agent's name and its own
// definition's task rules.
type Caller struct {
	Agent     string
	TaskRules permission.TaskRules
}

// Listed are the agents c's spawn tool describes: subagents (not primary
// ones), not hidden, not remote without a url (Route refuses it), and not
// denied outright. A remote agent with its url is listed: the model calls
// it like any other.
func (r Router) Listed(c Caller) []agent.Definition {
	var out []agent.Definition
	for _, d := range r.Agents.All() {
		if d.Mode == "primary" || d.Hidden || (d.Isolation == agent.IsolationRemote && d.URL == "") || !r.Policy.SpawnVisible(d.Name, c.TaskRules) {
			continue
		}
		out = append(out, d)
	}
	return out
}

// allowAgents is c's allowAgents list: its definition's own when it has
// one, else the settings'.
func (r Router) allowAgents(c Caller) []string {
	if d, ok := r.Agents.Get(c.Agent); ok && d.AllowAgents != nil {
		return d.AllowAgents
	}
	return r.AllowAgents
}

// CrossAllowed reports whether c may name the agent as sessions_spawn's
// agentId (S-P1): its own agent and general-purpose (what no agentId
// starts) always; another agent only when allowAgents names it or holds
// "*". The task rules are checked after this, on every spawn.
func (r Router) CrossAllowed(c Caller, name string) bool {
	if strings.EqualFold(name, c.Agent) || strings.EqualFold(name, "general-purpose") {
		return true
	}
	for _, a := range r.allowAgents(c) {
		if a == "*" || strings.EqualFold(a, name) {
			return true
		}
	}
	return false
}

// CrossListed are the agents c may name where allowAgents holds: what
// every spawn tool lists (Listed), less what allowAgents keeps c from
// naming.
func (r Router) CrossListed(c Caller) []agent.Definition {
	var out []agent.Definition
	for _, d := range r.Listed(c) {
		if r.CrossAllowed(c, d.Name) {
			out = append(out, d)
		}
	}
	return out
}

// Route picks the definition for subagent_type (spawnpolicy.Route). Its
// errors list what c's spawn tool lists.
func (r Router) Route(c Caller, name string) (agent.Definition, error) {
	return spawnpolicy.Route(r.Agents, name, func() []string { return sortedNames(r.Listed(c)) })
}

// Remote reports whether a call runs on a remote agent: it says isolation
// "remote", or the definition of the agent it names (not a fork) names a
// url.
func (r Router) Remote(isolation, subagentType string, fork bool) bool {
	if isolation == agent.IsolationRemote {
		return true
	}
	d, ok := r.Agents.Get(subagentType)
	return ok && d.URL != "" && !fork
}

// CheckRemote refuses isolation "remote" for def, an agent whose
// definition names no url, listing the remote agents c may use.
func (r Router) CheckRemote(c Caller, def agent.Definition) error {
	if def.URL != "" {
		return nil
	}
	var remotes []string
	for _, d := range r.Listed(c) {
		if d.URL != "" {
			remotes = append(remotes, d.Name)
		}
	}
	return fmt.Errorf("isolation \"remote\" needs an agent whose definition names a url, and %q has none; remote agents: %s", def.Name, cmp.Or(strings.Join(remotes, ", "), "none"))
}

// Continue is a call that continues an agent's session.
type Continue struct {
	SessionID, SubagentType string
	// Cwd is the call's own cwd ("" for none).
	Cwd string
	// InTree refuses a session of another run tree than the caller's.
	InTree func(ctx context.Context, id string) error
}

// Continued checks the session a call continues and returns its agent.
// Only a child of c's own session tree may be continued — the rule
// SendMessage, TaskOutput and TaskStop follow — never another session's,
// which may belong to another project. cwd is where the agent worked
// before (its worktree, while it is kept) when the call names none and
// the directory is still there: it goes on there; else "".
func (r Router) Continued(ctx context.Context, c Caller, call Continue) (def agent.Definition, cwd string, err error) {
	if err := session.ValidateID(call.SessionID); err != nil {
		return agent.Definition{}, "", fmt.Errorf("invalid session_id: %w", err)
	}
	if err := call.InTree(ctx, call.SessionID); err != nil {
		return agent.Definition{}, "", err
	}
	info, err := r.Index.GetSession(ctx, call.SessionID)
	if errors.Is(err, session.ErrNotFound) {
		return agent.Definition{}, "", fmt.Errorf("no agent session %q to continue: pass a session_id from an earlier result's <task_metadata>, or omit it to start a new agent", call.SessionID)
	}
	if err != nil {
		return agent.Definition{}, "", err
	}
	if info.ParentID == "" {
		return agent.Definition{}, "", fmt.Errorf("session %q is a main session, not an agent's; only agent sessions can be continued with session_id", call.SessionID)
	}
	if st, err := os.Stat(info.Cwd); call.Cwd == "" && info.Cwd != "" && err == nil && st.IsDir() {
		cwd = info.Cwd
	}
	if strings.EqualFold(info.Agent, "fork") {
		// A fork goes on as a general-purpose agent holding the fork's
		// whole conversation; the parent's exact tools went with its turn.
		def := agent.GeneralPurpose()
		def.Name = "fork"
		return def, cwd, nil
	}
	if call.SubagentType != "" && !strings.EqualFold(call.SubagentType, info.Agent) {
		return agent.Definition{}, "", fmt.Errorf("session %q belongs to agent %q, not %q", call.SessionID, info.Agent, call.SubagentType)
	}
	def, err = r.Route(c, info.Agent)
	return def, cwd, err
}

// WithAllowed adds to a rule's denial the agents c may use (CrossListed's
// when cross, for a call that named another agent than c's own; else
// Listed's), as Route's unknown-name error does (S-A2): the model picks a
// permitted agent rather than guessing. A user's refusal or a failed ask
// is left as it is: the user, not a rule, said no.
func (r Router) WithAllowed(c Caller, cross bool, err error) error {
	denied := (*permission.Denied)(nil)
	if !errors.As(err, &denied) || denied.Rule == "" {
		return err
	}
	defs := r.Listed(c)
	if cross {
		defs = r.CrossListed(c)
	}
	names := "none"
	if n := sortedNames(defs); len(n) > 0 {
		names = strings.Join(n, ", ")
	}
	denied.Reason += "; agents you may use: " + names
	return err
}

// sortedNames are the definitions' names, sorted.
func sortedNames(defs []agent.Definition) []string {
	out := make([]string, 0, len(defs))
	for _, d := range defs {
		out = append(out, d.Name)
	}
	sort.Strings(out)
	return out
}

// Addressee is the agent a message names, as an agent id: a name given at
// spawn time to an agent of the run tree root (the newest agent, when a
// name was reused), else an agent id.
func Addressee(ctx context.Context, tasks task.Store, root, to string) (string, error) {
	to = strings.TrimSpace(to)
	if to == "" {
		return "", errors.New("to is empty: name the agent by its name or agentId")
	}
	recs, err := tasks.ListTasks(ctx, task.Filter{RootSessionID: root})
	if err != nil {
		return "", err
	}
	for _, t := range recs { // newest first
		if t.Name != "" && strings.EqualFold(t.Name, to) {
			return t.ID, nil
		}
	}
	if err := task.ValidateID(to); err != nil {
		return "", fmt.Errorf("invalid agent id %q: %w", to, err)
	}
	return to, nil
}
