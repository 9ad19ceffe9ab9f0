package permission

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/cadre-dev/cadre/internal/permission/shellcmd"
	"github.com/cadre-dev/cadre/tool"
)

// Remembered are the allow rules a user added while a conversation runs,
// by approving a call "for the rest of the session" (Answer.Remember). They
// count as allow rules, so everything that an allow rule cannot do they
// cannot either: deny and ask rules, plan mode, protected paths and
// writes by a command still hold. One set serves a conversation's main
// policy and its children's, never another conversation's. It is safe for
// concurrent use; the zero value is empty.
type Remembered struct {
	mu    sync.RWMutex
	rules []Rule
}

// Add parses rules and adds them, all or none.
func (g *Remembered) Add(rules ...string) error {
	parsed := make([]Rule, 0, len(rules))
	for _, raw := range rules {
		r, err := ParseRule(raw)
		if err != nil {
			return fmt.Errorf("rule to remember: %w", err)
		}
		parsed = append(parsed, r)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, r := range parsed {
		if !slices.Contains(g.rules, r) {
			g.rules = append(g.rules, r)
		}
	}
	return nil
}

// Rules returns the rules added so far; a nil set has none.
func (g *Remembered) Rules() []Rule {
	if g == nil {
		return nil
	}
	g.mu.RLock()
	defer g.mu.RUnlock()
	return slices.Clone(g.rules)
}

// Strings returns the rules' text, in the order they were added.
func (g *Remembered) Strings() []string {
	var out []string
	for _, r := range g.Rules() {
		out = append(out, r.String())
	}
	return out
}

// allowRules are the settings' allow rules and the remembered ones.
func (p *Policy) allowRules() []Rule {
	remembered := p.Remembered.Rules()
	if len(remembered) == 0 {
		return p.Rules.Allow
	}
	return append(slices.Clip(p.Rules.Allow), remembered...)
}

// suggest gives the allow rules that would approve calls like c from now
// on: for a command, each simple command's first word, and its second when
// that is a subcommand ("Bash(npm test:*)"); for a file, its directory
// ("Edit(//abs/dir/**)"); for anything else, the tool.
func (p *Policy) suggest(c call) []string {
	var out []string
	add := func(s string) {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	switch c.access {
	case tool.AccessExec:
		a := shellcmd.Analyze(c.target)
		if len(a.Opaque) > 0 || a.Subst {
			return nil
		}
		for _, text := range a.Written {
			if prefix := commandPrefix(text); prefix != "" {
				add(c.name + "(" + prefix + ":*)")
			}
		}
	case tool.AccessRead, tool.AccessEdit:
		if c.target == "" {
			return []string{c.name}
		}
		family := "Read"
		if c.access == tool.AccessEdit {
			family = "Edit"
		}
		dir := filepath.ToSlash(filepath.Dir(c.target))
		if !strings.HasPrefix(dir, "/") {
			return nil
		}
		// "//" anchors the pattern at the file system's root.
		add(family + "(/" + strings.TrimSuffix(dir, "/") + "/**)")
	default:
		add(c.name)
	}
	return out
}

// exact is the allow rules that approve the call as it is: a Bash call's
// simple commands, each as written. A command with a character a rule
// reads as a wildcard or as the rule's end gets none, since its rule would
// approve more than this call.
func exact(c call) []string {
	if c.access != tool.AccessExec {
		return nil
	}
	a := shellcmd.Analyze(c.target)
	if len(a.Opaque) > 0 || a.Subst || len(a.Written) == 0 {
		return nil
	}
	var out []string
	for _, text := range a.Written {
		text = shellcmd.CollapseSpace(text)
		if strings.ContainsAny(text, "*()") || strings.HasSuffix(text, ":*") {
			return nil
		}
		if r := c.name + "(" + text + ")"; !slices.Contains(out, r) {
			out = append(out, r)
		}
	}
	return out
}

// commandPrefix is the part of a simple command an allow-for-the-session
// rule keeps: the program, and its first argument when that names a
// subcommand (a plain word: no option, path, assignment or quoting).
func commandPrefix(text string) string {
	words := strings.Fields(text)
	if len(words) == 0 {
		return ""
	}
	if len(words) > 1 && subcommand(words[1]) {
		return words[0] + " " + words[1]
	}
	return words[0]
}

func subcommand(w string) bool {
	if w == "" || strings.HasPrefix(w, "-") {
		return false
	}
	for _, r := range w {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == ':') {
			return false
		}
	}
	return true
}

// Identity names the agent whose calls a policy decides.
type Identity struct {
	// Agent is "main" or the subagent's type; AgentID its session id ("" for
	// main); ParentToolUseID the Agent call that started it ("" for main).
	Agent, AgentID, ParentToolUseID string
}

// Identify returns an Asker that asks a on behalf of id: every question
// names the agent. A nil a gives nil: nobody can be asked.
func Identify(a Asker, id Identity) Asker {
	if a == nil {
		return nil
	}
	if inner, ok := a.(identified); ok {
		a = inner.a // the innermost agent is the one asking
	}
	return identified{a: a, id: id}
}

type identified struct {
	a  Asker
	id Identity
}

func (i identified) Ask(ctx context.Context, q Question) (Answer, error) {
	q.Agent, q.AgentID, q.ParentToolUseID = i.id.Agent, i.id.AgentID, i.id.ParentToolUseID
	return i.a.Ask(ctx, q)
}
