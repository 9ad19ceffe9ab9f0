package permission

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/cadre-dev/cadre/tool"
)

// Question is one permission request put to whoever can approve it.
type Question struct {
	Tool string
	// Target is what the call touches: an absolute path, a command, or "".
	Target string
	Input  json.RawMessage
	// SessionID and ToolUseID say which session's which call asks.
	SessionID, ToolUseID string
	// Reason says why approval is needed, for the person asked.
	Reason string
	// Agent, AgentID and ParentToolUseID say which agent asks ("main",
	// "", "" for the main agent): see Identify.
	Agent, AgentID, ParentToolUseID string
	// Suggestions are the allow rules that approving "for the rest of the
	// session" would add (Answer.Remember), in rule syntax; none when no
	// rule could approve the call (a protected path, an ask rule).
	Suggestions []string
	// Exact are allow rules that approve this very call and no other
	// (a Bash call: each of its simple commands as written), the rules an
	// approval "for this project" saves; none when no rule could, or when
	// only a wider rule would (a command with a wildcard character).
	Exact []string
	// Edits says the call changes files: accepting edits for the session
	// (acceptEdits) would approve it.
	Edits bool
	// Change is what the call would do to a file, when its tool can say
	// (a Previewer: Edit, Write); nil otherwise.
	Change *Change
}

// Change is what an edit would do to one file, for the person asked.
type Change struct {
	Path string
	// Create: the file does not exist yet (Old is "").
	Create bool
	// Old and New are the file's text before and after, and Diff the
	// change as a unified diff. Diff is empty when the change is too
	// large to diff; Old and New are empty too then, and when together
	// they pass a size a question should carry (1 MiB).
	Old, New, Diff string
}

// Previewer is implemented by tools that can tell, before a call runs,
// what it would change; a question about such a call carries it. An
// error, or a nil Change (a call that will fail), shows nothing.
type Previewer interface {
	Preview(env tool.Env, input json.RawMessage) (*Change, error)
}

// Answer is the decision on a Question.
type Answer struct {
	Allow bool
	// UpdatedInput, when set on an allow, is the input the call runs with
	// instead of the model's. It is checked again against the deny rules
	// (PermitInput) and the tool's schema (the loop).
	UpdatedInput json.RawMessage
	// Message is what the model is told of a refusal; empty, a default.
	Message string
	// Interrupt, on a refusal, also ends the asking agent's turn.
	Interrupt bool
	// Remember, on an allow, adds these allow rules to Policy.Remembered.
	Remember []string
}

// Asker answers permission requests: the TUI's prompt, an SDK callback, a
// parent agent for a bubbling fork. Ask blocks until it has an answer or
// ctx ends. The calls of parallel agents (and parallel tool calls) ask at
// once: an Asker is called concurrently.
type Asker interface {
	Ask(ctx context.Context, q Question) (Answer, error)
}

