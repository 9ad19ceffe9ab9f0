package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/cadre-dev/cadre/internal/session"
	"github.com/cadre-dev/cadre/internal/store/tablerow"
	"github.com/cadre-dev/cadre/internal/task"
)

// A background child's lifecycle touches two records, its session's and its
// task's, at its start and at its end; these write each pair in one
// transaction, so no reader on any node and no crash ever sees one half
// without the other (as the SQLite store's joint writes).

// CreateSessionTask records a new session and a new task in one
// transaction: both or neither. Either id already present is an error.
func (db *DB) CreateSessionTask(ctx context.Context, s session.Info, t task.Task) error {
	return db.createSessionTask(ctx, s, t, nil)
}

// CreateSessionTaskInbox is CreateSessionTask that also opens the inbox
// (Mailbox.Open) of the task's agent, t.ID, for a run executed by owner,
// in the same statement: a new background child's three rows in one round
// trip. Whoever finds the task's record finds its inbox open.
func (db *DB) CreateSessionTaskInbox(ctx context.Context, s session.Info, t task.Task, owner string) error {
	return db.createSessionTask(ctx, s, t, &owner)
}

// createSessionTask is CreateSessionTask, opening t's inbox for *owner
// when owner is not nil.
func (db *DB) createSessionTask(ctx context.Context, s session.Info, t task.Task, owner *string) error {
	if s.ID == "" {
		return fmt.Errorf("create session and task: the session id is empty")
	}
	if err := task.Validate(t); err != nil {
		return fmt.Errorf("create session %q and task: %w", s.ID, err)
	}
	// One statement, so one round trip and its own transaction: the
	// session's insert rides in a WITH. An id already present fails the
	// statement (a unique violation), and nothing of it is kept. Its
	// outcome is unknown when the answer is lost, so it is retried only
	// when it never reached the server.
	sv, tv := tablerow.SessionValues(s), tablerow.TaskValues(t)
	args := make([]any, 0, 5+len(sv)+len(tv))
	args = append(append(append(append(args, s.ID), sv...), t.ID), tv...)
	query := createSessionTaskSQL
	if owner != nil {
		query, args = createSessionTaskInboxSQL, append(args, *owner, time.Now().UnixMilli())
	}
	var sx, tx uint32
	err := db.retry(ctx, false, func(ctx context.Context, _ int) error {
		return db.pool.QueryRow(ctx, query, args...).Scan(&sx, &tx)
	})
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "23505" {
		what := "task"
		if pgErr.TableName == "sessions" {
			what = "session"
		}
		err = fmt.Errorf("%s: a %s with this id already exists", what, what)
	}
	if err != nil {
		return fmt.Errorf("create session %q and task %q: %w", s.ID, t.ID, err)
	}
	db.sessions.put(s.ID, tablerow.NormalizeSession(s), sx)
	db.tasks.put(t.ID, storedTask(t), tx)
	db.writers.recorded(s.ID)
	return nil
}

// createSessionTaskSQL inserts a session's row ($1 on, SessionColumns) and
// a task's (the rest, TaskColumns) in one statement;
// createSessionTaskInboxSQL also opens the task's inbox, as Mailbox.Open
// does, with the two parameters after those (the owner, the time). Both
// return the two rows' versions, the session's first.
var createSessionTaskSQL, createSessionTaskInboxSQL = func() (string, string) {
	nSession, nTask := len(tablerow.SessionColumnNames), len(tablerow.TaskColumnNames)
	params := func(from, n int) string {
		ps := make([]string, n)
		for i := range ps {
			ps[i] = fmt.Sprintf("$%d", from+i)
		}
		return strings.Join(ps, ", ")
	}
	session := `s AS (INSERT INTO sessions (` + tablerow.SessionColumns + `) VALUES (` + params(1, nSession) + `) RETURNING xmin)`
	taskID, owner := 1+nSession, 1+nSession+nTask
	inbox := fmt.Sprintf(`i AS (INSERT INTO agent_inboxes (agent_id, owner, opened_ms) VALUES ($%d, $%d, $%d)
		ON CONFLICT (agent_id) DO UPDATE SET owner = EXCLUDED.owner, opened_ms = EXCLUDED.opened_ms)`, taskID, owner, owner+1)
	insertTask := `INSERT INTO tasks (` + tablerow.TaskColumns + `) VALUES (` + params(taskID, nTask) + `)
		RETURNING (SELECT xmin FROM s), xmin`
	return `WITH ` + session + ` ` + insertTask, `WITH ` + session + `, ` + inbox + ` ` + insertTask
}()

