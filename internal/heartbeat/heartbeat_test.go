package heartbeat

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"go.uber.org/goleak"

	"github.com/cadre-dev/cadre/internal/task"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// record is one task record, counting the updates that reach it.
type record struct {
	mu      sync.Mutex
	rec     task.Task
	updates int
}

func (r *record) GetTask(context.Context, string) (task.Task, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.rec, nil
}

func (r *record) UpdateTask(_ context.Context, _ string, fn func(*task.Task) error) (task.Task, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.updates++
	err := fn(&r.rec)
	return r.rec, err
}

func (r *record) read() (task.Task, int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.rec, r.updates
}

func (r *record) askStop() {
	r.mu.Lock()
	r.rec.CancelRequested = true
	r.mu.Unlock()
}

// TestBeat: each tick refreshes the heartbeat and writes a dispatched
// run's figures only when they changed; a stop asked for on the record
// stops the run at the next tick; a run that ended stops its heartbeat.
func TestBeat(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &record{rec: task.Task{ID: "t1", Status: task.StatusRunning}}
		b := Beater{Tasks: rec, Interval: time.Second, Now: time.Now, Log: slog.New(slog.DiscardHandler)}
		var mu sync.Mutex
		figures := Figures{ToolUses: 1, Text: "reading"}
		stopped := make(chan struct{})
		done := make(chan struct{})
		go func() {
			defer close(done)
			b.Beat(t.Context(), Run{ID: "t1", Done: make(chan struct{}), Stop: func() { close(stopped) }, Figures: func() Figures {
				mu.Lock()
				defer mu.Unlock()
				return figures
			}})
		}()
		time.Sleep(time.Second) // the bubble's clock: one tick
		synctest.Wait()
		got, n := rec.read()
		if n != 1 || !got.Heartbeat.Equal(time.Now()) || got.ToolUses != 1 || got.Result != "reading" {
			t.Fatalf("after a tick: %d updates, heartbeat %v, figures %d %q", n, got.Heartbeat, got.ToolUses, got.Result)
		}
		rec.mu.Lock()
		rec.rec.Result = "(someone else's)"
		rec.mu.Unlock()
		time.Sleep(time.Second)
		synctest.Wait()
		if got, _ := rec.read(); got.Result != "(someone else's)" {
			t.Errorf("unchanged figures were written again: %q", got.Result)
		}
		rec.askStop()
		time.Sleep(time.Second)
		synctest.Wait()
		select {
		case <-stopped:
		default:
			t.Fatal("a stop asked for on the record did not stop the run")
		}
		<-done
	})
}

// watch is a Watcher the test fires by hand.
type watch struct{ changed chan struct{} }

func (w watch) WatchTask(context.Context, string) (<-chan struct{}, func()) {
	return w.changed, func() {}
}

// stopWatch is a StopWatcher: the heartbeat must use its stop channel,
// never subscribe to every change.
type stopWatch struct {
	t     *testing.T
	asked chan struct{}
}

func (w stopWatch) WatchTask(context.Context, string) (<-chan struct{}, func()) {
	w.t.Error("the heartbeat watched every change of a StopWatcher's records")
	return nil, func() {}
}

func (w stopWatch) WatchStop(context.Context, string) (<-chan struct{}, func()) {
	return w.asked, func() {}
}

// TestBeatWatchesOnlyStops: with a StopWatcher the heartbeat wakes for a
// stop asked for, and reads the record only then.
func TestBeatWatchesOnlyStops(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &record{rec: task.Task{ID: "t1", Status: task.StatusRunning}}
		w := stopWatch{t, make(chan struct{})}
		b := Beater{Tasks: rec, Watch: w, Interval: time.Hour, Now: time.Now, Log: slog.New(slog.DiscardHandler)}
		stopped := make(chan struct{})
		go b.Beat(t.Context(), Run{ID: "t1", Done: make(chan struct{}), Stop: func() { close(stopped) }})
		rec.askStop()
		w.asked <- struct{}{}
		synctest.Wait()
		select {
		case <-stopped:
		default:
			t.Fatal("a stop heard through WatchStop did not stop the run")
		}
	})
}

// TestBeatHearsAStopAtOnce (S-X2): with a watcher, a stop asked for on the
// record stops the run without waiting for a tick; the run's end ends the
// heartbeat.
func TestBeatHearsAStopAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &record{rec: task.Task{ID: "t1", Status: task.StatusRunning}}
		w := watch{make(chan struct{})}
		b := Beater{Tasks: rec, Watch: w, Interval: time.Hour, Now: time.Now, Log: slog.New(slog.DiscardHandler)}
		stopped := make(chan struct{})
		go b.Beat(t.Context(), Run{ID: "t1", Done: make(chan struct{}), Stop: func() { close(stopped) }})
		w.changed <- struct{}{} // a change that is not a stop
		synctest.Wait()         // read before the stop is asked
		rec.askStop()
		w.changed <- struct{}{}
		synctest.Wait()
		select {
		case <-stopped:
		default:
			t.Fatal("a stop heard through the watch did not stop the run")
		}
		if _, n := rec.read(); n != 0 {
			t.Errorf("%d heartbeat writes before the first tick", n)
		}

		ended := make(chan struct{})
		finished := make(chan struct{})
		go func() {
			defer close(finished)
			b.Beat(t.Context(), Run{ID: "t1", Done: ended, Stop: func() { t.Error("an ended run was stopped") }})
		}()
		close(ended)
		<-finished
	})
}
