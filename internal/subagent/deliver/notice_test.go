package deliver

import (
	"log/slog"
	"testing"

	"github.com/cadre-dev/cadre/internal/queue"
	"github.com/cadre-dev/cadre/internal/subagent/runs"
	"github.com/cadre-dev/cadre/internal/task"
	"github.com/cadre-dev/cadre/llm"
)

// TestNoticeAnnouncedBeforeQueued: whichever way a run's end is delivered,
// its task_notification is published before its entry can be taken from
// the queue. The agent it is for may take the entry and answer it at once
// (a fast model), and a front end showed that turn's result before the
// notification that started it (TestRemoteSubagentBackground, under load).
func TestNoticeAnnouncedBeforeQueued(t *testing.T) {
	const id = "0190aaaa-0000-7000-8000-0000000000d1"
	for _, path := range []string{"Notify", "Ended, claiming with the end's write", "the last watcher's Leave"} {
		t.Run(path, func(t *testing.T) {
			ctx := t.Context()
			d := &Desk{Tasks: task.NewMem(), Queue: &queue.Queue{}, Log: slog.New(slog.DiscardHandler)}
			rec := task.Task{ID: id, Kind: task.KindLocalAgent, Agent: "general-purpose", Description: "d", Status: task.StatusCompleted, Created: fixedNow, Finished: fixedNow}
			if err := d.Tasks.CreateTask(ctx, rec); err != nil {
				t.Fatal(err)
			}
			published, queuedFirst := 0, false
			n := &Notice{
				Entry: queue.Entry{Mode: queue.ModeNotification, TaskID: id, Message: llm.UserText("<task-notification>")},
				Event: func() {
					published++
					queuedFirst = d.Queue.Len("") > 0
				},
			}
			run := &ended{phase: runs.PhaseOf(true).End()}
			switch path {
			case "Notify":
				d.Notify(ctx, run, n)
			case "Ended, claiming with the end's write":
				if !d.BeginEndClaim(run) {
					t.Fatal("the end's write may not claim the flag")
				}
				d.Ended(ctx, run, true, true, n, nil)
			default:
				w := d.Watch(run)
				d.Notify(ctx, run, n) // handed over to the watcher
				if published != 0 {
					t.Fatal("a watched run's end was announced before its watcher left")
				}
				w.Leave()
			}
			if published != 1 {
				t.Fatalf("the task_notification was published %d times, want once", published)
			}
			if queuedFirst {
				t.Error("the entry was in the queue before its task_notification was published")
			}
			if got := d.Queue.Len(""); got != 1 {
				t.Errorf("%d entries queued, want 1", got)
			}
		})
	}
}
