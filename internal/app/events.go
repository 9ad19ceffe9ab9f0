package app

import (
	"github.com/cadre-dev/cadre/event"
	"github.com/cadre-dev/cadre/internal/builtin"
	bus "github.com/cadre-dev/cadre/internal/event"
)

// EventOf is a bus event as an SDK user gets it: the bus carries the
// SDK's type, so this copies the payloads — an SDK user who changes an
// event's payload does not change what other subscribers see — and adds
// what is read off a tool result's detail (the to-do list).
func EventOf(e bus.Event) event.Event {
	out := e
	out.Assistant, out.Init, out.Result = clone(e.Assistant), clone(e.Init), clone(e.Result)
	out.Compact, out.Retry, out.TeamTask = clone(e.Compact), clone(e.Retry), clone(e.TeamTask)
	if e.Task != nil {
		out.Task = clone(e.Task)
		out.Task.Usage = clone(e.Task.Usage)
	}
	if out.Todos == nil {
		out.Todos = todosOf(e.ToolUseResult)
	}
	return out
}

// clone copies a payload.
func clone[T any](p *T) *T {
	if p == nil {
		return nil
	}
	c := *p
	return &c
}

// todosOf finds the list a TodoWrite call left in a tool result's detail:
// the one call's, or the last of several in one message.
func todosOf(meta any) []event.Todo {
	var found *builtin.TodoMeta
	switch m := meta.(type) {
	case builtin.TodoMeta:
		found = &m
	case map[string]any:
		for _, v := range m {
			if t, ok := v.(builtin.TodoMeta); ok {
				found = &t
			}
		}
	}
	if found == nil {
		return nil
	}
	out := make([]event.Todo, len(found.NewTodos))
	for i, t := range found.NewTodos {
		out[i] = event.Todo{Content: t.Content, Status: t.Status, ActiveForm: t.ActiveForm}
	}
	return out
}
