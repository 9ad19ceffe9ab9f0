package permission

import (
	"context"
	"encoding/json"

	"github.com/cadre-dev/cadre/tool"
)

// PermitVerdict decides a call that a PreToolUse hook judged first.
// verdict "allow" approves what would be asked — deny rules, plan mode and
// everything else that refuses still refuse; "ask" asks even where an
// allow rule or the mode would approve — again after what refuses. Any
// other verdict is Permit.
func (p *Policy) PermitVerdict(ctx context.Context, name string, t tool.Tool, env tool.Env, input json.RawMessage, verdict, reason string) error {
	switch verdict {
	case "allow":
		q := *p
		q.Asker = approve{}
		return q.Permit(ctx, name, t, env, input)
	case "ask":
		q := *p
		rec := &recordAsks{Asker: p.Asker}
		if p.Asker != nil {
			q.Asker = rec
		}
		if err := q.Permit(ctx, name, t, env, input); err != nil || rec.asked {
			return err
		}
		why := "a PreToolUse hook asks for approval of this call"
		if reason != "" {
			why += ": " + reason
		}
		c := call{name: name}
		if t != nil {
			c.access = t.Info().Access
			c.cwd = env.Cwd
			c.target, _ = p.target(t, c, env, input)
		}
		return p.ask(ctx, c, env, input, why)
	}
	return p.Permit(ctx, name, t, env, input)
}

// approve answers every ask with yes: a hook approved the call.
type approve struct{}

func (approve) Ask(context.Context, Question) (bool, error) { return true, nil }

// recordAsks passes asks on and remembers that there was one.
type recordAsks struct {
	Asker
	asked bool
}

func (r *recordAsks) Ask(ctx context.Context, q Question) (bool, error) {
	r.asked = true
	return r.Asker.Ask(ctx, q)
}
