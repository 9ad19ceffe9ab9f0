package tasklisttest

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cadre-dev/cadre/internal/tasklist"
)

// Work is issue 26's scale figure at the store's level: workers
// teammates (spread over the handles, as over nodes) work through tasks
// dependent tasks — task i is blocked by task i-workers, so the work goes
// in waves as wide as the team — each looping: read the list, claim the
// lowest free task, complete it. It returns how many list reads and
// updates that took; it fails t if a task is done twice or left undone.
func Work(tb testing.TB, handles []tasklist.Store, list string, workers, tasks int) (reads, updates int64) {
	tb.Helper()
	ctx := context.Background()
	now := time.Now()
	_, err := handles[0].UpdateList(ctx, list, func(l *tasklist.List) error {
		for i := 1; i <= tasks; i++ {
			if _, err := tasklist.Create(l, tasklist.CreateInput{Subject: fmt.Sprintf("task %d", i)}, "main", now); err != nil {
				return err
			}
			if i > workers {
				if _, err := tasklist.Update(l, tasklist.UpdateInput{ID: fmt.Sprint(i), AddBlockedBy: []string{fmt.Sprint(i - workers)}}, "main", now); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	var (
		nReads, nUpdates atomic.Int64
		mu               sync.Mutex
		doneBy           = map[string]string{}
		wg               sync.WaitGroup
		errs             = make(chan error, workers)
	)
	for w := range workers {
		st := handles[w%len(handles)]
		me := fmt.Sprintf("mate-%d", w)
		wg.Go(func() {
			for {
				l, err := st.GetList(ctx, list)
				nReads.Add(1)
				if err != nil {
					errs <- err
					return
				}
				free, open := "", 0
				for _, it := range l.Items {
					if it.Status != tasklist.Completed {
						open++
					}
					if free == "" && it.Status == tasklist.Pending && it.Owner == "" && len(l.Blockers(it)) == 0 {
						free = it.ID
					}
				}
				if open == 0 {
					return
				}
				if free == "" {
					// Everything left is taken or blocked: a teammate
					// would go idle until woken; here, look again.
					time.Sleep(time.Millisecond)
					continue
				}
				_, err = st.UpdateList(ctx, list, func(l *tasklist.List) error {
					_, err := tasklist.Update(l, tasklist.UpdateInput{ID: free, Owner: &me, Status: ptrStatus(tasklist.InProgress)}, me, time.Now())
					return err
				})
				nUpdates.Add(1)
				if err != nil {
					if strings.Contains(err.Error(), "already owned") || strings.Contains(err.Error(), "only a pending task") {
						continue // another teammate was quicker
					}
					errs <- err
					return
				}
				_, err = st.UpdateList(ctx, list, func(l *tasklist.List) error {
					_, err := tasklist.Update(l, tasklist.UpdateInput{ID: free, Status: ptrStatus(tasklist.Completed)}, me, time.Now())
					return err
				})
				nUpdates.Add(1)
				if err != nil {
					errs <- err
					return
				}
				mu.Lock()
				if prev, dup := doneBy[free]; dup {
					mu.Unlock()
					errs <- fmt.Errorf("task #%s done twice, by %s and %s", free, prev, me)
					return
				}
				doneBy[free] = me
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		tb.Fatal(err)
	}
	l, err := handles[0].GetList(ctx, list)
	if err != nil {
		tb.Fatal(err)
	}
	for _, it := range l.Items {
		if it.Status != tasklist.Completed || doneBy[it.ID] != it.Owner {
			tb.Fatalf("task #%s: %s, owner %q, done by %q", it.ID, it.Status, it.Owner, doneBy[it.ID])
		}
	}
	if len(doneBy) != tasks {
		tb.Fatalf("%d tasks done, want %d", len(doneBy), tasks)
	}
	return nReads.Load(), nUpdates.Load()
}

func ptrStatus(s tasklist.Status) *tasklist.Status { return &s }

// Bench runs Work once per iteration, on a fresh list each time, and
// reports the reads and updates per run.
func Bench(b *testing.B, handles []tasklist.Store) {
	var reads, updates int64
	n := 0
	for b.Loop() {
		r, u := Work(b, handles, fmt.Sprintf("bench-%d", n), 8, 200)
		reads, updates = reads+r, updates+u
		n++
	}
	b.ReportMetric(float64(reads)/float64(n), "list-reads/op")
	b.ReportMetric(float64(updates)/float64(n), "list-updates/op")
}
