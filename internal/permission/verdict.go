package permission

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"

	"github.com/cadre-dev/cadre/tool"
)

// PermitVerdict decides a call that a PreToolUse hook judged first.
// verdict "allow" approves what would be asked — deny rules, plan mode and
// everything else that refuses still refuse, and a change of a protected
// path (.git, .cadre, the config dirs) is still put to the user, since a
// hook is not the user; "ask" asks even where an allow rule or the mode
// would approve — again after what refuses. Any other verdict is Permit.
//
// Like PermitInput, it returns the input to run.
func (p *Policy) PermitVerdict(ctx context.Context, name string, t tool.Tool, env tool.Env, input json.RawMessage, verdict, reason string) (json.RawMessage, error) {
	switch verdict {
	case "allow":
		q := *p
		q.Asker = approve{p}
		return q.PermitInput(ctx, name, t, env, input)
	case "ask":
		q := *p
		rec := &recordAsks{Asker: p.Asker}
		if p.Asker != nil {
			q.Asker = rec
		}
		if run, err := q.PermitInput(ctx, name, t, env, input); err != nil || rec.asked {
			return run, err
		}
		why := "a PreToolUse hook asks for approval of this call"
		if reason != "" {
			why += ": " + reason
		}
		var changed json.RawMessage
		c := call{name: name, approval: &changed}
		if t != nil {
			c.access = t.Info().Access
			c.cwd = env.Cwd
			c.target, _ = p.target(t, c, env, input)
		}
		if err := p.ask(ctx, c, env, input, why); err != nil {
			return nil, err
		}
		return p.changedInput(ctx, name, t, env, input, changed)
	}
	return p.PermitInput(ctx, name, t, env, input)
}

// approve answers the asks of a call a hook approved: yes, but for a
// change of a protected file, which goes to the policy's own Asker.
type approve struct{ p *Policy }

func (a approve) Ask(ctx context.Context, q Question) (Answer, error) {
	if filepath.IsAbs(q.Target) {
		if _, ok := a.p.protected(q.Target); ok {
			if a.p.Asker == nil {
				return Answer{}, errors.New("a PreToolUse hook's approval does not cover a protected path, and nobody can approve it in this non-interactive session")
			}
			return a.p.Asker.Ask(ctx, q)
		}
	}
	return Answer{Allow: true}, nil
}

// recordAsks passes asks on and remembers that there was one.
type recordAsks struct {
	Asker
	asked bool
}

func (r *recordAsks) Ask(ctx context.Context, q Question) (Answer, error) {
	r.asked = true
	return r.Asker.Ask(ctx, q)
}
