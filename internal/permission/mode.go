package permission

import (
	"fmt"
	"slices"
	"strings"

	"github.com/cadre-dev/cadre/internal/excerpt"
)

// Mode is a session's permission mode, least to most permissive: plan,
// default, acceptEdits, bypassPermissions.
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
)

// Modes lists the valid modes, least permissive first.
func Modes() []Mode { return []Mode{ModePlan, ModeDefault, ModeAcceptEdits, ModeBypass} }

// ParseMode returns the mode named s. Case is ignored, so "acceptedits"
// is acceptEdits; the returned Mode is always spelled canonically.
func ParseMode(s string) (Mode, error) {
	t := strings.TrimSpace(s)
	for _, m := range Modes() {
		if strings.EqualFold(t, string(m)) {
			return m, nil
		}
	}
	names := make([]string, 0, 4)
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
// unset). The definition's mode applies, acceptEdits when it has none,
// within two limits: a child of a plan parent is in plan too (the parent
// has not been allowed to change anything, so its helpers may not
// either), and only a bypassPermissions parent may have a
// bypassPermissions child; any other gets acceptEdits instead, the most a
// child is given by default. Deny rules hold for children whatever their
// mode; that is the Policy's business, not the mode's.
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
	case child == ModeBypass && parent != ModeBypass:
		return ModeAcceptEdits, nil
	}
	return child, nil
}