// Policy decides the tool calls of one session. Its fields are read, never
// written, by its methods, so one Policy may serve concurrent calls.
type Policy struct {
	Mode  Mode // "" is ModeDefault
	Rules Rules
	// Workspace is the absolute workspace root: "inside the workspace"
	// means under it or one of AdditionalDirs (relative ones resolve
	// against it), symbolic links resolved. Empty: the call's working
	// directory stands in.
	Workspace      string
	AdditionalDirs []string
	// Project is the root of the project whose settings apply, the main
	// session's workspace: path rules ("/x", "./x", "x/y", "*.env") are
	// anchored there for every agent, whatever its cwd, so that a child
	// started in a subfolder cannot step round them. When Workspace is
	// elsewhere (a worktree child's checkout) they are anchored there too.
	// Empty: Workspace.
	Project string
	// Home is where "~/" rules start; empty, such rules match nothing.
	// Its .cadre and .claude directories are protected (see ConfigDirs).
	Home string
	// ConfigDirs are the user's configuration directories ($CADRE_HOME):
	// like .git and .cadre in the workspace, nothing in them changes
	// without the user's approval, whatever the mode and the allow rules.
	ConfigDirs []string
	// ReadableFile, when set, reports whether the session sessionID may
	// read the file at path (absolute, symbolic links resolved) although
	// it lies outside the workspace: the output files of its own run
	// tree's background tasks, which the launch text points the model to.
	// Deny and ask rules still apply first.
	ReadableFile func(ctx context.Context, sessionID, path string) bool
	// Asker answers asks; nil means nobody can (headless), and every ask
	// is a denial.
	Asker Asker
	// Task holds the settings' permissions.task rules, which decide which
	// agents this session may spawn (PermitSpawn).
	Task TaskRules
	// Grants, when set, add the allow rules a session gained while running
	// (a skill's allowed-tools) to Rules.Allow for that session's calls.
	Grants *Grants
	// Writable are directories (absolute) whose files this policy's
	// sessions may change although a protected name is on their path: an
	// agent's own memory directory under .claude. Allow rules, the mode
	// and deny rules still decide; only the protection is lifted.
	Writable []string
	// Sandboxed, when set, reports whether a Bash command will run inside
	// the sandbox, where sandbox.autoAllowBashIfSandboxed lets it run
	// without an ask in the default and acceptEdits modes unless a deny or
	// ask rule names it or a file it writes, or a write's target cannot
	// be read. Deny rules and protected paths still decide its writes.
	Sandboxed func(command string) bool
	// Remembered, if set, are allow rules the user added while the
	// conversation runs; they count as allow rules. A conversation's
	// policies (its main agent's and its children's) share one set.
	Remembered *Remembered
}

// Denied is a refused call. Its text is written for the model, which gets
// it as an is_error tool_result.
type Denied struct {
	Tool string
	// Target is what the call would have touched, for front ends.
	Target string
	// Rule is the deny rule that decided, if one did.
	Rule string
	// Source says where Rule comes from when it is not permissions.deny:
	// "permissions.task" for a task rule, whose text is then
	// "pattern": "action".
	Source string
	// Reason explains a denial no rule made, or adds to one.
	Reason string

	// Interrupt: the approver also asked to end the agent's turn.
	Interrupt bool
	// Asked: the Asker was put the call and refused it (or failed); else
	// a rule, the mode or the session decided before asking anyone.
	Asked bool
	// ByMode: the permission mode denies calls that need approval
	// instead of asking.
	ByMode bool

	err error // what the Asker failed with, for errors.Is
}

// Interrupts reports whether the denial ends the turn (the loop asks).
func (d *Denied) Interrupts() bool { return d.Interrupt }

// Unasked reports whether the call was refused before anyone was asked,
// and by what, in Claude Code's words: "rule", "mode" or "other". Claude
// Code tells an SDK program of such a denial (permission_denied); one the
// program's canUseTool made it knows already.
func (d *Denied) Unasked() (reasonType string, unasked bool) {
	switch {
	case d.Asked:
		return "", false
	case d.Rule != "":
		return "rule", true
	case d.ByMode:
		return "mode", true
	}
	return "other", true
}

func (d *Denied) Error() string {
	var b strings.Builder
	b.WriteString("Permission to use ")
	b.WriteString(d.Tool)
	b.WriteString(" denied")
	switch {
	case d.Rule != "" && d.Source != "":
		fmt.Fprintf(&b, " (%s %s)", d.Source, d.Rule)
	case d.Rule != "":
		fmt.Fprintf(&b, " by rule %q (permissions.deny)", d.Rule)
	}
	if d.Reason != "" {
		b.WriteString(": ")
		b.WriteString(d.Reason)
	}
	return b.String()
}

// Unwrap returns the Asker's error when the ask failed.
func (d *Denied) Unwrap() error { return d.err }

// Removed reports whether a bare deny rule ("Bash", "mcp__srv",
// "mcp__srv__*") takes the tool out of the model's pool altogether, and
// which rule does. Unlike Permit it does not apply the Read and Edit
// family rules to other tools: a bare "Edit" deny removes Edit, while
// Write stays in the pool and is denied when called.
func (p *Policy) Removed(toolName string) (rule string, removed bool) {
	for _, r := range p.Rules.Deny {
		if r.bare() && r.namesTool(toolName, listDeny) {
			return r.String(), true
		}
	}
	return "", false
}

