package permission

import (
	"fmt"
	"slices"
	"strings"

	"github.com/cadre-dev/cadre/internal/excerpt"
)

// Mode is a session's permission mode, least to most permissive: plan,
// dontAsk, default, acceptEdits, auto, bypassPermissions.
type Mode string

const (
	// ModePlan allows read tools only.
	ModePlan Mode = "plan"
	// ModeDefault allows reads inside the workspace and asks for the rest.
	ModeDefault Mode = "default"
	// ModeAcceptEdits also allows edits inside the workspace.
	ModeAcceptEdits Mode = "acceptEdits"
	// ModeBypass allows everything no deny rule forbids.
	ModeBypass Mode = "bypassPermissions"
	// ModeDontAsk is default that never asks: what default would ask about
	// is denied, so only what it allows and the allow rules run (Claude
	// Code's dontAsk).
	ModeDontAsk Mode = "dontAsk"
	// ModeAuto is acceptEdits that never asks: edits inside the workspace
	// run, and what acceptEdits would ask about is denied. Claude Code's
	// auto mode lets a safety classifier approve such calls; cadre has
	// none, so it takes the side that needs nobody's judgement.
	ModeAuto Mode = "auto"
)

// Modes lists the valid modes, least permissive first.
func Modes() []Mode {
	return []Mode{ModePlan, ModeDontAsk, ModeDefault, ModeAcceptEdits, ModeAuto, ModeBypass}
}

// base is the mode whose rules m follows: dontAsk and auto decide as
// default and acceptEdits do, and differ only in never asking (asks).
func (m Mode) base() Mode {
	switch m {
	case "":
		return ModeDefault
	case ModeDontAsk:
		return ModeDefault
	case ModeAuto:
		return ModeAcceptEdits
	}
	return m
}

// asks reports whether a call that needs approval is put to the Asker in
// mode m; in dontAsk and auto it is denied instead.
func (m Mode) asks() bool { return m != ModeDontAsk && m != ModeAuto }

// quiet is the mode that decides as m does without asking.
func (m Mode) quiet() Mode {
	switch m {
	case ModeDefault:
		return ModeDontAsk
	case ModeAcceptEdits:
		return ModeAuto
	}
	return m
}

// ParseMode returns the mode named s. Case is ignored, so "acceptedits"
// is acceptEdits; the returned Mode is always spelled canonically.
func ParseMode(s string) (Mode, error) {
	t := strings.TrimSpace(s)
	for _, m := range Modes() {
		if strings.EqualFold(t, string(m)) {
			return m, nil
		}
	}
	names := make([]string, 0, len(Modes()))
	for _, m := range Modes() {
		names = append(names, string(m))
	}
	if t == "" {
		return "", fmt.Errorf("empty permission mode: want one of %s", strings.Join(names, ", "))
	}
	return "", fmt.Errorf("unknown permission mode %s: want one of %s", excerpt.Quote(s), strings.Join(names, ", "))
}

// ChildMode is the permission mode of a subagent whose parent runs in
// parent and whose definition asks for def (its permissionMode; "" when
// unset): the definition's mode, acceptEdits when it has none, capped by
// the parent's, so that delegating is never a way around the user's
// choice (issue 22). A child of a plan parent is in plan; a child of a
// bypassPermissions parent is in bypassPermissions too, whatever its
// definition says (Claude Code's rule: the user already chose that nothing
// asks). Under a parent that never asks, its child never asks either.
// Deny rules hold for children whatever their mode; that is the Policy's
// business, not the mode's.
func ChildMode(parent Mode, def string) (Mode, error) {
	if parent == "" {
		parent = ModeDefault
	}
	if !slices.Contains(Modes(), parent) {
		return "", fmt.Errorf("parent permission mode %q is unknown", parent)
	}
	child := ModeAcceptEdits
	if strings.TrimSpace(def) != "" {
		m, err := ParseMode(def)
		if err != nil {
			return "", fmt.Errorf("agent permissionMode: %w", err)
		}
		child = m
	}
	switch {
	case parent == ModePlan:
		return ModePlan, nil
	case parent == ModeBypass:
		return ModeBypass, nil
	case rank(child.base()) > rank(parent.base()):
		child = parent.base()
	}
	if !parent.asks() {
		// Nobody is asked under a parent that never asks, its helpers'
		// calls included.
		child = child.quiet()
	}
	return child, nil
}

// rank orders the modes that decide (see base) by what they allow.
func rank(m Mode) int {
	return slices.Index([]Mode{ModePlan, ModeDefault, ModeAcceptEdits, ModeBypass}, m)
}

// Within reports whether mode m allows no more than max does, judged by
// the modes' rules (dontAsk is within default, auto within acceptEdits):
// how a server refuses a request that would raise its own mode.
func Within(m, max Mode) bool {
	if m == "" {
		m = ModeDefault
	}
	if max == "" {
		max = ModeDefault
	}
	if rank(m.base()) > rank(max.base()) {
		return false
	}
	// The same rules, but m would ask where max never does.
	return m.base() != max.base() || m.asks() == max.asks() || !m.asks()
}
