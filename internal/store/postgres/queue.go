package postgres

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/cadre-dev/cadre/internal/queue"
	"github.com/cadre-dev/cadre/llm"
)

// Mailbox holds the messages queued for running agents in the database, so
// that any node can send to an agent and the node running it takes them
// (S-X2). It behaves as queue.Mailbox, the one-process version, does.
//
// An agent's inbox is a row of agent_inboxes, there while a run of it
// takes messages. Push reads that row FOR SHARE and inserts the message
// before committing; CloseIfEmpty reads it FOR UPDATE, so it waits for the
// pushes in flight and they for it, then takes the messages or deletes the
// row. A message is therefore either taken by the run or refused to its
// sender (who then resumes the agent), never stranded in an inbox nobody
// reads. Take is DELETE ... RETURNING: of any number of takers, on any
// nodes, exactly one gets each message.
type Mailbox struct{ db *DB }

// Mailbox returns the DB's mailbox.
func (db *DB) Mailbox() *Mailbox { return &Mailbox{db: db} }

// Shares reports whether store is the DB that keeps this mailbox's
// inboxes: then its CreateSessionTaskInbox opens an inbox here.
func (m *Mailbox) Shares(store any) bool {
	db, ok := store.(*DB)
	return ok && db == m.db
}

// Open opens agentID's inbox for a run of it, keeping any messages still
// there from an earlier run (they were accepted: they are read now), and
// reports, in the same round trip, whether any wait: a run whose inbox
// is new need not take before a push arrives. A push that commits after
// the statement's snapshot is not counted; its notification, which the
// run subscribed to first (mailbox.Open), tells of it.
func (m *Mailbox) Open(ctx context.Context, agentID, owner string) (bool, error) {
	var waiting bool
	err := m.db.queryRow(ctx, func(r pgx.Row) error { return r.Scan(&waiting) },
		`INSERT INTO agent_inboxes (agent_id, owner, opened_ms) VALUES ($1, $2, $3)
		ON CONFLICT (agent_id) DO UPDATE SET owner = EXCLUDED.owner, opened_ms = EXCLUDED.opened_ms
		RETURNING EXISTS (SELECT 1 FROM agent_messages WHERE agent_id = $1)`,
		agentID, owner, time.Now().UnixMilli())
	if err != nil {
		return false, fmt.Errorf("open the inbox of agent %q: %w", agentID, err)
	}
	return waiting, nil
}

