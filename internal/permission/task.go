package permission

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Action is what a task rule does with the spawns it matches.
type Action string

const (
	ActionAllow Action = "allow"
	ActionAsk   Action = "ask"
	ActionDeny  Action = "deny"
)

// ParseAction returns the action named s, ignoring case.
func ParseAction(s string) (Action, error) {
	for _, a := range [...]Action{ActionAllow, ActionAsk, ActionDeny} {
		if strings.EqualFold(strings.TrimSpace(s), string(a)) {
			return a, nil
		}
	}
	return "", fmt.Errorf(`want "allow", "ask" or "deny", got %q`, s)
}

// TaskRule maps an agent-name pattern to an action, as one entry of
// OpenCode's permission.task object.
type TaskRule struct {
	Pattern string
	Action  Action
}

// String shows the rule as it is written in settings: "reviewer": "deny".
func (r TaskRule) String() string {
	return strconv.Quote(r.Pattern) + ": " + strconv.Quote(string(r.Action))
}

// TaskRules are spawn rules in the order they were written: the last
// matching rule decides, so order is meaning.
type TaskRules []TaskRule

// TaskRuleError is a bad entry of a task rule object; Pattern is its key,
// so a caller can name the entry in its own key path.
type TaskRuleError struct {
	Pattern string
	Err     error
}

func (e *TaskRuleError) Error() string { return fmt.Sprintf("task rule %q: %v", e.Pattern, e.Err) }

func (e *TaskRuleError) Unwrap() error { return e.Err }

// ParseTaskRules builds rules from ordered (pattern, action) pairs, as a
// YAML frontmatter mapping gives them.
func ParseTaskRules(pairs [][2]string) (TaskRules, error) {
	out := make(TaskRules, 0, len(pairs))
	for _, p := range pairs {
		r, err := newTaskRule(p[0], p[1])
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

func newTaskRule(pattern, action string) (TaskRule, error) {
	if pattern == "" {
		return TaskRule{}, &TaskRuleError{Pattern: pattern, Err: errors.New(`empty agent pattern: use "*" for every agent`)}
	}
	a, err := ParseAction(action)
	if err != nil {
		return TaskRule{}, &TaskRuleError{Pattern: pattern, Err: err}
	}
	return TaskRule{Pattern: pattern, Action: a}, nil
}

// UnmarshalJSON reads an object of pattern → action, keeping the keys'
// order (a map would lose it, and with it which rule is last). A bare
// action, "deny", stands for {"*": "deny"}, as OpenCode allows. null
// leaves rs as it is.
func (rs *TaskRules) UnmarshalJSON(b []byte) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	tok, err := dec.Token()
	if err != nil {
		return fmt.Errorf("task rules: %w", err)
	}
	switch t := tok.(type) {
	case nil:
		return nil
	case string:
		a, err := ParseAction(t)
		if err != nil {
			return fmt.Errorf("task rules: %w", err)
		}
		*rs = TaskRules{{Pattern: "*", Action: a}}
		return nil
	case json.Delim:
		if t != '{' {
			break
		}
		out := TaskRules{}
		for dec.More() {
			kt, err := dec.Token()
			if err != nil {
				return fmt.Errorf("task rules: %w", err)
			}
			key, _ := kt.(string) // object keys are always strings
			var v any
			if err := dec.Decode(&v); err != nil {
				return fmt.Errorf("task rules: %w", err)
			}
			s, ok := v.(string)
			if !ok {
				return &TaskRuleError{Pattern: key, Err: fmt.Errorf(`want "allow", "ask" or "deny", got %s`, jsonKind(v))}
			}
			r, err := newTaskRule(key, s)
			if err != nil {
				return err
			}
			out = append(out, r)
		}
		if _, err := dec.Token(); err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return fmt.Errorf("task rules: %w", err)
		}
		*rs = out
		return nil
	}
	return fmt.Errorf(`task rules: want an object of agent pattern to "allow", "ask" or "deny" (or one action for every agent), got %s`, jsonKindOfToken(tok))
}

// MarshalJSON writes the rules back as one object, in order.
func (rs TaskRules) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, r := range rs {
		if i > 0 {
			b.WriteByte(',')
		}
		k, err := json.Marshal(r.Pattern)
		if err != nil {
			return nil, err
		}
		v, err := json.Marshal(string(r.Action))
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case float64, json.Number:
		return "a number"
	case bool:
		return "a boolean"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}

func jsonKindOfToken(tok json.Token) string {
	if d, ok := tok.(json.Delim); ok && d == '[' {
		return "an array"
	}
	return jsonKind(tok)
}

