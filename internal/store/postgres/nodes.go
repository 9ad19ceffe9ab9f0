package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// ErrNodeNotFound is wrapped by the errors about a node with no row.
var ErrNodeNotFound = errors.New("node not found")

// Node is the record of one process sharing the store (package cluster).
// Its times are the database's clock.
type Node struct {
	ID        string
	Host      string
	PID       int
	Started   time.Time
	Heartbeat time.Time // the last one
	// Left is when the process closed cleanly; zero while it runs, and
	// for ever if it crashed or was killed.
	Left time.Time
}

// RegisterNode records the process id as running on host with pid, its
// start and heartbeat now. Registering an id again (a node whose row was
// pruned while it was silent) starts its record afresh.
func (db *DB) RegisterNode(ctx context.Context, id, host string, pid int) error {
	_, err := db.exec(ctx, true, `INSERT INTO nodes (id, host, pid, started_at, heartbeat_at) VALUES ($1, $2, $3, now(), now())
		ON CONFLICT (id) DO UPDATE SET host = EXCLUDED.host, pid = EXCLUDED.pid, heartbeat_at = now(), left_at = NULL`, id, host, pid)
	if err != nil {
		return fmt.Errorf("register node %q: %w", id, err)
	}
	return nil
}

// HeartbeatNode stamps node id's heartbeat now. A node with no row, or one
// that has left, is an error wrapping ErrNodeNotFound: it must register.
func (db *DB) HeartbeatNode(ctx context.Context, id string) error {
	tag, err := db.exec(ctx, true, `UPDATE nodes SET heartbeat_at = now() WHERE id = $1 AND left_at IS NULL`, id)
	if err != nil {
		return fmt.Errorf("heartbeat of node %q: %w", id, err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("heartbeat of node %q: %w", id, ErrNodeNotFound)
	}
	return nil
}

// LeaveNode records that node id closed cleanly, now.
func (db *DB) LeaveNode(ctx context.Context, id string) error {
	tag, err := db.exec(ctx, true, `UPDATE nodes SET left_at = now(), heartbeat_at = now() WHERE id = $1`, id)
	if err != nil {
		return fmt.Errorf("record that node %q left: %w", id, err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("record that node %q left: %w", id, ErrNodeNotFound)
	}
	return nil
}

// Nodes returns the records of the nodes among ids that have one, by id,
// and the database's clock when it read them: how long a node has been
// silent is now minus its Heartbeat, both the database's times.
func (db *DB) Nodes(ctx context.Context, ids []string) (now time.Time, nodes map[string]Node, err error) {
	nodes = map[string]Node{}
	err = db.inTx(ctx, func(tx pgx.Tx) error {
		if err := tx.QueryRow(ctx, `SELECT now()`).Scan(&now); err != nil {
			return err
		}
		rows, err := tx.Query(ctx, `SELECT id, host, pid, started_at, heartbeat_at, left_at FROM nodes WHERE id = ANY($1)`, ids)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var (
				n    Node
				left *time.Time
			)
			if err := rows.Scan(&n.ID, &n.Host, &n.PID, &n.Started, &n.Heartbeat, &left); err != nil {
				return err
			}
			if left != nil {
				n.Left = *left
			}
			nodes[n.ID] = n
		}
		return rows.Err()
	})
	if err != nil {
		return time.Time{}, nil, fmt.Errorf("read node records: %w", err)
	}
	return now, nodes, nil
}

// PruneNodes deletes the records of nodes silent (or gone) for longer
// than age, and returns how many. A live node heartbeats, so its record
// is never that old.
func (db *DB) PruneNodes(ctx context.Context, age time.Duration) (int64, error) {
	tag, err := db.exec(ctx, true, `DELETE FROM nodes WHERE heartbeat_at < now() - make_interval(secs => $1)`, age.Seconds())
	if err != nil {
		return 0, fmt.Errorf("prune node records: %w", err)
	}
	return tag.RowsAffected(), nil
}
