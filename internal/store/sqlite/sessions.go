package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/cadre-dev/cadre/internal/session"
	"github.com/cadre-dev/cadre/internal/store/tablerow"
)

var _ session.Index = (*DB)(nil)

// row is what Scan needs: *sql.Row and *sql.Rows.
type row = tablerow.Scanner

// CreateSession implements session.Index.
func (db *DB) CreateSession(ctx context.Context, s session.Info) error {
	if s.ID == "" {
		return fmt.Errorf("create session: the id is empty")
	}
	if err := db.write(ctx, func(tx *wtx) error { return insertSession(tx, s) }); err != nil {
		return fmt.Errorf("create session %q: %w", s.ID, err)
	}
	return nil
}

const insertSessionSQL = `INSERT INTO sessions (` + tablerow.SessionColumns + `) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
	ON CONFLICT (id) DO NOTHING`

// insertSession adds s's row; an id already present is an error.
func insertSession(tx *wtx, s session.Info) error {
	res, err := tx.exec(insertSessionSQL, append([]any{s.ID}, tablerow.SessionValues(s)...)...)
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil {
		return err
	} else if n == 0 {
		return errors.New("a session with this id already exists")
	}
	tx.wroteSession(sessionAsStored(s))
	return nil
}

// UpdateSession implements session.Index. The read and the write share one
// IMMEDIATE transaction, so the write lock is held (across processes too)
// from before the read until the commit; fn runs inside it.
func (db *DB) UpdateSession(ctx context.Context, id string, fn func(*session.Info) error) error {
	if err := db.write(ctx, func(tx *wtx) error { return updateSession(tx, id, fn) }); err != nil {
		return fmt.Errorf("update session %q: %w", id, err)
	}
	return nil
}

const selectSessionSQL = `SELECT ` + tablerow.SessionColumns + ` FROM sessions WHERE id = ?`

// updateSession is UpdateSession inside tx. It writes only the columns fn
// changed (update.go).
func updateSession(tx *wtx, id string, fn func(*session.Info) error) error {
	s, err := tx.readSession(id)
	if errors.Is(err, sql.ErrNoRows) {
		return session.ErrNotFound
	} else if err != nil {
		return err
	}
	before := tablerow.SessionValues(s)
	if err := fn(&s); err != nil {
		return err
	}
	if s.ID != id {
		return fmt.Errorf("the update changed the id to %q", s.ID)
	}
	if q, args := changedSet("sessions", sessionColumns, before, tablerow.SessionValues(s), id); q != "" {
		if _, err := tx.exec(q, args...); err != nil {
			return err
		}
	}
	tx.wroteSession(sessionAsStored(s))
	return nil
}

// GetSessions returns the records of the sessions among ids that have
// one, by id, reading them in one query a few hundred at a time: a main
// agent's result lists what each of its subagents cost, and at the end of
// a run of 10,000 children that read them one by one, a query each.
func (db *DB) GetSessions(ctx context.Context, ids []string) (map[string]session.Info, error) {
	out := make(map[string]session.Info, len(ids))
	for len(ids) > 0 {
		chunk := ids[:min(len(ids), getSessionsChunk)]
		ids = ids[len(chunk):]
		list, err := json.Marshal(chunk)
		if err != nil {
			return nil, fmt.Errorf("get %d sessions: %w", len(chunk), err)
		}
		got, err := queryAll(ctx, db.rs, tablerow.ScanSession, selectSessionsSQL, string(list))
		if err != nil {
			return nil, fmt.Errorf("get %d sessions: %w", len(chunk), err)
		}
		for _, s := range got {
			out[s.ID] = s
		}
	}
	return out, nil
}

// getSessionsChunk is how many ids one query of GetSessions reads: enough
// that the query's own cost is small beside its rows', few enough that a
// reader connection is not held long.
const getSessionsChunk = 500

// selectSessionsSQL reads the sessions whose ids are in a JSON array: one
// statement, prepared once, for any number of ids.
const selectSessionsSQL = `SELECT ` + tablerow.SessionColumns + ` FROM sessions WHERE id IN (SELECT value FROM json_each(?))`

// statusIn adds the condition of a filter's Statuses (sessions' and tasks'
// alike) to a query's where terms and args.
func statusIn[S ~string](where []string, args []any, statuses []S) ([]string, []any) {
	where = append(where, "status IN (?"+strings.Repeat(", ?", len(statuses)-1)+")")
	for _, s := range statuses {
		args = append(args, string(s))
	}
	return where, args
}

// GetSession implements session.Index.
func (db *DB) GetSession(ctx context.Context, id string) (session.Info, error) {
	s, err := tablerow.ScanSession(db.rs.queryRow(ctx, selectSessionSQL, id))
	if errors.Is(err, sql.ErrNoRows) {
		return session.Info{}, fmt.Errorf("get session %q: %w", id, session.ErrNotFound)
	} else if err != nil {
		return session.Info{}, fmt.Errorf("get session %q: %w", id, err)
	}
	return s, nil
}

// ListSessions implements session.Index.
func (db *DB) ListSessions(ctx context.Context, f session.Filter) ([]session.Info, error) {
	if err := f.Validate(); err != nil {
		return nil, fmt.Errorf("list sessions: %w", err)
	}
	q, args := listSessionsSQL(f)
	out, err := queryAll(ctx, db.rs, tablerow.ScanSession, q, args...)
	if err != nil {
		return nil, fmt.Errorf("list sessions: %w", err)
	}
	return out, nil
}

// listSessionsSQL is ListSessions' query for f (valid), newest first, as
// an index yields them (TestListingsWalkAnIndex).
func listSessionsSQL(f session.Filter) (string, []any) {
	var (
		where []string
		args  []any
	)
	if f.ParentID != nil {
		where, args = append(where, "parent_id = ?"), append(args, *f.ParentID)
	}
	if len(f.Statuses) > 0 {
		where, args = statusIn(where, args, f.Statuses)
	}
	if f.Cwd != "" {
		where, args = append(where, "cwd = ?"), append(args, f.Cwd)
	}
	if !f.EndedBefore.IsZero() {
		// The first and last terms are the partial index's own
		// (sessions_to_archive), spelt alike so that the planner uses it.
		where = append(where, `parent_id != ''`, `status IN ('completed', 'failed', 'killed')`, "updated_ms < ?", `transcript_path NOT LIKE '%.deleted.%'`)
		args = append(args, f.EndedBefore.UnixMilli())
	}
	q := `SELECT ` + tablerow.SessionColumns + ` FROM sessions`
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	q += " ORDER BY updated_ms DESC, id DESC"
	return q + limit(f.Limit), args
}