// Pool returns s without the tools Removed takes out.
func (p *Policy) Pool(s *tool.Set) *tool.Set {
	return s.Filter(func(t tool.Tool) bool {
		_, removed := p.Removed(t.Info().Name)
		return !removed
	})
}

// Permit decides one call of the tool called name, for a caller that runs
// the input as given: as PermitInput, but an approval that changes the
// input is a denial, since such a caller would run the model's input.
func (p *Policy) Permit(ctx context.Context, name string, t tool.Tool, env tool.Env, input json.RawMessage) error {
	run, err := p.PermitInput(ctx, name, t, env, input)
	if err == nil && !bytes.Equal(run, input) {
		return &Denied{Tool: name, Reason: "the approval changed the call's input, which this caller cannot run"}
	}
	return err
}

// PermitInput decides one call of the tool called name. t is nil when the
// tool is not in the session's pool (the model called a removed or
// unknown tool). It returns the input to run — input, or what the
// approver changed it to — when the call may run, else a *Denied. It
// blocks while the Asker is asked.
//
// A changed input is decided again under the deny rules alone (and what
// cannot be checked against them is refused): the approver may change what
// runs, but not past a deny rule.
func (p *Policy) PermitInput(ctx context.Context, name string, t tool.Tool, env tool.Env, input json.RawMessage) (json.RawMessage, error) {
	if t == nil {
		if rule, ok := p.Removed(name); ok {
			return nil, &Denied{Tool: name, Rule: rule, Reason: "the tool is not available in this session"}
		}
		return nil, &Denied{Tool: name, Reason: fmt.Sprintf("there is no tool named %s in this session", name)}
	}
	if granted := p.Grants.Rules(env.SessionID); len(granted) > 0 {
		q := *p
		q.Grants = nil
		q.Rules.Allow = append(slices.Clone(p.Rules.Allow), granted...)
		return q.PermitInput(ctx, name, t, env, input)
	}
	var changed json.RawMessage
	c := call{name: name, access: t.Info().Access, cwd: env.Cwd, approval: &changed, tool: t}
	target, err := p.target(t, c, env, input)
	if err != nil {
		return nil, &Denied{Tool: name, Reason: fmt.Sprintf("cannot tell what this call would touch: %v", err)}
	}
	c.target = target
	if c.access == tool.AccessExec {
		// A command is read as the shell will read it: see permitExec.
		err = p.permitExec(ctx, c, env, input)
	} else {
		err = p.decide(ctx, c, env, input)
	}
	if err != nil {
		return nil, err
	}
	return p.changedInput(ctx, name, t, env, input, changed)
}

// changedInput is the input to run of an approved call: input, or the
// approver's changed input once the deny rules alone have judged it. The
// approver answered for the rest; nobody is asked again, and what would
// need asking (a command the deny rules cannot be checked against) is
// refused.
func (p *Policy) changedInput(ctx context.Context, name string, t tool.Tool, env tool.Env, input, changed json.RawMessage) (json.RawMessage, error) {
	if changed == nil {
		return input, nil
	}
	if t == nil {
		return nil, &Denied{Tool: name, Reason: "the approval changed the input of a call to a tool this session does not have"}
	}
	recheck := *p
	recheck.Mode, recheck.Asker, recheck.Grants, recheck.Remembered = ModeBypass, refuse{}, nil, nil
	if err := recheck.Permit(ctx, name, t, env, changed); err != nil {
		d := &Denied{Tool: name, Reason: "the approval changed the call's input, and the changed input is refused: " + err.Error()}
		var rd *Denied
		if errors.As(err, &rd) {
			d.Target, d.Rule = rd.Target, rd.Rule
		}
		return nil, d
	}
	return changed, nil
}

// refuse answers every question with no.
type refuse struct{}

func (refuse) Ask(context.Context, Question) (Answer, error) { return Answer{}, nil }

