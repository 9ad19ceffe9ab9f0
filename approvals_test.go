package cadre_test

import (
	"context"
	"sync"
	"testing"

	"github.com/cadre-dev/cadre"
)

// waitPending waits until n requests are pending, on Changed (no sleeps).
func waitPending(t *testing.T, a *cadre.Approvals, n int) []cadre.Approval {
	t.Helper()
	for {
		ch := a.Changed()
		if p := a.Pending(); len(p) == n {
			return p
		}
		select {
		case <-ch:
		case <-t.Context().Done():
			t.Fatal("the test ended waiting")
		}
	}
}

func TestApprovalsQueueInOrderAndAnswer(t *testing.T) {
	a := cadre.NewApprovals()
	var wg sync.WaitGroup
	got := make([]cadre.PermissionDecision, 2)
	wg.Go(func() {
		d, err := a.Ask(context.Background(), cadre.PermissionRequest{Tool: "Bash", Agent: "main"})
		if err != nil {
			t.Error(err)
		}
		got[0] = d
	})
	waitPending(t, a, 1)
	wg.Go(func() {
		d, err := a.Ask(context.Background(), cadre.PermissionRequest{Tool: "Edit", Agent: "reviewer", Suggestions: []string{"Edit(//src/**)"}})
		if err != nil {
			t.Error(err)
		}
		got[1] = d
	})
	p := waitPending(t, a, 2)
	if p[0].Request.Tool != "Bash" || p[1].Request.Tool != "Edit" {
		t.Fatalf("pending %v, want Bash then Edit (the order they came)", p)
	}
	if !a.Answer(p[1].ID, cadre.PermissionDecision{Allow: true, Remember: p[1].Request.Suggestions}) {
		t.Fatal("answering a waiting request reported it gone")
	}
	if !a.Answer(p[0].ID, cadre.PermissionDecision{Message: "no"}) {
		t.Fatal("answering a waiting request reported it gone")
	}
	wg.Wait()
	if got[0].Allow || got[0].Message != "no" || !got[1].Allow || len(got[1].Remember) != 1 {
		t.Fatalf("decisions %+v: each caller must get its own answer", got)
	}
	if a.Answer(p[0].ID, cadre.PermissionDecision{Allow: true}) {
		t.Fatal("a request answered twice")
	}
	if n := len(a.Pending()); n != 0 {
		t.Fatalf("%d still pending after both were answered", n)
	}
}

// TestApprovalsCallerGivesUp: a request whose caller is cancelled (the
// turn interrupted, the subagent stopped) leaves the queue and is denied;
// it never hangs.
func TestApprovalsCallerGivesUp(t *testing.T) {
	a := cadre.NewApprovals()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan cadre.PermissionDecision)
	go func() {
		d, err := a.Ask(ctx, cadre.PermissionRequest{Tool: "Bash"})
		if err != nil {
			t.Error(err)
		}
		done <- d
	}()
	p := waitPending(t, a, 1)
	cancel()
	d := <-done
	if d.Allow || d.Message == "" {
		t.Fatalf("decision %+v, want a denial saying why", d)
	}
	waitPending(t, a, 0)
	if a.Answer(p[0].ID, cadre.PermissionDecision{Allow: true}) {
		t.Fatal("a request whose caller gave up could still be answered")
	}
}

func TestNextPermissionMode(t *testing.T) {
	for _, tc := range []struct{ current, start, want cadre.PermissionMode }{
		{"default", "default", "acceptEdits"},
		{"acceptEdits", "default", "plan"},
		{"plan", "default", "default"},
		{"plan", "bypassPermissions", "bypassPermissions"},
		{"bypassPermissions", "bypassPermissions", "default"},
		{"", "", "default"},
	} {
		if got := cadre.NextPermissionMode(tc.current, tc.start); got != tc.want {
			t.Errorf("NextPermissionMode(%q, start %q) = %q, want %q", tc.current, tc.start, got, tc.want)
		}
	}
}
