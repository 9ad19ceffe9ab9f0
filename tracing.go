package cadre

import (
	"context"

	"github.com/cadre-dev/cadre/internal/queue"
	"github.com/cadre-dev/cadre/internal/runner"
	"github.com/cadre-dev/cadre/internal/telemetry"
)

// Tracing (docs/tracing.md): Options.TracerProvider makes r.app.Tracer, which
// the main agent's loop, the subagent service and each turn below use.

// tracedTurn is runTurn inside the turn's invoke_agent span, the parent
// of its model and tool calls' spans (and so of its subagents').
func (c *Conversation) tracedTurn(ctx context.Context, conv *runner.Conversation, hooks *runner.Hooks, entries []queue.Entry) *runner.Result {
	if !c.r.app.Tracer.Enabled() {
		return c.runTurn(ctx, conv, hooks, entries)
	}
	model, _ := c.current()
	ctx, span := c.r.app.Tracer.StartRun(ctx, telemetry.Run{Agent: "main", SessionID: c.target, Model: model.Name()})
	res := c.runTurn(ctx, conv, hooks, entries)
	span.EndRun(res.Usage, res.Err)
	return res
}
