package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/cadre-dev/cadre/internal/session"
	"github.com/cadre-dev/cadre/internal/store/tablerow"
)

var _ session.Index = (*DB)(nil)

// CreateSession implements session.Index.
func (db *DB) CreateSession(ctx context.Context, s session.Info) error {
	if s.ID == "" {
		return fmt.Errorf("create session: the id is empty")
	}
	var xmin uint32
	err := db.retry(ctx, false, func(ctx context.Context, _ int) error {
		err := db.pool.QueryRow(ctx, insertSessionSQL, append([]any{s.ID}, tablerow.SessionValues(s)...)...).Scan(&xmin)
		if errors.Is(err, pgx.ErrNoRows) {
			return errors.New("a session with this id already exists")
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("create session %q: %w", s.ID, err)
	}
	db.sessions.put(s.ID, tablerow.NormalizeSession(s), xmin)
	return nil
}

const insertSessionSQL = `INSERT INTO sessions (` + tablerow.SessionColumns + `)
	VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19)
	ON CONFLICT (id) DO NOTHING RETURNING xmin`

// UpdateSession implements session.Index: in one statement on the row as
// this DB last knew it, if it is still that version (known.go);
// otherwise the row is read FOR UPDATE and stays locked until the write
// commits (doc.go), in two round trips (rmw).
func (db *DB) UpdateSession(ctx context.Context, id string, fn func(*session.Info) error) error {
	if done, err := db.updateKnownSession(ctx, id, fn); done {
		if err != nil {
			return fmt.Errorf("update session %q: %w", id, err)
		}
		return nil
	}
	u := &sessionUpdater{id: id, fn: fn}
	if err := db.rmw(ctx, u.read, u.scan, u.write); err != nil {
		db.sessions.forget(id)
		return fmt.Errorf("update session %q: %w", id, err)
	}
	db.sessions.put(id, tablerow.NormalizeSession(u.s), u.xmin)
	return nil
}

// updateKnownSession is updateKnownTask's twin for session id.
func (db *DB) updateKnownSession(ctx context.Context, id string, fn func(*session.Info) error) (bool, error) {
	s, xmin, ok := db.sessions.get(id)
	if !ok {
		return false, nil
	}
	db.sessions.forget(id)
	before := tablerow.SessionValues(s)
	if err := checkSession(id, &s, fn); err != nil {
		return false, nil
	}
	var next uint32
	q, args := updateSQL("sessions", tablerow.SessionColumnNames, before, tablerow.SessionValues(s), id, &xmin)
	if stale, err := db.writeKnown(ctx, q, args, &next); stale || err != nil {
		return !stale, err
	}
	db.sessions.put(id, tablerow.NormalizeSession(s), next)
	return true, nil
}

// checkSession applies fn to s, the row of session id, and checks the
// result as every update does.
func checkSession(id string, s *session.Info, fn func(*session.Info) error) error {
	if err := fn(s); err != nil {
		return err
	}
	if s.ID != id {
		return fmt.Errorf("the update changed the id to %q", s.ID)
	}
	return nil
}

// selectSessionSQL reads a session's row with its version first.
const selectSessionSQL = `SELECT xmin, ` + tablerow.SessionColumns + ` FROM sessions WHERE id = $1`

// sessionUpdater is one session's part of a read-modify-write (rmw),
// whose version is xmin once the writes have run.
type sessionUpdater struct {
	id   string
	fn   func(*session.Info) error
	s    session.Info
	xmin uint32
}

func (u *sessionUpdater) read(b *pgx.Batch) { b.Queue(selectSessionSQL+` FOR UPDATE`, u.id) }

func (u *sessionUpdater) scan(br pgx.BatchResults) error {
	s, err := tablerow.ScanSession(withXmin{br.QueryRow(), &u.xmin})
	if errors.Is(err, pgx.ErrNoRows) {
		return session.ErrNotFound
	}
	u.s = s
	return err
}

func (u *sessionUpdater) write(b *pgx.Batch) error {
	before := tablerow.SessionValues(u.s)
	if err := checkSession(u.id, &u.s, u.fn); err != nil {
		return err
	}
	q, args := updateSQL("sessions", tablerow.SessionColumnNames, before, tablerow.SessionValues(u.s), u.id, nil)
	b.Queue(q, args...).QueryRow(func(r pgx.Row) error { return r.Scan(&u.xmin) })
	return nil
}

// GetSession implements session.Index.
func (db *DB) GetSession(ctx context.Context, id string) (session.Info, error) {
	var (
		s    session.Info
		xmin uint32
	)
	err := db.queryRow(ctx, func(r pgx.Row) (err error) { s, err = tablerow.ScanSession(withXmin{r, &xmin}); return err }, selectSessionSQL, id)
	if errors.Is(err, pgx.ErrNoRows) {
		db.sessions.forget(id)
		return session.Info{}, fmt.Errorf("get session %q: %w", id, session.ErrNotFound)
	} else if err != nil {
		return session.Info{}, fmt.Errorf("get session %q: %w", id, err)
	}
	db.sessions.put(id, s, xmin)
	return s, nil
}

// GetSessions returns the records of the sessions among ids that have
// one, by id, in one query: a caller that needs many (a result's cost of
// each subagent, at every turn of a main agent with 1,000 of them) would
// otherwise pay a round trip for each.
func (db *DB) GetSessions(ctx context.Context, ids []string) (map[string]session.Info, error) {
	out := make(map[string]session.Info, len(ids))
	err := db.query(ctx, func(rows pgx.Rows) error {
		clear(out)
		list, err := tablerow.Collect(rows, tablerow.ScanSession)
		for _, s := range list {
			out[s.ID] = s
		}
		return err
	}, `SELECT `+tablerow.SessionColumns+` FROM sessions WHERE id = ANY($1)`, ids)
	if err != nil {
		return nil, fmt.Errorf("get %d sessions: %w", len(ids), err)
	}
	return out, nil
}

// where gathers a query's conditions and their numbered arguments.
type where struct {
	terms []string
	args  []any
}

// add appends a condition; each "?" in term becomes the next $N, bound to
// the next of args.
func (w *where) add(term string, args ...any) {
	for _, a := range args {
		w.args = append(w.args, a)
		term = strings.Replace(term, "?", fmt.Sprintf("$%d", len(w.args)), 1)
	}
	w.terms = append(w.terms, term)
}

// sql is q with w's conditions, order and limit.
func (w *where) sql(q, order string, limit int) string {
	if len(w.terms) > 0 {
		q += " WHERE " + strings.Join(w.terms, " AND ")
	}
	q += " ORDER BY " + order
	if limit > 0 {
		w.args = append(w.args, limit)
		q += fmt.Sprintf(" LIMIT $%d", len(w.args))
	}
	return q
}

// statuses is a filter's statuses as the strings stored.
func statuses[S ~string](list []S) []string {
	out := make([]string, len(list))
	for i, s := range list {
		out[i] = string(s)
	}
	return out
}

// ListSessions implements session.Index.
func (db *DB) ListSessions(ctx context.Context, f session.Filter) ([]session.Info, error) {
	if err := f.Validate(); err != nil {
		return nil, fmt.Errorf("list sessions: %w", err)
	}
	var w where
	if f.ParentID != nil {
		w.add("parent_id = ?", *f.ParentID)
	}
	if len(f.Statuses) > 0 {
		w.add("status = ANY(?)", statuses(f.Statuses))
	}
	if f.Cwd != "" {
		w.add("cwd = ?", f.Cwd)
	}
	if !f.EndedBefore.IsZero() {
		// The first and last terms are the partial index's own
		// (sessions_to_archive), spelt alike so that the planner uses it.
		w.add(`parent_id <> ''`)
		w.add(`status IN ('completed', 'failed', 'killed')`)
		w.add("updated_ms < ?", f.EndedBefore.UnixMilli())
		w.add(`transcript_path NOT LIKE '%.deleted.%'`)
	}
	q := w.sql(`SELECT `+tablerow.SessionColumns+` FROM sessions`, "updated_ms DESC, id DESC", f.Limit)
	var out []session.Info
	err := db.query(ctx, func(rows pgx.Rows) (err error) {
		out, err = tablerow.Collect(rows, tablerow.ScanSession)
		return err
	}, q, w.args...)
	if err != nil {
		return nil, fmt.Errorf("list sessions: %w", err)
	}
	return out, nil
}