// UpdateSessionTask is UpdateSession of sessionID and UpdateTask of taskID
// in one transaction: both updates are stored, or neither (an error from
// either fn stores nothing). It returns the task as stored.
func (db *DB) UpdateSessionTask(ctx context.Context, sessionID string, sfn func(*session.Info) error, taskID string, tfn func(*task.Task) error) (task.Task, error) {
	return db.updateSessionTask(ctx, sessionID, sfn, taskID, task.Fields(tfn))
}

// TransitionSessionTask is UpdateSession of sessionID and Transition of
// taskID in one transaction: both updates are stored, or neither (an error
// from either fn, or an event the task's status refuses, stores nothing).
// It returns the task as stored. The session's row is always locked before
// the task's, so two of these never deadlock.
func (db *DB) TransitionSessionTask(ctx context.Context, sessionID string, sfn func(*session.Info) error, taskID string, tfn func(*task.Task) (task.Event, error)) (task.Task, error) {
	return db.updateSessionTask(ctx, sessionID, sfn, taskID, task.Step(tfn))
}

func (db *DB) updateSessionTask(ctx context.Context, sessionID string, sfn func(*session.Info) error, taskID string, tfn func(*task.Task) error) (task.Task, error) {
	// The release of the session's transcript claim that its writer's
	// Close left to this write (transcripts.go) is made in it.
	release := db.writers.ended(sessionID)
	t, err := db.updateSessionTaskReleasing(ctx, sessionID, sfn, taskID, tfn, release)
	if err != nil && release != "" {
		err = errors.Join(err, db.release(context.WithoutCancel(ctx), []string{sessionID}, []string{release}))
	}
	return t, err
}

// updateSessionTaskReleasing is updateSessionTask, also releasing the
// claim of token release on the session's transcript when it is not "".
func (db *DB) updateSessionTaskReleasing(ctx context.Context, sessionID string, sfn func(*session.Info) error, taskID string, tfn func(*task.Task) error, release string) (task.Task, error) {
	if t, done, err := db.updateKnownSessionTask(ctx, sessionID, sfn, taskID, tfn, release); done {
		if err != nil {
			return task.Task{}, fmt.Errorf("update session %q and task %q: %w", sessionID, taskID, err)
		}
		return t, nil
	}
	su, tu := &sessionUpdater{id: sessionID, fn: sfn}, &taskUpdater{id: taskID, fn: tfn}
	err := db.rmw(ctx, func(b *pgx.Batch) {
		su.read(b) // the session's row first, always: no deadlock between two of these
		tu.read(b)
	}, func(br pgx.BatchResults) error {
		if err := su.scan(br); err != nil {
			return fmt.Errorf("session: %w", err)
		}
		if err := tu.scan(br); err != nil {
			return fmt.Errorf("task: %w", err)
		}
		return nil
	}, func(b *pgx.Batch) error {
		if err := su.write(b); err != nil {
			return fmt.Errorf("session: %w", err)
		}
		if err := tu.write(b); err != nil {
			return fmt.Errorf("task: %w", err)
		}
		if release != "" {
			b.Queue(releaseClaims, []string{sessionID}, []string{release})
		}
		return nil
	})
	if err != nil {
		db.sessions.forget(sessionID)
		db.tasks.forget(taskID)
		return task.Task{}, fmt.Errorf("update session %q and task %q: %w", sessionID, taskID, err)
	}
	db.sessions.put(sessionID, tablerow.NormalizeSession(su.s), su.xmin)
	db.tasks.put(taskID, storedTask(tu.t), tu.xmin)
	return tu.t, nil
}

