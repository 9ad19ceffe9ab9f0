package builtin

import (
	"context"
	_ "embed"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/cadre-dev/cadre/tool"
)

//go:embed todowrite.md
var todoWriteDescription string

// Todo statuses.
const (
	TodoPending    = "pending"
	TodoInProgress = "in_progress"
	TodoCompleted  = "completed"
)

// Todo is one item of a to-do list, as Claude Code's TodoWrite names it.
type Todo struct {
	Content    string `json:"content" jsonschema:"The step, in the imperative"`
	Status     string `json:"status" jsonschema:"pending, in_progress or completed"`
	ActiveForm string `json:"activeForm" jsonschema:"The step as it is being done, shown while in progress"`
}

// TodoWriteInput is TodoWrite's input, as Claude Code names it.
type TodoWriteInput struct {
	Todos []Todo `json:"todos" jsonschema:"The updated todo list"`
}

// TodoMeta is the Meta of a TodoWrite result, as Claude Code's output: the
// list before and after the call. Front ends show NewTodos; the agent is
// the event's.
type TodoMeta struct {
	OldTodos []Todo `json:"oldTodos"`
	NewTodos []Todo `json:"newTodos"`
}

// TodoWrite returns the TodoWrite tool. Each session has its own list,
// kept for as long as the tool (the runtime) lives.
func TodoWrite(opts Options) tool.Tool {
	o := opts.withDefaults()
	var mu sync.Mutex
	lists := map[string][]Todo{}
	return tool.New(tool.Info{
		Name:        "TodoWrite",
		Description: describe("TodoWrite", todoWriteDescription, o),
		InputSchema: schema("todowrite"),
		// It changes nothing outside cadre: no approval needed, in any mode.
		Access: tool.AccessRead,
	}, func(ctx context.Context, env tool.Env, in TodoWriteInput) (tool.Result, error) {
		for i, t := range in.Todos {
			if strings.TrimSpace(t.Content) == "" {
				return tool.Errorf("todos[%d].content is empty: say what the step is.", i), nil
			}
			if !slices.Contains([]string{TodoPending, TodoInProgress, TodoCompleted}, t.Status) {
				return tool.Errorf("todos[%d].status %q is not valid: want pending, in_progress or completed.", i, t.Status), nil
			}
		}
		mu.Lock()
		old := lists[env.SessionID]
		lists[env.SessionID] = slices.Clone(in.Todos)
		mu.Unlock()
		if old == nil {
			old = []Todo{}
		}
		todos := in.Todos
		if todos == nil {
			todos = []Todo{}
		}
		done := 0
		for _, t := range todos {
			if t.Status == TodoCompleted {
				done++
			}
		}
		return tool.Result{
			Content: tool.Text(fmt.Sprintf("The to-do list is updated (%d of %d done). Keep it current as you work: one step in progress, each marked completed as soon as it is done.", done, len(todos))).Content,
			Meta:    TodoMeta{OldTodos: old, NewTodos: slices.Clone(todos)},
		}, nil
	})
}
