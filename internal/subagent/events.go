package subagent

import (
	"github.com/cadre-dev/cadre/internal/event"
	"github.com/cadre-dev/cadre/internal/ids"
)

// The task_* system events: a run's start, progress and end on the bus.

func (s *Service) progress(t *liveTask) {
	_, tokens, toolUses, last := t.snapshot()
	s.system(t.rootSessionID, "task_progress", map[string]any{
		"task_id": t.id, "tool_use_id": t.toolUseID, "description": t.description, "subagent_type": t.agentType,
		"usage":          map[string]any{"total_tokens": tokens, "tool_uses": toolUses, "duration_ms": s.cfg.Now().Sub(t.started).Milliseconds()},
		"last_tool_name": last,
	})
}

func (s *Service) system(rootSessionID, subtype string, fields map[string]any) {
	if s.cfg.Bus == nil {
		return
	}
	s.cfg.Bus.Publish(event.Event{Type: event.TypeSystem, Subtype: subtype, SessionID: rootSessionID, Time: s.cfg.Now(), UUID: ids.New(), Fields: fields})
}
