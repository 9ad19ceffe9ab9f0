package tasktest

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cadre-dev/cadre/internal/task"
)

var allStatuses = []task.Status{
	task.StatusPending, task.StatusRunning,
	task.StatusCompleted, task.StatusFailed, task.StatusKilled, task.StatusTimeout,
}

// testLifecycle applies every event of the table to a task in every
// status: the store moves it where the table says, or refuses it with an
// error naming the task, the event and the status, and stores nothing.
func testLifecycle(t *testing.T, s task.Store) {
	n := 0
	for _, tr := range task.Lifecycle() {
		for _, from := range allStatuses {
			n++
			id := fmt.Sprintf("lc-%02d", n)
			t.Run(fmt.Sprintf("%s %s", tr.Event, from), func(t *testing.T) {
				tk := Sample(id)
				tk.Status = from
				mustCreate(t, s, tk)
				got, err := s.Transition(t.Context(), id, func(rec *task.Task) (task.Event, error) {
					rec.Result = "carried by the event"
					return tr.Event, nil
				})
				if slices.Contains(tr.From, from) {
					if err != nil {
						t.Fatalf("%s a %s task: %v, want it to become %s", tr.Event, from, err, tr.To)
					}
					want := tk
					want.Status, want.Result = tr.To, "carried by the event"
					if diff := cmp.Diff(want, got, timeEqual); diff != "" {
						t.Errorf("%s a %s task returned (-want +got):\n%s", tr.Event, from, diff)
					}
					if diff := cmp.Diff(want, mustGet(t, s, id), timeEqual); diff != "" {
						t.Errorf("%s a %s task stored (-want +got):\n%s", tr.Event, from, diff)
					}
					return
				}
				wantMsg := fmt.Sprintf("task %s: cannot %s a", id, tr.Event)
				if !errors.Is(err, task.ErrTransition) || !strings.Contains(err.Error(), wantMsg) || !strings.HasSuffix(err.Error(), string(from)+" task") {
					t.Fatalf("%s a %s task: err = %v, want one wrapping ErrTransition: %q… %s task", tr.Event, from, err, wantMsg, from)
				}
				if diff := cmp.Diff(tk, mustGet(t, s, id), timeEqual); diff != "" {
					t.Errorf("a refused %s was stored (-want +got):\n%s", tr.Event, diff)
				}
			})
		}
	}
}

// testUpdateKeepsStatus: UpdateTask changes fields, never the status; one
// that tries is refused and stores nothing (the example: a finished run
// set running again without the resume that rewrites its record).
func testUpdateKeepsStatus(t *testing.T, s task.Store) {
	for _, c := range []struct{ from, to task.Status }{
		{task.StatusCompleted, task.StatusRunning},
		{task.StatusRunning, task.StatusCompleted},
		{task.StatusPending, task.StatusRunning},
		{task.StatusKilled, task.StatusFailed},
	} {
		t.Run(fmt.Sprintf("%s to %s", c.from, c.to), func(t *testing.T) {
			id := "u-" + string(c.from)
			tk := Sample(id)
			tk.Status = c.from
			mustCreate(t, s, tk)
			_, err := s.UpdateTask(t.Context(), id, func(rec *task.Task) error {
				rec.Status, rec.Result = c.to, "should not be stored"
				return nil
			})
			if !errors.Is(err, task.ErrTransition) || !strings.Contains(err.Error(), id) {
				t.Fatalf("UpdateTask from %s to %s: err = %v, want one wrapping ErrTransition naming %s", c.from, c.to, err, id)
			}
			if diff := cmp.Diff(tk, mustGet(t, s, id), timeEqual); diff != "" {
				t.Errorf("a refused status change was stored (-want +got):\n%s", diff)
			}
		})
	}
}

