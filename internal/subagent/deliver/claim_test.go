package deliver

import (
	"log/slog"
	"testing"
	"time"

	"github.com/cadre-dev/cadre/internal/queue"
	"github.com/cadre-dev/cadre/internal/subagent/runs"
	"github.com/cadre-dev/cadre/internal/task"
	"github.com/cadre-dev/cadre/llm"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// fixedNow is the tests' clock.
var fixedNow = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

// ended is a run of this process whose end is decided.
type ended struct {
	phase runs.Phase
	state State
	done  chan struct{}
}

func (e *ended) Phase() runs.Phase     { return e.phase }
func (e *ended) Done() <-chan struct{} { return e.done }
func (e *ended) OutputTail(int) string { return "" }
func (e *ended) Delivery() *State      { return &e.state }

// TestClaim pins the decision a reader gets for a run's end (Desk.Claim),
// for a run it watched in this process and for one it knows only by its
// record.
func TestClaim(t *testing.T) {
	const id = "0190aaaa-0000-7000-8000-0000000000c1"
	tests := []struct {
		name string
		// run: "" (no run in this process), "foreground" or "background".
		run      string
		notice   noticeState
		status   task.Status // the record's; "" for none
		notified bool        // the record's flag
		queued   bool        // a notification of the task waits in the queue
		want     Delivery
	}{
		{name: "foreground run", run: "foreground", want: ToSpawner},
		{name: "background run, nobody delivered", run: "background", status: task.StatusCompleted, want: Show},
		{name: "background run, notification unread", run: "background", notice: noticeQueued, status: task.StatusCompleted, notified: true, queued: true, want: Show},
		{name: "background run, notification read", run: "background", notice: noticeQueued, status: task.StatusCompleted, notified: true, want: Already},
		{name: "background run, another reader showed it", run: "background", notice: noticeClaimed, status: task.StatusCompleted, notified: true, want: Already},
		{name: "background run handed over, then resumed", run: "background", status: task.StatusRunning, want: Show},
		{name: "record only, nobody delivered", status: task.StatusCompleted, want: Show},
		{name: "record only, notification unread", status: task.StatusCompleted, notified: true, queued: true, want: Show},
		{name: "record only, notification read", status: task.StatusCompleted, notified: true, want: Already},
		{name: "record only, resumed since it was read", status: task.StatusRunning, want: Already},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := &Desk{Tasks: task.NewMem(), Queue: &queue.Queue{}, Log: slog.New(slog.DiscardHandler)}
			ctx := t.Context()
			if tt.status != "" {
				rec := task.Task{ID: id, Kind: task.KindLocalAgent, Agent: "general-purpose", Description: "d", Status: tt.status, Notified: tt.notified, Created: fixedNow}
				if tt.status.Terminal() {
					rec.Finished = fixedNow
				}
				if err := d.Tasks.CreateTask(ctx, rec); err != nil {
					t.Fatal(err)
				}
			}
			if tt.queued {
				d.Queue.Push(queue.Entry{Mode: queue.ModeNotification, TaskID: id, Message: llm.UserText("<task-notification>")})
			}
			var lt Run // a nil Run, not a nil *ended
			if tt.run != "" {
				p := runs.PhaseOf(tt.run == "background").End()
				lt = &ended{phase: p, state: State{notice: tt.notice}}
			}
			if got := d.Claim(ctx, id, lt); got != tt.want {
				t.Errorf("claim = %v, want %v", got, tt.want)
			}
			if left := d.Queue.Len(""); tt.want == Show && left != 0 {
				t.Errorf("the reader shows the result and %d notifications stay queued", left)
			}
		})
	}
}
