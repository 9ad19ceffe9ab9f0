package permission

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"path/filepath"
	"strings"

	"github.com/cadre-dev/cadre/internal/permission/shellcmd"
	"github.com/cadre-dev/cadre/tool"
)

// permitExec decides a call of an exec tool (Bash). It reads the command
// once (shellcmd.Analyze) and evaluates, in Permit's order:
//
//  1. deny rules: a bare one, or a specifier matching any command the line
//     runs, looked at through paths, wrappers and sh -c, denies;
//  2. plan mode denies; an unknown mode denies;
//  3. each redirection that writes a file is decided as an Edit of it
//     would be: an Edit deny denies the command;
//  4. a command that cannot be read statically (eval, $cmd, a parse
//     error) asks when any Bash deny rule exists, since that rule cannot
//     be checked, even in bypassPermissions;
//  5. bypassPermissions allows (a write whose target cannot be read asks
//     if an Edit deny rule exists);
//  6. ask rules ask; an unreadable command asks when any exists;
//  7. a command the sandbox will hold runs unasked under
//     autoAllowBashIfSandboxed (Policy.Sandboxed), unless an ask rule
//     names a file it writes or a write's target cannot be read;
//  8. allow rules approve the command, never an unreadable one, and never
//     its writes: a write that an Edit would need approval for asks.
//
// unseen says why a deny or ask rule cannot be checked against what the
// command runs: it runs a script no rule reads (a.Hidden), or an argument
// tail of some program matches a deny or ask rule (a.Maybe). "" when
// neither, or when no Bash deny or ask rule has a specifier.
func (p *Policy) unseen(c call, a *shellcmd.Analysis) string {
	for _, l := range []struct {
		rules []Rule
		l     list
		key   string
	}{{p.Rules.Deny, listDeny, "deny"}, {p.Rules.Ask, listAsk, "ask"}} {
		for _, r := range l.rules {
			if !r.covers(c, l.l) || r.bare() {
				continue
			}
			if len(a.Hidden) > 0 {
				return fmt.Sprintf("the command %s, so the %s rule %q cannot be checked", a.Hidden[0], l.key, r.String())
			}
			spec := shellcmd.CollapseSpace(r.Specifier)
			for _, tail := range a.Maybe {
				if matchCommandPart(spec, tail) {
					return fmt.Sprintf("the command may run %q, which the %s rule %q names", tail, l.key, r.String())
				}
			}
		}
	}
	return ""
}