// testTransitionFn: fn sees the record as stored, its error aborts the
// event, and it may not set the status itself.
func testTransitionFn(t *testing.T, s task.Store) {
	mustCreate(t, s, Sample("t1"))
	boom := errors.New("boom")
	_, err := s.Transition(t.Context(), "t1", func(rec *task.Task) (task.Event, error) {
		if rec.Status != task.StatusRunning {
			t.Errorf("fn saw status %s, want the stored running", rec.Status)
		}
		rec.Result = "should not be stored"
		return task.EventComplete, boom
	})
	if !errors.Is(err, boom) {
		t.Errorf("Transition whose fn failed: err = %v, want one wrapping fn's error", err)
	}
	_, err = s.Transition(t.Context(), "t1", func(rec *task.Task) (task.Event, error) {
		rec.Status = task.StatusCompleted
		return task.EventStop, nil
	})
	if !errors.Is(err, task.ErrTransition) {
		t.Errorf("Transition whose fn set the status: err = %v, want one wrapping ErrTransition", err)
	}
	_, err = s.Transition(t.Context(), "t1", func(*task.Task) (task.Event, error) { return "explode", nil })
	if err == nil || !strings.Contains(err.Error(), `unknown event "explode"`) {
		t.Errorf("Transition with an unknown event: err = %v, want one naming it", err)
	}
	if diff := cmp.Diff(Sample("t1"), mustGet(t, s, "t1"), timeEqual); diff != "" {
		t.Errorf("refused transitions were stored (-want +got):\n%s", diff)
	}
	// No event: the fields are stored, the status stays.
	got, err := s.Transition(t.Context(), "t1", func(rec *task.Task) (task.Event, error) {
		rec.CancelRequested = false
		return "", nil
	})
	if err != nil || got.Status != task.StatusRunning || got.CancelRequested {
		t.Errorf("Transition naming no event = %s, cancel requested %v, %v; want running, false, nil", got.Status, got.CancelRequested, err)
	}
	_, err = s.Transition(t.Context(), "t1", func(rec *task.Task) (task.Event, error) {
		rec.Status = task.StatusKilled
		return "", nil
	})
	if !errors.Is(err, task.ErrTransition) {
		t.Errorf("Transition naming no event whose fn set the status: err = %v, want ErrTransition", err)
	}
	if _, err := s.Transition(t.Context(), "nope", func(*task.Task) (task.Event, error) { return task.EventStop, nil }); !errors.Is(err, task.ErrNotFound) {
		t.Errorf("Transition of a missing task: err = %v, want ErrNotFound", err)
	}
}

// RaceEnds races two ends on each of 30 running tasks (created through
// stores[0]), the second through the last of stores: a run completing
// while a stop or a sweep fails it. Exactly one wins; the other is refused
// with an error wrapping ErrTransition, and the record holds the winner's
// status and result. Pass several handles of one database to race them as
// separate processes would.
func RaceEnds(t *testing.T, stores ...task.Store) {
	t.Helper()
	const tasks = 30
	rivals := []task.Event{task.EventStop, task.EventOrphan, task.EventTimeOut, task.EventFail}
	for i := range tasks {
		id := fmt.Sprintf("ends-%02d", i)
		mustCreate(t, stores[0], Sample(id))
		events := []task.Event{task.EventComplete, rivals[i%len(rivals)]}
		var (
			wg    sync.WaitGroup
			start = make(chan struct{})
			errs  = make([]error, len(events))
		)
		for j, ev := range events {
			s := stores[j*(len(stores)-1)]
			wg.Go(func() {
				<-start
				_, errs[j] = s.Transition(t.Context(), id, func(rec *task.Task) (task.Event, error) {
					rec.Result = "by " + string(ev)
					return ev, nil
				})
			})
		}
		close(start)
		wg.Wait()
		winner := -1
		for j, err := range errs {
			switch {
			case err == nil && winner >= 0:
				t.Fatalf("%s: both %s and %s ended the run", id, events[winner], events[j])
			case err == nil:
				winner = j
			case !errors.Is(err, task.ErrTransition):
				t.Fatalf("%s: %s: %v, want it to win or be refused (ErrTransition)", id, events[j], err)
			}
		}
		if winner < 0 {
			t.Fatalf("%s: neither %v ended the run: %v", id, events, errs)
		}
		got := mustGet(t, stores[0], id)
		row, _ := lifecycleRow(events[winner])
		if got.Status != row.To || got.Result != "by "+string(events[winner]) {
			t.Fatalf("%s: %s won, but the record says %s, %q", id, events[winner], got.Status, got.Result)
		}
	}
}

func lifecycleRow(ev task.Event) (task.Transition, bool) {
	for _, tr := range task.Lifecycle() {
		if tr.Event == ev {
			return tr, true
		}
	}
	return task.Transition{}, false
}
