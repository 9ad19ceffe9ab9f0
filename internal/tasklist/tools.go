package tasklist

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/cadre-dev/cadre/tool"
)

var (
	//go:embed schemas/*.json
	schemas embed.FS
	//go:embed prompts/*.md
	prompts embed.FS
)

func embedded(fs embed.FS, path string) []byte {
	b, err := fs.ReadFile(path)
	if err != nil {
		panic("tasklist: nothing embedded at " + path) // caught by the tests
	}
	return b
}

// Caller is who calls a task-list tool: the list of its team and its name
// on the team ("main" for the lead), which becomes an owner's name.
type Caller struct {
	List  string
	Agent string
}

// Options configure the tools.
type Options struct {
	Store Store
	// Who says whose list a call works on; an error (the session is on no
	// team) is the tool's answer.
	Who func(ctx context.Context, env tool.Env) (Caller, error)
	// Completing, if set, is asked before an item is completed (the
	// TaskCompleted hook): an error refuses the completion, its text
	// telling the model why. It runs outside the store's lock.
	Completing func(ctx context.Context, c Caller, it Item) error
	// Created, if set, is asked after an item is created (the TaskCreated
	// hook): an error takes the item back out of the list (deleted) and
	// is the tool's answer. It runs outside the store's lock.
	Created func(ctx context.Context, c Caller, it Item) error
	// Changed, if set, hears every committed change: a created item (a
	// Change with only Item and Fields "created") or an update.
	Changed func(ctx context.Context, c Caller, ch Change)
	Now     func() time.Time
}

// The Meta of each tool's result, in Claude Code's output shapes
// (sdk-tools.d.ts: TaskCreateOutput, TaskGetOutput, TaskUpdateOutput,
// TaskListOutput).
type (
	CreateMeta struct {
		Task CreatedTask `json:"task"`
	}
	CreatedTask struct {
		ID          string `json:"id"`
		Subject     string `json:"subject"`
		Description string `json:"description"`
	}
	GetMeta struct {
		Task *GotTask `json:"task"`
	}
	GotTask struct {
		ID          string   `json:"id"`
		Subject     string   `json:"subject"`
		Description string   `json:"description"`
		Status      Status   `json:"status"`
		Blocks      []string `json:"blocks"`
		BlockedBy   []string `json:"blockedBy"`
	}
	UpdateMeta struct {
		Success       bool          `json:"success"`
		TaskID        string        `json:"taskId"`
		UpdatedFields []string      `json:"updatedFields"`
		Error         string        `json:"error,omitempty"`
		StatusChange  *StatusChange `json:"statusChange,omitempty"`
	}
	StatusChange struct {
		From Status `json:"from"`
		To   Status `json:"to"`
	}
	ListMeta struct {
		Tasks []ListedTask `json:"tasks"`
	}
	ListedTask struct {
		ID        string   `json:"id"`
		Subject   string   `json:"subject"`
		Status    Status   `json:"status"`
		Owner     string   `json:"owner,omitempty"`
		BlockedBy []string `json:"blockedBy"`
	}
)

// GetInput is TaskGet's input.
type GetInput struct {
	ID string `json:"taskId"`
}

