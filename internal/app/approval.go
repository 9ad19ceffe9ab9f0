package app

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/cadre-dev/cadre/approval"
	"github.com/cadre-dev/cadre/internal/config"
	"github.com/cadre-dev/cadre/internal/hook"
	"github.com/cadre-dev/cadre/internal/permission"
)

// asker puts a PermissionFunc behind the policy's question, after the
// Notification hooks (a permission prompt is one of Claude Code's).
type asker struct {
	f approval.Func
	a *App
}

// Asker is the permission layer's asker that puts f's question to it.
func (a *App) Asker(f approval.Func) permission.Asker { return asker{f, a} }

func (k asker) Ask(ctx context.Context, q permission.Question) (permission.Answer, error) {
	k.a.notify(ctx, q)
	d, err := k.f(ctx, approval.Request{
		Tool: q.Tool, Target: q.Target, Input: q.Input, SessionID: q.SessionID, ToolUseID: q.ToolUseID, Reason: q.Reason,
		Agent: q.Agent, AgentID: q.AgentID, ParentToolUseID: q.ParentToolUseID, Suggestions: q.Suggestions,
		ExactRules: q.Exact, Edits: q.Edits, Change: fileChange(q.Change),
	})
	if err != nil {
		return permission.Answer{}, err
	}
	remember := d.Remember
	if d.Allow {
		saved, err := k.a.saveRules(d.Save)
		if err != nil {
			return permission.Answer{}, err
		}
		remember = append(slices.Clip(remember), saved...)
	}
	return permission.Answer{Allow: d.Allow, UpdatedInput: d.UpdatedInput, Message: d.Message, Interrupt: d.Interrupt, Remember: remember}, nil
}

// fileChange is the runtime's view of a question's change.
func fileChange(c *permission.Change) *approval.FileChange {
	if c == nil {
		return nil
	}
	return &approval.FileChange{Path: c.Path, Create: c.Create, Old: c.Old, New: c.New, Diff: c.Diff}
}

// saveRules writes the rule updates of an approval to their settings
// files, and returns the allow rules among them, which hold for the rest
// of the conversation too.
func (a *App) saveRules(updates []approval.RuleUpdate) (allow []string, err error) {
	for _, u := range updates {
		if u.Behavior == "allow" {
			allow = append(allow, u.Rules...)
		}
		if len(u.Rules) == 0 {
			continue
		}
		switch u.Destination {
		case approval.RulesSession:
			if u.Behavior != "allow" {
				return nil, fmt.Errorf("cannot add %s rules for the session: only allow rules are kept per session; save them to localSettings or userSettings", u.Behavior)
			}
		case approval.RulesLocal:
			path := config.LocalSettingsPath(a.Cwd)
			if err := config.CheckLocal(a.Cwd, path); err != nil {
				return nil, err
			}
			if err := config.AddRules(path, u.Behavior, u.Rules); err != nil {
				return nil, err
			}
		case approval.RulesUser:
			if err := config.AddRules(config.UserSettingsPath(a.Cfg.Home), u.Behavior, u.Rules); err != nil {
				return nil, err
			}
		case approval.RulesProject:
			return nil, fmt.Errorf("cannot save %s to projectSettings: cadre does not write the project's shared settings, which belong to the repository; save them to localSettings (untracked) or userSettings", strings.Join(u.Rules, ", "))
		default:
			return nil, fmt.Errorf("cannot save %s: unknown destination %q (want session, localSettings, userSettings)", strings.Join(u.Rules, ", "), u.Destination)
		}
	}
	return allow, nil
}

// notify runs the Notification hooks for a permission prompt.
func (a *App) notify(ctx context.Context, q permission.Question) {
	if !a.Hooks.Has(hook.Notification) {
		return
	}
	a.Hooks.Run(ctx, hook.Input{
		Event: hook.Notification, SessionID: q.SessionID, Cwd: a.Cwd, PermissionMode: string(a.Policy.Mode),
		Message: fmt.Sprintf("cadre needs your permission to use %s", q.Tool), Title: "Permission needed", NotificationType: "permission_prompt",
	})
}
