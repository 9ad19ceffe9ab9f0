package remoteagent

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/cadre-dev/cadre/internal/agent"
	"github.com/cadre-dev/cadre/internal/crossnode"
	"github.com/cadre-dev/cadre/internal/permission"
	"github.com/cadre-dev/cadre/internal/remote"
	"github.com/cadre-dev/cadre/internal/subagent/notify"
	"github.com/cadre-dev/cadre/internal/subagent/prompt"
	"github.com/cadre-dev/cadre/internal/subagent/runs"
	"github.com/cadre-dev/cadre/internal/task"
)

// Ask is how a remote agent's INPUT_REQUIRED reaches the user: a
// question on the same approval path as a permission ask (tool
// remote_agent, its input the task id and the question), answered by
// allowing — with updatedInput {"answer": "…"} for a reply in words, else
// the agent is told to go on — or refused. Nil when nobody can answer
// (headless): the model is then told and its next message answers.
func Ask(asker permission.Asker, name string) func(ctx context.Context, task, question string) (string, error) {
	if asker == nil {
		return nil
	}
	return func(ctx context.Context, task, question string) (string, error) {
		in, err := json.Marshal(map[string]string{"task_id": task, "question": question})
		if err != nil {
			return "", err
		}
		ans, err := asker.Ask(ctx, permission.Question{
			Tool: "remote_agent", Target: name, Input: in,
			Reason: fmt.Sprintf("the remote agent %q needs input to go on with task %s: %s", name, task, question),
		})
		if err != nil {
			return "", fmt.Errorf("the question could not be asked: %w", err)
		}
		if !ans.Allow {
			return "", fmt.Errorf("the user declined to answer: %s", cmp.Or(strings.TrimSpace(ans.Message), "no reason given"))
		}
		var reply struct {
			Answer string `json:"answer"`
		}
		if len(ans.UpdatedInput) > 0 {
			if err := json.Unmarshal(ans.UpdatedInput, &reply); err != nil {
				return "", fmt.Errorf("the answer's updatedInput is not {\"answer\": \"…\"}: %w", err)
			}
		}
		return cmp.Or(strings.TrimSpace(reply.Answer), "Approved: go on."), nil
	}
}

// Recorder keeps what a background remote run reports on its record.
type Recorder struct {
	Tasks  task.Store
	Events notify.Publisher
	Log    *slog.Logger
}

// Progress records a remote agent's status line as its background task's
// progress and announces it.
func (r Recorder) Progress(ctx context.Context, t *runs.Live, line string) {
	if !t.IsBackground() {
		return
	}
	_, err := r.Tasks.UpdateTask(context.WithoutCancel(ctx), t.ID, func(rec *task.Task) error {
		if !rec.Status.Terminal() {
			rec.Progress = prompt.Clip(line, 200)
		}
		return nil
	})
	if err != nil {
		r.Log.WarnContext(ctx, "record a remote task's progress", "task_id", t.ID, "err", err)
	}
	r.Events.Progress(t)
}

// TaskID records the id the remote server gave a background run's task
// beside the run's record, so that a cadre started after this one ended
// can subscribe to the task again (Follow). A foreground run has no
// record to keep it in, and needs none: its caller waits for it.
func (r Recorder) TaskID(ctx context.Context, t *runs.Live, id string) {
	if !t.IsBackground() {
		return
	}
	_, err := r.Tasks.UpdateTask(context.WithoutCancel(ctx), t.ID, func(rec *task.Task) error {
		if rec.RemoteTaskID == id {
			return errUnchanged
		}
		rec.RemoteTaskID = id
		return nil
	})
	if err != nil && !errors.Is(err, errUnchanged) {
		r.Log.WarnContext(ctx, "record a remote task's id", "task_id", t.ID, "remote_task_id", id, "err", err)
	}
}

// errUnchanged aborts an update that would store what is there already.
var errUnchanged = errors.New("unchanged")

// Follow is how the reattached run rec gets its answer: from its remote
// task, through a new client for its agent's definition (ask answers its
// questions); or, when that definition is gone here, the error that says
// the task cannot be followed, so that the run ends and its agent is told
// rather than left running forever. closeAgent releases the client.
func Follow(agents *agent.Registry, ask func(name string) func(ctx context.Context, task, question string) (string, error), rec task.Task) (follow func(ctx context.Context, progress func(line string)) (string, error), closeAgent func()) {
	def, ok := agents.Get(rec.Agent)
	if !ok || def.URL == "" {
		err := fmt.Errorf("the cadre process that ran it ended, and the remote agent %q is not defined with a url here, so its remote task %s could not be followed again", rec.Agent, rec.RemoteTaskID)
		return func(context.Context, func(string)) (string, error) { return "", err }, func() {}
	}
	ra, err := remote.New(remote.Config{Name: def.Name, URL: def.URL, Headers: def.Headers, Ask: ask(def.Name)})
	if err != nil {
		return func(context.Context, func(string)) (string, error) { return "", err }, func() {}
	}
	follow = func(ctx context.Context, progress func(line string)) (string, error) {
		ra.Observe(progress)
		return ra.Resume(ctx, rec.RemoteTaskID)
	}
	return follow, func() { ra.Close() }
}

// Orphan is a remote run reattached: its record as taken, how its answer
// is followed (Follow) and the client to release when it ends.
type Orphan struct {
	Rec        task.Task
	Follow     func(ctx context.Context, progress func(line string)) (string, error)
	CloseAgent func()
}

// Reattacher finds and claims the background remote runs whose cadre
// process has ended, to follow their remote tasks again (S-W2).
type Reattacher struct {
	Tasks  task.Store
	Agents *agent.Registry
	// Ask answers a followed agent's questions (Ask, for the agent named).
	Ask   func(name string) func(ctx context.Context, task, question string) (string, error)
	Owner string
	Now   func() time.Time
}

// Claim lists the pending and running remote runs that the main agent of
// session parent (in run tree root) started, and claims for this process
// those whose remote task has an id, that are not live here (live) and
// whose owner has ended (gone). A run the server never named a task for is
// left to the start-up recovery (task.Sweep). An error for one run does
// not stop the others.
func (r Reattacher) Claim(ctx context.Context, root, parent string, live, gone func(string) bool) ([]Orphan, error) {
	recs, err := r.Tasks.ListTasks(ctx, task.Filter{
		RootSessionID: root, ParentSessionID: parent,
		Statuses: []task.Status{task.StatusPending, task.StatusRunning},
	})
	if err != nil {
		return nil, fmt.Errorf("reattach remote runs: %w", err)
	}
	var (
		out  []Orphan
		errs []error
	)
	for _, listed := range recs {
		if listed.Kind != task.KindRemoteAgent || listed.RemoteTaskID == "" || live(listed.ID) || !gone(listed.Owner) {
			continue
		}
		follow, closeAgent := Follow(r.Agents, r.Ask, listed)
		rec, ok, err := crossnode.Takeover(ctx, r.Tasks, listed, r.Owner, r.Now())
		if err != nil {
			closeAgent()
			errs = append(errs, fmt.Errorf("reattach remote run %s: %w", listed.ID, err))
			continue
		}
		if !ok {
			closeAgent()
			continue
		}
		out = append(out, Orphan{Rec: rec, Follow: follow, CloseAgent: closeAgent})
	}
	return out, errors.Join(errs...)
}