func (p *Policy) permitExec(ctx context.Context, c call, env tool.Env, input json.RawMessage) error {
	a := shellcmd.Analyze(c.target)
	deny := func(rule, reason string) error {
		return &Denied{Tool: c.name, Target: c.target, Rule: rule, Reason: reason}
	}

	var denyRule string // a Bash deny rule with a specifier, if any
	for _, r := range p.Rules.Deny {
		if !r.covers(c, listDeny) {
			continue
		}
		if r.bare() || c.target != "" && commandMatches(a, r.Specifier, listDeny) {
			return deny(r.String(), "")
		}
		if denyRule == "" {
			denyRule = r.String()
		}
	}

	mode := p.Mode.base()
	switch mode {
	case ModePlan:
		return deny("", fmt.Sprintf("plan mode is read-only: %s cannot run until the user approves a plan and leaves plan mode; investigate with read-only tools and present your plan instead", c.name))
	case ModeDefault, ModeAcceptEdits, ModeBypass:
	default:
		return deny("", fmt.Sprintf("the session's permission mode %q is unknown, so nothing but denying is safe", mode))
	}

	// Writes, decided as Edits of their targets.
	var (
		writeAsks []string // why a write needs approval
		unknown   []string // writes whose target cannot be read
		ruleAsks  bool     // an Edit ask rule names a write
	)
	for _, w := range a.Writes {
		target, why := p.redirectPath(w.Target, a.CwdMoves)
		switch {
		case why != "":
			unknown = append(unknown, fmt.Sprintf("%s %s: %s", w.Op, w.Target.Raw, why))
			continue
		case target == "":
			continue // /dev/null and the like
		}
		v := p.editVerdict(ctx, env, target)
		switch v.verdict {
		case verdictDeny:
			d := &Denied{Tool: c.name, Target: c.target, Rule: v.denied.Rule, Source: v.denied.Source}
			d.Reason = fmt.Sprintf("the command writes %s (%s), which is decided as an edit of it", v.target, w.Op)
			if v.denied.Rule == "" && v.denied.Reason != "" {
				d.Reason += ": " + v.denied.Reason
			}
			return d
		case verdictAsk:
			writeAsks = append(writeAsks, fmt.Sprintf("it writes %s (%s), which needs approval as an edit of it would (%s)", v.target, w.Op, v.reason))
			ruleAsks = ruleAsks || p.editAskRule(target, env.Cwd)
		}
	}
	if len(unknown) > 0 {
		writeAsks = append(writeAsks, fmt.Sprintf("it writes a file whose name cannot be read before it runs (%s)", strings.Join(unknown, "; ")))
	}
	writeReason := strings.Join(writeAsks, "; ")

	if len(a.Opaque) > 0 && denyRule != "" {
		return p.ask(ctx, c, env, input, fmt.Sprintf("the command runs what cannot be read before it runs (%s), so the deny rule %q cannot be checked", a.Opaque[0], denyRule))
	}
	// What no rule sees (a script's content, a command a program may run)
	// asks whenever a Bash deny or ask rule exists, in every mode.
	if why := p.unseen(c, a); why != "" {
		return p.ask(ctx, c, env, input, why)
	}
	if mode == ModeBypass {
		if len(unknown) > 0 && p.anyEditDeny() {
			return p.ask(ctx, c, env, input, writeReason+", so the Edit deny rules cannot be checked")
		}
		return nil
	}

	for _, r := range p.Rules.Ask {
		if !r.covers(c, listAsk) {
			continue
		}
		if r.bare() || c.target != "" && commandMatches(a, r.Specifier, listAsk) {
			return p.ask(ctx, c, env, input, fmt.Sprintf("the rule %q (permissions.ask) asks before every such call", r.String()))
		}
		if len(a.Opaque) > 0 {
			return p.ask(ctx, c, env, input, fmt.Sprintf("the command runs what cannot be read before it runs (%s), so the ask rule %q cannot be checked", a.Opaque[0], r.String()))
		}
	}

	if p.Sandboxed != nil && !ruleAsks && len(unknown) == 0 && c.target != "" && p.Sandboxed(c.target) {
		// The kernel holds the command and its writes to the workspace;
		// no ask or deny rule named it or a file it writes (checked
		// above), and the sandbox decides what the mode would have asked.
		return nil
	}
	approved := false
	if len(a.Opaque) == 0 {
		var specs []string
		for _, r := range p.allowRules() {
			switch {
			case !r.covers(c, listAllow):
			case r.bare():
				approved = true
			default:
				specs = append(specs, r.Specifier)
			}
		}
		approved = approved || c.target != "" && commandApproved(a, specs)
	}
	if !approved {
		c.rememberable = len(a.Opaque) == 0 && !a.Subst
		reason := fmt.Sprintf("%s runs commands, which needs approval in %s mode", c.name, mode)
		if len(a.Opaque) > 0 {
			reason = fmt.Sprintf("%s runs what cannot be read before it runs (%s), which no allow rule approves", c.name, a.Opaque[0])
		}
		if writeReason != "" {
			reason += "; " + writeReason
		}
		return p.ask(ctx, c, env, input, reason)
	}
	if writeReason != "" {
		// An allow rule approves the command, not what it writes.
		return p.ask(ctx, c, env, input, "the command is allowed, but "+writeReason)
	}
	return nil
}

// redirectPath gives the file a redirection target names: "" for one that
// writes no file (/dev/null, /dev/stderr, /dev/fd/N), or why the target
// cannot be read before the command runs.
func (p *Policy) redirectPath(t shellcmd.Word, cwdMoves bool) (target, why string) {
	v := t.Value
	switch {
	case !t.Static:
		return "", "its name is only known when it runs"
	case t.Glob:
		return "", "its name is a pattern the shell expands"
	case v == "":
		return "", "an empty name"
	case t.Tilde:
		head, rest, _ := strings.Cut(v, "/")
		if head != "~" || p.Home == "" {
			return "", "the directory " + head + " stands for is only known when it runs"
		}
		v = filepath.Join(p.Home, rest)
	}
	if isStream(v) {
		return "", ""
	}
	if !filepath.IsAbs(v) && cwdMoves {
		return "", "the command may change directory before it writes"
	}
	return v, ""
}