// Evaluate returns the action of the last rule whose pattern matches the
// agent name, and that rule; no match is nil and ActionAllow. Names are
// compared ignoring case, because cadre folds agent ids to lower case: a
// rule written "Reviewer" must still hold for "reviewer".
func (rs TaskRules) Evaluate(agent string) (Action, *TaskRule) {
	if i := rs.last(agent); i >= 0 {
		return rs[i].Action, &rs[i]
	}
	return ActionAllow, nil
}

// last is the index of the last rule matching agent, or -1.
func (rs TaskRules) last(agent string) int {
	name := strings.ToLower(agent)
	for i := len(rs) - 1; i >= 0; i-- {
		if WildcardMatch(strings.ToLower(rs[i].Pattern), name) {
			return i
		}
	}
	return -1
}

// RemovesTool reports whether the rules take the Agent tool out of the
// pool: the last rule is "*": "deny". As in OpenCode only that literal
// pattern counts; a later allow for any name keeps the tool.
func (rs TaskRules) RemovesTool() bool {
	return len(rs) > 0 && rs[len(rs)-1].Pattern == "*" && rs[len(rs)-1].Action == ActionDeny
}

// WildcardMatch matches s against an OpenCode wildcard pattern: "*" is any
// run of characters but "/", "**" any run at all, "?" exactly one
// character; everything else is literal and the whole of s must match.
// Case matters.
func WildcardMatch(pattern, s string) bool {
	var b strings.Builder
	b.WriteString(`^(?s:`)
	for i := 0; i < len(pattern); {
		switch {
		case strings.HasPrefix(pattern[i:], "**"):
			b.WriteString(`.*`)
			for i < len(pattern) && pattern[i] == '*' {
				i++
			}
		case pattern[i] == '*':
			b.WriteString(`[^/]*`)
			i++
		case pattern[i] == '?':
			b.WriteString(`.`)
			i++
		default:
			_, n := utf8.DecodeRuneInString(pattern[i:])
			b.WriteString(regexp.QuoteMeta(pattern[i : i+n]))
			i += n
		}
	}
	b.WriteString(`)$`)
	re, err := regexp.Compile(b.String())
	if err != nil {
		// Only invalid UTF-8 gets here; such a pattern names no agent.
		return false
	}
	return re.MatchString(s)
}

// Sources of spawn rules, as denials name them.
const (
	sourceTask      = "permissions.task"
	sourceAgentTask = "the calling agent's permission.task"
)

// spawnDecision is the outcome of both rule layers for one agent.
type spawnDecision struct {
	action Action
	// rule and source name what decided a deny or an ask; rule is empty
	// when nothing matched.
	rule, source string
	// ccRule marks a Claude Code rule (Agent(name)), shown the way
	// permissions.deny rules are.
	ccRule bool
}

// spawn evaluates both layers: the task rules and the Agent(name) rules.
// A deny from either wins, then an ask from either; the global deny list
// is consulted first so that it is the rule named when both layers deny.
//
// The task rules come from two places that are not equally trusted: the
// user's settings (p.Task) and the calling agent's own definition (extra),
// a file that may have come with the repository. Each is evaluated on its
// own (last match wins within it) and the stricter outcome holds, so an
// agent file can narrow what the settings allow but never widen a deny,
// nor turn an ask into an allow. On a tie the settings' rule is named.
func (p *Policy) spawn(agent string, extra TaskRules) spawnDecision {
	for _, r := range p.Rules.Deny {
		if agentRuleMatches(r, agent, listDeny) {
			return spawnDecision{action: ActionDeny, rule: r.String(), source: "permissions.deny", ccRule: true}
		}
	}
	task := stricter(taskDecision(p.Task, agent, sourceTask), taskDecision(extra, agent, sourceAgentTask))
	if task.action == ActionDeny {
		return task
	}
	for _, r := range p.Rules.Ask {
		if agentRuleMatches(r, agent, listAsk) {
			return spawnDecision{action: ActionAsk, rule: r.String(), source: "permissions.ask", ccRule: true}
		}
	}
	return task
}

// taskDecision is what one layer of task rules says about agent: its last
// matching rule, or allow when none matches.
func taskDecision(rules TaskRules, agent, source string) spawnDecision {
	i := rules.last(agent)
	if i < 0 {
		return spawnDecision{action: ActionAllow}
	}
	return spawnDecision{action: rules[i].Action, rule: rules[i].String(), source: source}
}

// stricter returns the more restrictive of two decisions (deny, then ask,
// then allow), a on a tie.
func stricter(a, b spawnDecision) spawnDecision {
	rank := map[Action]int{ActionAllow: 0, ActionAsk: 1, ActionDeny: 2}
	if rank[b.action] > rank[a.action] {
		return b
	}
	return a
}