// decide is Permit once the call's target is known.
func (p *Policy) decide(ctx context.Context, c call, env tool.Env, input json.RawMessage) error {
	name, target := c.name, c.target
	if c.target != "" && (c.access == tool.AccessRead || c.access == tool.AccessEdit) {
		c.resolved = resolvePath(c.target)
	}
	deny := func(reason string) error { return &Denied{Tool: name, Target: target, Reason: reason} }

	for _, r := range p.Rules.Deny {
		if p.matches(r, c, listDeny) {
			return &Denied{Tool: name, Target: target, Rule: r.String()}
		}
	}
	if c.access == tool.AccessAgent {
		// Spawning is decided inside the call by PermitSpawn, which weighs
		// permissions.task as well as Agent(name) rules and may ask; asking
		// here too would ask twice. Plan mode may spawn: children run in plan.
		return nil
	}
	mode := p.Mode.base()
	switch mode {
	case ModeBypass:
		return nil
	case ModePlan:
		if c.access != tool.AccessRead {
			return deny(fmt.Sprintf("plan mode is read-only: %s cannot run until the user approves a plan and leaves plan mode; investigate with read-only tools and present your plan instead", name))
		}
	case ModeDefault, ModeAcceptEdits:
	default:
		return deny(fmt.Sprintf("the session's permission mode %q is unknown, so nothing but denying is safe", mode))
	}

	if c.access == tool.AccessEdit {
		if why, ok := p.protected(c.target); ok {
			return p.askProtected(ctx, c, env, input, why)
		}
	}
	for _, r := range p.Rules.Ask {
		if p.matches(r, c, listAsk) {
			return p.ask(ctx, c, env, input, fmt.Sprintf("the rule %q (permissions.ask) asks before every such call", r.String()))
		}
	}
	for _, r := range p.allowRules() {
		if p.matches(r, c, listAllow) {
			return nil
		}
	}

	c.rememberable = true
	var reason string
	switch c.access {
	case tool.AccessRead:
		if p.inside(c) || p.readableFile(ctx, env, c) {
			return nil
		}
		reason = fmt.Sprintf("%s reads %s, which is outside the workspace", name, target)
	case tool.AccessEdit:
		if mode == ModeAcceptEdits && p.inside(c) {
			return nil
		}
		if mode == ModeAcceptEdits {
			reason = fmt.Sprintf("%s changes %s, which is outside the workspace", name, target)
		} else {
			reason = fmt.Sprintf("%s changes files, which needs approval in %s mode", name, mode)
		}
	case tool.AccessExec:
		reason = fmt.Sprintf("%s runs commands, which needs approval in %s mode", name, mode)
	default:
		reason = fmt.Sprintf("%s needs approval in %s mode", name, mode)
	}
	return p.ask(ctx, c, env, input, reason)
}

// ask puts the call to the Asker; reason says why it needs approval.
func (p *Policy) ask(ctx context.Context, c call, env tool.Env, input json.RawMessage, reason string) error {
	d := &Denied{Tool: c.name, Target: c.target}
	if !p.Mode.asks() {
		d.Reason = fmt.Sprintf("this call requires approval (%s) and the permission mode %s denies such calls instead of asking; "+
			"do not retry it, but find another way or tell the user; the user can allow it with --allowedTools or permissions.allow",
			reason, p.Mode)
		d.ByMode = true
		return d
	}
	if p.Asker == nil {
		d.Reason = fmt.Sprintf("this call requires approval (%s) and nobody can approve it in this non-interactive session; "+
			"do not retry it, but find another way or tell the user; the user can allow it with --allowedTools or permissions.allow",
			reason)
		return d
	}
	if err := ctx.Err(); err != nil {
		d.Reason, d.err = fmt.Sprintf("the permission request was abandoned: %v", err), err
		return d
	}
	q := Question{
		Tool:      c.name,
		Target:    c.target,
		Input:     input,
		SessionID: env.SessionID,
		ToolUseID: env.ToolUseID,
		Reason:    reason,
	}
	if c.rememberable {
		q.Suggestions, q.Exact = p.suggest(c), exact(c)
	}
	q.Edits = c.access == tool.AccessEdit
	if pv, ok := c.tool.(Previewer); ok {
		// A preview that fails shows the input alone: the question
		// must still be put.
		if ch, err := pv.Preview(env, input); err == nil {
			q.Change = ch
		}
	}
	tool.Yield(ctx) // a person answers: the other calls go on meanwhile
	ans, err := p.Asker.Ask(ctx, q)
	if err == nil && ans.Allow && len(ans.Remember) > 0 {
		if p.Remembered == nil {
			err = errors.New("the approval asks to remember rules, but this session keeps none")
		} else {
			err = p.Remembered.Add(ans.Remember...)
		}
	}
	switch {
	case err != nil:
		d.Reason, d.err, d.Asked = fmt.Sprintf("the permission request failed: %v", err), err, true
		return d
	case !ans.Allow:
		d.Asked = true
		d.Reason, d.Interrupt = "the user refused this call; do not retry it, ask the user how to proceed if unsure", ans.Interrupt
		if m := strings.TrimSpace(ans.Message); m != "" {
			d.Reason = "the user refused this call: " + m
		}
		return d
	}
	if ans.UpdatedInput != nil && c.approval != nil {
		*c.approval = ans.UpdatedInput
	}
	return nil
}