// Tools returns TaskCreate, TaskGet, TaskList and TaskUpdate, in that
// order.
func Tools(o Options) []tool.Tool {
	if o.Now == nil {
		o.Now = time.Now
	}
	info := func(name, file string) tool.Info {
		// They change nothing outside cadre's own store: no approval, in
		// any mode, as TodoWrite.
		return tool.Info{
			Name: name, Description: string(embedded(prompts, "prompts/"+file+".md")),
			InputSchema: embedded(schemas, "schemas/"+strings.ToLower(name)+".json"), Access: tool.AccessRead,
		}
	}
	create := tool.New(info("TaskCreate", "task_create"), func(ctx context.Context, env tool.Env, in CreateInput) (tool.Result, error) {
		c, err := o.Who(ctx, env)
		if err != nil {
			return tool.Errorf("%v", err), nil
		}
		var it Item
		if _, err := o.Store.UpdateList(ctx, c.List, func(l *List) (err error) {
			it, err = Create(l, in, c.Agent, o.Now())
			return err
		}); err != nil {
			return tool.Errorf("TaskCreate: %v", err), nil
		}
		if o.Created != nil {
			if err := o.Created(ctx, c, it); err != nil {
				deleted := Deleted
				if _, derr := o.Store.UpdateList(ctx, c.List, func(l *List) error {
					_, err := Update(l, UpdateInput{ID: it.ID, Status: &deleted}, c.Agent, o.Now())
					return err
				}); derr != nil {
					return tool.Errorf("task #%s was refused (%v) but could not be taken back out of the list: %v", it.ID, err, derr), nil
				}
				return tool.Errorf("task #%s was not created: %v", it.ID, err), nil
			}
		}
		if o.Changed != nil {
			o.Changed(ctx, c, Change{Item: it, Fields: []string{"created"}})
		}
		res := tool.Text(fmt.Sprintf("Created task #%s: %s", it.ID, it.Subject))
		res.Meta = CreateMeta{Task: CreatedTask{ID: it.ID, Subject: it.Subject, Description: it.Description}}
		return res, nil
	})
	get := tool.New(info("TaskGet", "task_get"), func(ctx context.Context, env tool.Env, in GetInput) (tool.Result, error) {
		c, err := o.Who(ctx, env)
		if err != nil {
			return tool.Errorf("%v", err), nil
		}
		id, err := ParseID(in.ID)
		if err != nil {
			return tool.Errorf("%v", err), nil
		}
		l, err := o.Store.GetList(ctx, c.List)
		if err != nil {
			return tool.Errorf("TaskGet: %v", err), nil
		}
		it, ok := l.Item(id)
		if !ok {
			res := tool.Text(fmt.Sprintf("There is no task #%s in the team's list.", id))
			res.Meta = GetMeta{}
			return res, nil
		}
		res := tool.Text(it.Text())
		res.Meta = GetMeta{Task: &GotTask{ID: it.ID, Subject: it.Subject, Description: it.Description, Status: it.Status, Blocks: it.Blocks, BlockedBy: it.BlockedBy}}
		return res, nil
	})
	list := tool.New(info("TaskList", "task_list"), func(ctx context.Context, env tool.Env, _ struct{}) (tool.Result, error) {
		c, err := o.Who(ctx, env)
		if err != nil {
			return tool.Errorf("%v", err), nil
		}
		l, err := o.Store.GetList(ctx, c.List)
		if err != nil {
			return tool.Errorf("TaskList: %v", err), nil
		}
		meta := ListMeta{Tasks: []ListedTask{}}
		for _, it := range l.Items {
			open := l.Blockers(it)
			if open == nil {
				open = []string{}
			}
			meta.Tasks = append(meta.Tasks, ListedTask{ID: it.ID, Subject: it.Subject, Status: it.Status, Owner: it.Owner, BlockedBy: open})
		}
		res := tool.Text(l.Text())
		res.Meta = meta
		return res, nil
	})
	update := tool.New(info("TaskUpdate", "task_update"), func(ctx context.Context, env tool.Env, in UpdateInput) (tool.Result, error) {
		c, err := o.Who(ctx, env)
		if err != nil {
			return tool.Errorf("%v", err), nil
		}
		fail := func(err error) (tool.Result, error) {
			res := tool.Errorf("%v", err)
			res.Meta = UpdateMeta{TaskID: in.ID, UpdatedFields: []string{}, Error: err.Error()}
			return res, nil
		}
		if in.Status != nil && *in.Status == Completed && o.Completing != nil {
			// The hook is asked before the change, and outside the lock:
			// a hook may take its time, and may refuse.
			l, err := o.Store.GetList(ctx, c.List)
			if err != nil {
				return fail(err)
			}
			id, err := ParseID(in.ID)
			if err != nil {
				return fail(err)
			}
			if it, ok := l.Item(id); ok && it.Status != Completed {
				if err := o.Completing(ctx, c, *it); err != nil {
					return fail(fmt.Errorf("task #%s was not completed: %w", id, err))
				}
			}
		}
		var ch Change
		if _, err := o.Store.UpdateList(ctx, c.List, func(l *List) (err error) {
			ch, err = Update(l, in, c.Agent, o.Now())
			return err
		}); err != nil {
			return fail(err)
		}
		if o.Changed != nil && len(ch.Fields) > 0 {
			o.Changed(ctx, c, ch)
		}
		return updateResult(ch), nil
	})
	return []tool.Tool{create, get, list, update}
}

func updateResult(ch Change) tool.Result {
	var b strings.Builder
	switch {
	case ch.Deleted:
		fmt.Fprintf(&b, "Deleted task #%s.", ch.Item.ID)
	case len(ch.Fields) == 0:
		fmt.Fprintf(&b, "Task #%s is unchanged.", ch.Item.ID)
	default:
		fmt.Fprintf(&b, "Updated task #%s: %s.", ch.Item.ID, strings.Join(ch.Fields, ", "))
	}
	if ch.Claimed {
		fmt.Fprintf(&b, " It is yours (%s).", ch.Item.Owner)
	}
	if len(ch.Unblocked) > 0 {
		fmt.Fprintf(&b, " No longer blocked: %s.", hashList(ch.Unblocked))
	}
	if ch.To == Completed {
		b.WriteString(" Check TaskList for the next free task.")
	}
	res := tool.Text(b.String())
	meta := UpdateMeta{Success: true, TaskID: ch.Item.ID, UpdatedFields: ch.Fields}
	if meta.UpdatedFields == nil {
		meta.UpdatedFields = []string{}
	}
	if ch.From != "" || ch.To != "" {
		meta.StatusChange = &StatusChange{From: ch.From, To: ch.To}
	}
	res.Meta = meta
	return res
}

// ErrNoTeam is what the tools answer a session that belongs to no team.
var ErrNoTeam = errors.New("this agent is on no team, so it has no shared task list")