// Push queues e for the agent e.Target and wakes whoever waits for it on
// any node. It reports false, queuing nothing, when that agent's inbox is
// not open: no run of it takes messages.
func (m *Mailbox) Push(ctx context.Context, e queue.Entry) (bool, error) {
	if e.Target == "" {
		return false, errors.New("push a message: it names no agent (Target is empty)")
	}
	msg, err := json.Marshal(e.Message)
	if err != nil {
		return false, fmt.Errorf("push a message for agent %q: %w", e.Target, err)
	}
	if e.Enqueued.IsZero() {
		e.Enqueued = time.Now()
	}
	open := false
	err = m.db.inTx(ctx, func(tx pgx.Tx) error {
		var id string
		err := tx.QueryRow(ctx, `SELECT agent_id FROM agent_inboxes WHERE agent_id = $1 FOR SHARE`, e.Target).Scan(&id)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil
		} else if err != nil {
			return err
		}
		open = true
		_, err = tx.Exec(ctx, `INSERT INTO agent_messages (agent_id, priority, mode, task_id, uuid, agent, message, enqueued_ms)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
			e.Target, int(e.Priority), string(e.Mode), e.TaskID, e.UUID, e.Agent, msg, e.Enqueued.UnixMilli())
		if err != nil {
			return err
		}
		// Delivered when the transaction commits, so a waiter woken by it
		// finds the message.
		_, err = tx.Exec(ctx, `SELECT pg_notify($1, $2)`, queueChannel, e.Target)
		return err
	})
	if err != nil {
		return false, fmt.Errorf("push a message for agent %q: %w", e.Target, err)
	}
	return open, nil
}

// Take removes and returns every message waiting for agentID, highest
// priority first, in the order they were pushed within a priority. Of
// concurrent takers each message goes to exactly one.
func (m *Mailbox) Take(ctx context.Context, agentID string) ([]queue.Entry, error) {
	var out []queue.Entry
	// Not idempotent (a DELETE whose answer was lost took messages):
	// retried only when nothing reached the server.
	err := m.db.retry(ctx, false, func(ctx context.Context, _ int) (err error) {
		out, err = take(ctx, m.db.pool, agentID)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("take the messages of agent %q: %w", agentID, err)
	}
	return out, nil
}

// CloseIfEmpty closes agentID's inbox when no message waits in it, so that
// later pushes are refused; otherwise it leaves the inbox open and returns
// the messages, which the run answers before it tries again.
func (m *Mailbox) CloseIfEmpty(ctx context.Context, agentID string) ([]queue.Entry, error) {
	var out []queue.Entry
	// One round trip (tx1), two statements. The lock waits for the
	// pushes in flight, which hold the row FOR SHARE, and keeps new ones
	// out; the statement after it reads with a snapshot of its own, taken
	// once the lock is held, which sees what those pushes committed. In
	// that one snapshot the inbox goes only if nothing waits in it, and
	// the take finds nothing then, else it takes what waits.
	err := m.db.tx1(ctx, func(b *pgx.Batch) {
		b.Queue(`SELECT 1 FROM agent_inboxes WHERE agent_id = $1 FOR UPDATE`, agentID)
		b.Queue(closeIfEmptySQL, agentID)
	}, func(br pgx.BatchResults) error {
		if _, err := br.Exec(); err != nil {
			return err
		}
		rows, err := br.Query()
		if err != nil {
			return err
		}
		out, err = scanTaken(rows, agentID)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("close the inbox of agent %q: %w", agentID, err)
	}
	return out, nil
}

// Arrived returns a channel that receives soon after a message for
// agentID is pushed, on any node, and after the DB's listening connection
// was re-established (a push may have been missed): the receiver then
// takes what waits. stop ends it (so does ctx ending).
func (m *Mailbox) Arrived(ctx context.Context, agentID string) (<-chan struct{}, func()) {
	return m.db.listen.subscribe(ctx, queueChannel, agentID)
}

// querier is what take needs: the pool or a transaction.
type querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// takeSQL deletes and returns an agent's messages.
const takeSQL = `DELETE FROM agent_messages WHERE agent_id = $1
		RETURNING seq, priority, mode, task_id, uuid, agent, message, enqueued_ms`

// closeIfEmptySQL deletes an agent's inbox when no message waits in it,
// and takes (takeSQL) what waits, in one statement: both parts read the
// same snapshot, so exactly one of them finds something to do.
const closeIfEmptySQL = `WITH closed AS (DELETE FROM agent_inboxes WHERE agent_id = $1
		AND NOT EXISTS (SELECT 1 FROM agent_messages WHERE agent_id = $1))
	` + takeSQL

// take deletes and returns agentID's messages in queue order.
func take(ctx context.Context, q querier, agentID string) ([]queue.Entry, error) {
	rows, err := q.Query(ctx, takeSQL, agentID)
	if err != nil {
		return nil, err
	}
	return scanTaken(rows, agentID)
}

// scanTaken reads takeSQL's rows (and closes them) into entries in queue
// order.
func scanTaken(rows pgx.Rows, agentID string) ([]queue.Entry, error) {
	defer rows.Close()
	type row struct {
		seq int64
		e   queue.Entry
	}
	var got []row
	for rows.Next() {
		var (
			r        row
			priority int
			mode     string
			msg      []byte
			enqueued int64
		)
		if err := rows.Scan(&r.seq, &priority, &mode, &r.e.TaskID, &r.e.UUID, &r.e.Agent, &msg, &enqueued); err != nil {
			rows.Close()
			return nil, err
		}
		var m llm.Message
		if err := json.Unmarshal(msg, &m); err != nil {
			rows.Close()
			return nil, fmt.Errorf("message %d: %w", r.seq, err)
		}
		r.e.Target, r.e.Priority, r.e.Mode, r.e.Message = agentID, queue.Priority(priority), queue.Mode(mode), m
		r.e.Enqueued = time.UnixMilli(enqueued)
		got = append(got, r)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	// RETURNING promises no order.
	slices.SortFunc(got, func(a, b row) int {
		return cmp.Or(cmp.Compare(a.e.Priority, b.e.Priority), cmp.Compare(a.seq, b.seq))
	})
	out := make([]queue.Entry, len(got))
	for i, r := range got {
		out[i] = r.e
	}
	return out, nil
}