// target asks a Targeted tool what the call touches; file tools' paths
// are made absolute and clean.
func (p *Policy) target(t tool.Tool, c call, env tool.Env, input json.RawMessage) (string, error) {
	tt, ok := t.(tool.Targeted)
	if !ok {
		return "", nil
	}
	target, err := tt.Target(env, input)
	if err != nil || target == "" {
		return target, err
	}
	if c.access == tool.AccessRead || c.access == tool.AccessEdit {
		if !filepath.IsAbs(target) {
			base := env.Cwd
			if base == "" {
				base = p.Workspace
			}
			target = filepath.Join(base, target)
		}
		target = filepath.Clean(target)
	}
	return target, nil
}

// workspace is the workspace root, or cwd when none is set.
func (p *Policy) workspace(cwd string) string {
	if p.Workspace != "" {
		return p.Workspace
	}
	return cwd
}

// inside reports whether a file call's target lies in the workspace or an
// additional directory, where its symbolic links lead. A call with no
// target works in its cwd.
func (p *Policy) inside(c call) bool {
	target := c.target
	if target == "" {
		target = c.cwd
	}
	root := p.workspace(c.cwd)
	if target == "" || root == "" {
		return false
	}
	if !filepath.IsAbs(target) {
		target = filepath.Join(root, target)
	}
	return p.contains(root, target)
}

// Contains reports whether path (absolute) lies in the workspace or one of
// the additional directories once symbolic links are resolved, in the path
// and in the roots alike. With no Workspace it is false.
func (p *Policy) Contains(path string) bool {
	if p.Workspace == "" || !filepath.IsAbs(path) {
		return false
	}
	return p.contains(p.Workspace, path)
}

func (p *Policy) contains(root, path string) bool {
	real := resolvePath(path)
	for _, d := range p.readRoots(root) {
		if within(resolvePath(d), real) {
			return true
		}
	}
	return false
}

// AdditionalRoots are the additional directories, made absolute against
// the workspace and the home folder, as the policy reads them.
func (p *Policy) AdditionalRoots() []string {
	return p.readRoots(p.Workspace)[1:]
}

// readRoots are root and the additional directories, made absolute.
func (p *Policy) readRoots(root string) []string {
	dirs := []string{filepath.Clean(root)}
	for _, d := range p.AdditionalDirs {
		switch {
		case d == "~" || strings.HasPrefix(d, "~/"):
			if p.Home == "" {
				continue
			}
			d = filepath.Join(p.Home, d[1:])
		case !filepath.IsAbs(d):
			d = filepath.Join(root, d)
		}
		dirs = append(dirs, filepath.Clean(d))
	}
	return dirs
}

// readableFile reports whether a read outside the workspace is of a file
// ReadableFile lets this session read. Only a file named outright counts:
// a directory search stays where it is.
func (p *Policy) readableFile(ctx context.Context, env tool.Env, c call) bool {
	if p.ReadableFile == nil || c.resolved == "" {
		return false
	}
	return p.ReadableFile(ctx, env.SessionID, c.resolved)
}

// within reports whether path is dir or below it.
func within(dir, path string) bool {
	if dir == path {
		return true
	}
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}
