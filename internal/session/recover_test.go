package session_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cadre-dev/cadre/internal/session"
)

func TestRecover(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	alive := func(owner string) bool { return owner == "live" }
	cases := []struct {
		name   string
		status session.Status
		owner  string
		orphan bool // the child session of a task whose process ended
		want   session.Status
	}{
		{"running, owner gone", session.StatusRunning, "dead", false, session.StatusFailed},
		{"running, owner alive", session.StatusRunning, "live", false, session.StatusRunning},
		{"running, no owner recorded", session.StatusRunning, "", false, session.StatusRunning},
		{"orphaned child, no owner recorded", session.StatusRunning, "", true, session.StatusFailed},
		{"orphaned child, owner gone", session.StatusRunning, "dead", true, session.StatusFailed},
		{"orphaned child resumed by a live process", session.StatusRunning, "live", true, session.StatusRunning},
		{"ended, owner gone", session.StatusCompleted, "dead", false, session.StatusCompleted},
		{"ended orphaned child", session.StatusIdle, "", true, session.StatusIdle},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			idx := session.NewMem()
			in := session.Info{ID: "s1", Agent: "main", Status: c.status, Owner: c.owner, Created: now.Add(-time.Hour), Updated: now.Add(-time.Hour)}
			if err := idx.CreateSession(ctx, in); err != nil {
				t.Fatal(err)
			}
			var orphans []string
			if c.orphan {
				orphans = []string{"s1", "not-a-session"}
			}
			marked, err := session.Recover(ctx, idx, alive, orphans, now)
			if err != nil {
				t.Fatal(err)
			}
			got, err := idx.GetSession(ctx, "s1")
			if err != nil {
				t.Fatal(err)
			}
			if got.Status != c.want {
				t.Errorf("status %s, want %s", got.Status, c.want)
			}
			if changed := c.want != c.status; changed != slices.Equal(marked, []string{"s1"}) {
				t.Errorf("Recover returned %v; the session changed: %v", marked, changed)
			}
			if c.want == session.StatusFailed && !got.Updated.Equal(now) {
				t.Errorf("updated %v, want %v", got.Updated, now)
			}
		})
	}
}

// racingIndex plays what happens around Recover: with resume set, a live
// process takes every session over just before Recover's update of it
// reaches the store; the update of failID fails.
type racingIndex struct {
	*session.Mem
	resume bool
	failID string
}

func (r racingIndex) UpdateSession(ctx context.Context, id string, fn func(*session.Info) error) error {
	if id == r.failID {
		return errors.New("disk full")
	}
	if r.resume {
		if err := r.Mem.UpdateSession(ctx, id, func(in *session.Info) error { in.Owner = "live"; return nil }); err != nil {
			return err
		}
	}
	return r.Mem.UpdateSession(ctx, id, fn)
}

func TestRecoverLeavesASessionResumedMeanwhile(t *testing.T) {
	ctx := context.Background()
	idx := racingIndex{Mem: session.NewMem(), resume: true}
	now := time.Now()
	if err := idx.CreateSession(ctx, session.Info{ID: "s1", Status: session.StatusRunning, Owner: "dead", Created: now, Updated: now}); err != nil {
		t.Fatal(err)
	}
	marked, err := session.Recover(ctx, idx, func(o string) bool { return o == "live" }, []string{"s1"}, now)
	if err != nil || len(marked) != 0 {
		t.Fatalf("Recover = %v, %v; want nothing marked", marked, err)
	}
	if got, _ := idx.GetSession(ctx, "s1"); got.Status != session.StatusRunning || got.Owner != "live" {
		t.Errorf("resumed session is %s, owned by %q; want running, by the live process", got.Status, got.Owner)
	}
}

func TestRecoverGoesOnAfterAFailedUpdate(t *testing.T) {
	ctx := context.Background()
	idx := racingIndex{Mem: session.NewMem(), failID: "a"}
	now := time.Now()
	for _, id := range []string{"a", "b"} {
		if err := idx.CreateSession(ctx, session.Info{ID: id, Status: session.StatusRunning, Owner: "gone", Created: now, Updated: now}); err != nil {
			t.Fatal(err)
		}
	}
	asked := 0
	marked, err := session.Recover(ctx, idx, func(string) bool { asked++; return false }, nil, now)
	if err == nil || !strings.Contains(err.Error(), "recover session a: disk full") {
		t.Errorf("Recover error %v, want one naming session a and its cause", err)
	}
	if !slices.Equal(marked, []string{"b"}) {
		t.Errorf("marked %v, want [b]", marked)
	}
	if asked != 1 {
		t.Errorf("alive asked %d times for one owner, want once", asked)
	}
}
