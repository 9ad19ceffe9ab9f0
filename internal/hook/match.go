package hook

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// pattern is a compiled matcher, read as Claude Code reads one: empty or
// "*" matches everything; a plain name ("Bash") or names joined by "|"
// (or, as Claude Code also takes, ",": "Edit|Write", "Edit, Write") match
// exactly; anything else is a regular expression that matches when it is
// found in the name, as JavaScript's RegExp.test does ("mcp__github__.*",
// "Notebook.*"; anchor it with ^…$ to match whole names). The subagent
// tool answers to both of its names, Agent and Task.
type pattern struct {
	all   bool
	names []string
	re    *regexp.Regexp
}

func compile(p string) (pattern, error) {
	p = strings.TrimSpace(p)
	if p == "" || p == "*" {
		return pattern{all: true}, nil
	}
	if plain(p) {
		var names []string
		for _, n := range strings.FieldsFunc(p, func(r rune) bool { return r == '|' || r == ',' }) {
			if n = strings.TrimSpace(n); n != "" {
				names = append(names, n)
			}
		}
		return pattern{names: names}, nil
	}
	re, err := regexp.Compile(p)
	if err != nil {
		return pattern{}, fmt.Errorf("matcher %q is not a valid regular expression: %w", p, err)
	}
	return pattern{re: re}, nil
}

// plain reports whether p is names joined by "|" or ",": letters,
// digits, "_", "-", spaces and the separators only.
func plain(p string) bool {
	for _, r := range p {
		if !(strings.ContainsRune("_|, -", r) || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

func (p pattern) match(name string) bool {
	if p.all {
		return true
	}
	for _, n := range aliases(name) {
		if p.re != nil && p.re.MatchString(n) || slices.Contains(p.names, n) {
			return true
		}
	}
	return false
}

// aliases are the names a matcher may use for name: the subagent tool is
// Agent in cadre and Task in older Claude Code settings.
func aliases(name string) []string {
	switch name {
	case "Agent":
		return []string{"Agent", "Task"}
	case "Task":
		return []string{"Task", "Agent"}
	}
	return []string{name}
}

// subject is what an event's matcher is compared with; "" for events that
// take no matcher (every hook of theirs runs).
func subject(in *Input) (string, bool) {
	switch in.Event {
	case PreToolUse, PostToolUse:
		return in.ToolName, true
	case SubagentStart, SubagentStop:
		return in.AgentType, true
	case PreCompact:
		return in.Trigger, true
	case SessionStart:
		return in.Source, true
	case SessionEnd:
		return in.Reason, true
	case Notification:
		return in.NotificationType, true
	}
	return "", false
}