// agentRuleMatches reports whether a Claude Code rule applies to spawning
// agent: Agent or Task (bare or "*") matches every agent, Agent(name)
// the agent of that name, ignoring case, "*" being a wildcard.
func agentRuleMatches(r Rule, agent string, l list) bool {
	if !r.namesTool("Agent", l) {
		return false
	}
	return r.bare() || wildcard(strings.ToLower(r.Specifier), strings.ToLower(agent))
}

// PermitSpawn decides whether this session may spawn the named agent. It
// combines the task rules (p.Task, the settings', and extra, the calling
// agent's own definition rules, which may only narrow them) and the
// Agent(name) rules of p.Rules: a deny in either layer denies, whatever
// the mode; then an ask in either asks, unless the mode is
// bypassPermissions; anything else is allowed. The mode does not otherwise
// matter: plan mode may delegate read-only research, and the child
// inherits plan (ChildMode).
//
// A denial is a *Denied naming the deciding rule; it tells the model the
// agent may not be spawned, and never offers another agent in its place.
func (p *Policy) PermitSpawn(ctx context.Context, agent string, extra TaskRules) error {
	const tool = "Agent"
	mode := p.Mode
	if mode == "" {
		mode = ModeDefault
	}
	if !slices.Contains(Modes(), mode) {
		return &Denied{Tool: tool, Target: agent, Reason: fmt.Sprintf("the session's permission mode %q is unknown, so nothing but denying is safe", mode)}
	}
	d := p.spawn(agent, extra)
	switch d.action {
	case ActionAllow:
		return nil
	case ActionDeny:
		den := &Denied{Tool: tool, Target: agent, Rule: d.rule,
			Reason: fmt.Sprintf("the agent %q may not be spawned in this session; do not retry this call", agent)}
		if !d.ccRule {
			den.Source = d.source
		}
		return den
	}
	if mode == ModeBypass {
		return nil
	}
	rule := d.rule
	if d.ccRule {
		rule = strconv.Quote(rule)
	}
	reason := fmt.Sprintf("the rule %s (%s) asks before spawning %q", rule, d.source, agent)
	den := &Denied{Tool: tool, Target: agent}
	if p.Asker == nil || !mode.asks() {
		den.Reason = fmt.Sprintf("spawning the agent %q requires approval (%s) and nobody can approve it in this non-interactive session; "+
			"do not retry it, and tell the user, who can change that rule",
			agent, reason)
		return den
	}
	if err := ctx.Err(); err != nil {
		den.Reason, den.err = fmt.Sprintf("the permission request was abandoned: %v", err), err
		return den
	}
	ans, err := p.Asker.Ask(ctx, Question{Tool: tool, Target: agent, Reason: reason})
	switch {
	case err != nil:
		den.Reason, den.err = fmt.Sprintf("the permission request failed: %v", err), err
		return den
	case !ans.Allow:
		den.Reason, den.Interrupt = fmt.Sprintf("the user refused to let the agent %q be spawned; do not retry it, ask the user how to proceed if unsure", agent), ans.Interrupt
		if m := strings.TrimSpace(ans.Message); m != "" {
			den.Reason = fmt.Sprintf("the user refused to let the agent %q be spawned: %s", agent, m)
		}
		return den
	}
	// A spawn has no input to change, and the ask rule that asked keeps
	// asking: UpdatedInput and Remember do not apply.
	return nil
}

// SpawnVisible reports whether the agent belongs in the Agent tool's
// listing: false when spawning it is denied outright. An agent that asks
// stays listed, since the user may approve it.
func (p *Policy) SpawnVisible(agent string, extra TaskRules) bool {
	return p.spawn(agent, extra).action != ActionDeny
}

// SpawnRemoved reports whether the Agent tool leaves the pool altogether,
// and which rule takes it out: a bare Agent (or Task) deny, or task rules
// whose last rule is "*": "deny" — the settings' (p.Task) or the calling
// agent's own (extra). Either removes it: an agent file cannot bring back
// a tool the settings took away.
func (p *Policy) SpawnRemoved(extra TaskRules) (rule string, removed bool) {
	if r, ok := p.Removed("Agent"); ok {
		return r + " (permissions.deny)", true
	}
	if p.Task.RemovesTool() {
		return p.Task[len(p.Task)-1].String() + " (" + sourceTask + ")", true
	}
	if extra.RemovesTool() {
		return extra[len(extra)-1].String() + " (" + sourceAgentTask + ")", true
	}
	return "", false
}