// isStream reports whether a redirection target is a standard stream or
// /dev/null rather than a file.
func isStream(name string) bool {
	switch name = path.Clean(name); name {
	case "/dev/null", "/dev/stdout", "/dev/stderr":
		return true
	}
	fd, ok := strings.CutPrefix(name, "/dev/fd/")
	return ok && fd != "" && strings.Trim(fd, "0123456789") == ""
}

type verdict int

const (
	verdictAllow verdict = iota
	verdictAsk
	verdictDeny
)

// writeDecision is what Permit would decide for an Edit of one file.
type writeDecision struct {
	verdict verdict
	target  string  // the file, absolute
	reason  string  // why it asks
	denied  *Denied // why it is denied
}

// editVerdict decides a write of path as Permit decides a Write call, so
// that every rule about edits (deny and ask rules, modes, protected
// paths, the workspace) holds for a redirection too. Nobody is asked: an
// ask is reported instead.
func (p *Policy) editVerdict(ctx context.Context, env tool.Env, path string) writeDecision {
	// A copy with a recording Asker; Policy's fields are only read.
	probe := *p
	rec := &recordingAsker{}
	probe.Asker = rec
	err := probe.Permit(ctx, redirectWrite{}.Info().Name, redirectWrite{path: path}, env, nil)
	var d *Denied
	switch {
	case err == nil:
		return writeDecision{verdict: verdictAllow}
	case rec.asked:
		return writeDecision{verdict: verdictAsk, target: rec.q.Target, reason: rec.q.Reason}
	case errors.As(err, &d):
		return writeDecision{verdict: verdictDeny, target: d.Target, denied: d}
	}
	return writeDecision{verdict: verdictDeny, target: path, denied: &Denied{Reason: err.Error()}}
}

// anyEditDeny reports whether any deny rule applies to some file writes.
func (p *Policy) anyEditDeny() bool {
	c := call{name: redirectWrite{}.Info().Name, access: tool.AccessEdit}
	for _, r := range p.Rules.Deny {
		if r.covers(c, listDeny) {
			return true
		}
	}
	return false
}

// redirectWrite stands for a redirection's write in editVerdict: it is
// decided as a Write of its path, so Write(…) and Edit(…) rules apply.
type redirectWrite struct{ path string }

func (redirectWrite) Info() tool.Info { return tool.Info{Name: "Write", Access: tool.AccessEdit} }

func (redirectWrite) Call(context.Context, tool.Env, json.RawMessage) (tool.Result, error) {
	return tool.Result{}, errors.New("a redirection is decided, never called")
}

func (w redirectWrite) Target(tool.Env, json.RawMessage) (string, error) { return w.path, nil }

// recordingAsker answers no and remembers the question.
type recordingAsker struct {
	asked bool
	q     Question
}

func (r *recordingAsker) Ask(_ context.Context, q Question) (Answer, error) {
	r.asked, r.q = true, q
	return Answer{}, nil
}

// CommandNamed reports whether the Bash rule specifier spec ("docker:*",
// "npm test") names any command that the shell line command runs, read as
// a deny rule reads it: through paths, wrappers and sh -c. A command that
// cannot be read statically names nothing.
func CommandNamed(spec, command string) bool {
	return commandMatches(shellcmd.Analyze(command), spec, listDeny)
}

// editAskRule reports whether an ask rule names an edit of path.
func (p *Policy) editAskRule(path, cwd string) bool {
	c := call{name: redirectWrite{}.Info().Name, access: tool.AccessEdit, target: path, resolved: resolvePath(path), cwd: cwd}
	for _, r := range p.Rules.Ask {
		if p.matches(r, c, listAsk) {
			return true
		}
	}
	return false
}
