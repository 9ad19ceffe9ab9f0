package postgres

import (
	"errors"
	"testing"
	"time"
)

// TestNodeRecords: a node's record from registration to leaving, by the
// database's clock: the heartbeat advances, a node that left (or has no
// row) cannot heartbeat, and only old records are pruned.
func TestNodeRecords(t *testing.T) {
	db := open(t, pg.URL(t))
	ctx := t.Context()
	if err := db.RegisterNode(ctx, "n1", "host-a", 41); err != nil {
		t.Fatal(err)
	}
	if err := db.RegisterNode(ctx, "n2", "host-b", 42); err != nil {
		t.Fatal(err)
	}
	_, first, err := db.Nodes(ctx, []string{"n1", "n2", "none"})
	if err != nil {
		t.Fatal(err)
	}
	if len(first) != 2 || first["n1"].Host != "host-a" || first["n1"].PID != 41 || !first["n1"].Left.IsZero() {
		t.Fatalf("nodes %+v", first)
	}
	// now() is the transaction's start: a heartbeat in a later
	// transaction is later, whatever the machine's speed.
	if err := db.HeartbeatNode(ctx, "n1"); err != nil {
		t.Fatal(err)
	}
	now, second, err := db.Nodes(ctx, []string{"n1"})
	if err != nil {
		t.Fatal(err)
	}
	if !second["n1"].Heartbeat.After(first["n1"].Heartbeat) || !second["n1"].Started.Equal(first["n1"].Started) {
		t.Errorf("heartbeat %v → %v, started %v → %v", first["n1"].Heartbeat, second["n1"].Heartbeat, first["n1"].Started, second["n1"].Started)
	}
	if now.Before(second["n1"].Heartbeat) {
		t.Errorf("the clock read %v is before the heartbeat %v", now, second["n1"].Heartbeat)
	}

	if err := db.LeaveNode(ctx, "n1"); err != nil {
		t.Fatal(err)
	}
	if err := db.HeartbeatNode(ctx, "n1"); !errors.Is(err, ErrNodeNotFound) {
		t.Errorf("heartbeat after leaving: err = %v, want ErrNodeNotFound", err)
	}
	if err := db.HeartbeatNode(ctx, "ghost"); !errors.Is(err, ErrNodeNotFound) {
		t.Errorf("heartbeat of no node: err = %v, want ErrNodeNotFound", err)
	}
	if err := db.LeaveNode(ctx, "ghost"); !errors.Is(err, ErrNodeNotFound) {
		t.Errorf("leave of no node: err = %v, want ErrNodeNotFound", err)
	}
	if _, got, _ := db.Nodes(ctx, []string{"n1"}); got["n1"].Left.IsZero() {
		t.Error("the node that left has no left time")
	}

	// n2 went silent two hours ago; n1 left just now.
	if _, err := db.pool.Exec(ctx, `UPDATE nodes SET heartbeat_at = now() - interval '2 hours' WHERE id = 'n2'`); err != nil {
		t.Fatal(err)
	}
	n, err := db.PruneNodes(ctx, time.Hour)
	if err != nil || n != 1 {
		t.Fatalf("PruneNodes = %d, %v; want the one old record", n, err)
	}
	if _, got, _ := db.Nodes(ctx, []string{"n1", "n2"}); len(got) != 1 || got["n1"].ID != "n1" {
		t.Errorf("after pruning: %+v", got)
	}
	// A pruned node that comes back registers afresh.
	if err := db.RegisterNode(ctx, "n2", "host-b", 42); err != nil {
		t.Fatal(err)
	}
	if err := db.HeartbeatNode(ctx, "n2"); err != nil {
		t.Error(err)
	}
}