// updateKnownSessionTask is updateKnownTask for a session and a task
// together: one statement (sessionTaskUpdateKnownSQL) writes both rows
// if both are still the versions remembered, and neither otherwise.
func (db *DB) updateKnownSessionTask(ctx context.Context, sessionID string, sfn func(*session.Info) error, taskID string, tfn func(*task.Task) error, release string) (task.Task, bool, error) {
	s, sx, sok := db.sessions.get(sessionID)
	t, tx, tok := db.tasks.get(taskID)
	if !sok || !tok {
		return task.Task{}, false, nil
	}
	db.sessions.forget(sessionID)
	db.tasks.forget(taskID)
	sBefore, tBefore := tablerow.SessionValues(s), tablerow.TaskValues(t)
	if checkSession(sessionID, &s, sfn) != nil || checkTask(taskID, &t, tfn) != nil {
		return task.Task{}, false, nil
	}
	query, args := sessionTaskUpdateKnownSQL(sessionID, sx, sBefore, tablerow.SessionValues(s), taskID, tx, tBefore, tablerow.TaskValues(t), release)
	var sNext, tNext uint32
	if stale, err := db.writeKnown(ctx, query, args, &sNext, &tNext); stale || err != nil {
		return task.Task{}, !stale, err
	}
	t = tablerow.NormalizeTask(t)
	db.sessions.put(sessionID, tablerow.NormalizeSession(s), sNext)
	db.tasks.put(taskID, storedTask(t), tNext)
	return t, true, nil
}

// sessionTaskUpdateKnownSQL updates a session (id sid, remembered as
// the version sx; its values before and after) and a task (the same) in
// one statement, and returns their new versions. Its three parts run in
// this order: the session's UPDATE, the task's — whose one-time condition
// reads what the session's returned, so the session's row is locked
// first, as in a read-modify-write, and the task's is not touched when the
// session's did not match — and the SELECT, which divides by the number of
// task rows written: when either row was not the version given, that is
// 0, and the division's error (staleCode) aborts the statement, so the
// session's write is not kept either. (A plain error, not a function that
// raises one: a function would need a migration; the division is
// evaluated when the statement runs, not folded when it is planned, as it
// reads a CTE.)
//
// When release is not "", the statement also releases the claim of that
// token on the session's transcript (releaseClaims): in the same
// transaction, kept or undone with the two rows.
func sessionTaskUpdateKnownSQL(sid string, sx uint32, sBefore, sAfter []any, tid string, tx uint32, tBefore, tAfter []any, release string) (string, params) {
	var p params
	var b strings.Builder
	b.WriteString(`WITH `)
	id := p.add(sid)
	if release != "" {
		b.WriteString(`r AS (UPDATE transcripts SET ` + unclaimed +
			` WHERE session_id = ` + id + ` AND writer_token = ` + p.add(release) + `), `)
	}
	b.WriteString(`s AS (UPDATE sessions SET ` + p.set(tablerow.SessionColumnNames, sBefore, sAfter) +
		` WHERE id = ` + id + ` AND xmin = ` + p.add(sx) + ` RETURNING xmin), `)
	b.WriteString(`t AS (UPDATE tasks SET ` + p.set(tablerow.TaskColumnNames, tBefore, tAfter) +
		` WHERE id = ` + p.add(tid) + ` AND xmin = ` + p.add(tx) + ` AND EXISTS (SELECT FROM s) RETURNING xmin) `)
	b.WriteString(`SELECT (SELECT xmin FROM s), (SELECT xmin FROM t) WHERE 1 / (SELECT count(*) FROM t) = 1`)
	return b.String(), p
}
