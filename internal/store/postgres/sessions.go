package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/cadre-dev/cadre/internal/session"
	"github.com/cadre-dev/cadre/internal/store/tablerow"
)

var _ session.Index = (*DB)(nil)

// CreateSession implements session.Index.
func (db *DB) CreateSession(ctx context.Context, s session.Info) error {
	if s.ID == "" {
		return fmt.Errorf("create session: the id is empty")
	}
	if err := db.retry(ctx, false, func(ctx context.Context, _ int) error { return insertSession(ctx, db.pool, s) }); err != nil {
		return fmt.Errorf("create session %q: %w", s.ID, err)
	}
	return nil
}

// execer is what a write needs: the pool, or a transaction.
type execer interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
}

const insertSessionSQL = `INSERT INTO sessions (` + tablerow.SessionColumns + `)
	VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19)
	ON CONFLICT (id) DO NOTHING`

// insertSession adds s's row; an id already present is an error.
func insertSession(ctx context.Context, q execer, s session.Info) error {
	tag, err := q.Exec(ctx, insertSessionSQL, append([]any{s.ID}, tablerow.SessionValues(s)...)...)
	if err != nil {
		return err
	}
	if tag.RowsAffected() == 0 {
		return errors.New("a session with this id already exists")
	}
	return nil
}

// UpdateSession implements session.Index: the row is read FOR UPDATE and
// stays locked until the write commits (doc.go), in two round trips (rmw).
func (db *DB) UpdateSession(ctx context.Context, id string, fn func(*session.Info) error) error {
	u := &sessionUpdater{id: id, fn: fn}
	if err := db.rmw(ctx, u.read, u.scan, u.write); err != nil {
		return fmt.Errorf("update session %q: %w", id, err)
	}
	return nil
}

const (
	selectSessionSQL = `SELECT ` + tablerow.SessionColumns + ` FROM sessions WHERE id = $1`
	updateSessionSQL = `UPDATE sessions SET
		parent_id = $1, agent = $2, session_key = $3, title = $4, cwd = $5, status = $6, created_ms = $7, updated_ms = $8,
		input_tokens = $9, output_tokens = $10, cache_creation_input_tokens = $11, cache_read_input_tokens = $12,
		cost_usd = $13, num_turns = $14, transcript_path = $15, owner = $16, cost_unknown = $17, model = $18
		WHERE id = $19`
)

// sessionUpdater is one session's part of a read-modify-write (rmw).
type sessionUpdater struct {
	id string
	fn func(*session.Info) error
	s  session.Info
}

func (u *sessionUpdater) read(b *pgx.Batch) { b.Queue(selectSessionSQL+` FOR UPDATE`, u.id) }

func (u *sessionUpdater) scan(br pgx.BatchResults) error {
	s, err := tablerow.ScanSession(br.QueryRow())
	if errors.Is(err, pgx.ErrNoRows) {
		return session.ErrNotFound
	}
	u.s = s
	return err
}

func (u *sessionUpdater) write(b *pgx.Batch) error {
	if err := u.fn(&u.s); err != nil {
		return err
	}
	if u.s.ID != u.id {
		return fmt.Errorf("the update changed the id to %q", u.s.ID)
	}
	b.Queue(updateSessionSQL, append(tablerow.SessionValues(u.s), u.id)...)
	return nil
}

// GetSession implements session.Index.
func (db *DB) GetSession(ctx context.Context, id string) (session.Info, error) {
	var s session.Info
	err := db.queryRow(ctx, func(r pgx.Row) (err error) { s, err = tablerow.ScanSession(r); return err }, selectSessionSQL, id)
	if errors.Is(err, pgx.ErrNoRows) {
		return session.Info{}, fmt.Errorf("get session %q: %w", id, session.ErrNotFound)
	} else if err != nil {
		return session.Info{}, fmt.Errorf("get session %q: %w", id, err)
	}
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
