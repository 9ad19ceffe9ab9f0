package postgres

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/cadre-dev/cadre/internal/session"
)

// Transcripts keeps sessions' transcripts in the tables transcripts and
// transcript_entries (session.Transcripts), so that every node reads and
// resumes the same conversations.
//
// # One writer: a lease on the transcript's row
//
// A writer's claim is written on its transcript's row: the node that holds
// it (this process's node id), a random token of the writer's own and when
// it claimed. Claiming is one conditional statement that succeeds only
// while no live writer holds the row; a holder is live while its node
// heartbeats (package cluster, table nodes): a claim may be taken over once
// its node has been silent for orphanAfter, at once when its node left
// cleanly, and, for a node that has not recorded itself yet, once the
// claim itself is orphanAfter old. A claim of this same node (another
// writer in this process) is in use. Close clears the claim, so the next
// writer need not wait.
//
// Every append inserts only while the writer's token still holds the row,
// reading it FOR SHARE: a takeover waits for an append in flight to commit,
// and an append after the takeover inserts nothing and fails with
// ErrClaimLost. Two writers' entries never interleave.
//
// The claim is a row, not a connection: writers use the store's pool, so
// connections do not grow with the number of sessions running.
//
// # A background child's claim rides with its other writes
//
// A session this DB recorded together with its task (CreateSessionTask, a
// background child's) is new: no transcript can exist for it yet but one
// made under its id by someone else, which the claim still detects. Its
// fresh Create therefore costs no round trip: the claim is made by the
// writer's first append, in the same statement. And its writer's Close
// leaves the release to the write that records the session's end with its
// task's (UpdateSessionTask, TransitionSessionTask), which follows at once
// and carries it in its own statement: a child's transcript costs its
// appends and nothing else. A claim of that session on this node before
// the end (a resume), or DB.Close, releases it first.
//
// # Durability
//
// An append is one INSERT committed on its own: when Append returns, the
// entry is as durable as the server's synchronous_commit makes a commit
// (with the default, on disk on the server), the "nothing written is lost"
// rule of a transcript file, kept across machines.
type Transcripts struct {
	db          *DB
	node        string
	orphanAfter time.Duration
}

var _ session.Transcripts = (*Transcripts)(nil)

// ErrClaimLost is wrapped by the error of an append whose writer no longer
// holds its transcript: another process took the claim over, having found
// this writer's node silent for the orphan timeout.
var ErrClaimLost = errors.New("the writer's claim on the transcript was lost: another process took it over")

// appendTimeout bounds one append: a server that stops answering fails
// the append instead of hanging the run.
const appendTimeout = time.Minute

// releaseTimeout bounds Close's release of a claim. A release that does
// not get through leaves the claim to be taken over once the node is gone.
const releaseTimeout = 10 * time.Second

// locationPrefix starts the TranscriptPath of a transcript kept here: a
// location, not a file path (session.InFile).
const locationPrefix = "postgres:transcripts/"

// Locate is "postgres:transcripts/<id>".
func (tr *Transcripts) Locate(id string) string { return locationPrefix + id }

// notFound is the error for a session without a transcript here.
type notFound struct{ loc string }

func (e notFound) Error() string        { return "no transcript at " + e.loc }
func (e notFound) Is(target error) bool { return target == fs.ErrNotExist }

// takeable is the condition, on the row t of transcripts, under which a
// writer of node $2 may claim it ($4: the orphan timeout in seconds): no
// one holds it, or another node does that left, has been silent for the
// timeout, or has no record while its claim is that old. The nodes'
// times, now() and writer_since are all the database's clock, so nodes
// with skewed clocks agree.
const takeable = `(t.writer_token IS NULL OR (t.writer_node <> $2 AND NOT EXISTS (
		SELECT 1 FROM nodes n WHERE n.id = t.writer_node AND n.left_at IS NULL
			AND n.heartbeat_at > now() - make_interval(secs => $4))
	AND (EXISTS (SELECT 1 FROM nodes n WHERE n.id = t.writer_node)
		OR t.writer_since <= now() - make_interval(secs => $4))))`

// The claims, each returning a row only when it claimed: $1 the session,
// $2 this node, $3 the new token, then the orphan timeout ($4, where
// takeable) and the creation time (the last). Create's fresh claim inserts
// a new row only; its other claim inserts one or claims the existing row
// where takeable; Resume's claims an existing row where takeable.
const (
	claimFresh = `INSERT INTO transcripts AS t (session_id, created_ms, writer_node, writer_token, writer_since)
		VALUES ($1, $4, $2, $3, now()) ON CONFLICT (session_id) DO NOTHING RETURNING true`
	claimCreate = `INSERT INTO transcripts AS t (session_id, created_ms, writer_node, writer_token, writer_since)
		VALUES ($1, $5, $2, $3, now())
		ON CONFLICT (session_id) DO UPDATE SET writer_node = EXCLUDED.writer_node, writer_token = EXCLUDED.writer_token, writer_since = now()
		WHERE ` + takeable + ` RETURNING true`
	claimResume = `UPDATE transcripts AS t SET writer_node = $2, writer_token = $3, writer_since = now()
		WHERE t.session_id = $1 AND ` + takeable + ` RETURNING true`
)

// claim runs one of the claims above for session id ($1), as node $2
// with a new token $3, then the query's own arguments, more: a sink
// holding the claim, or nil when the statement claimed nothing.
func (tr *Transcripts) claim(ctx context.Context, query, id string, more ...any) (*sink, error) {
	if tr.node == "" || tr.orphanAfter <= 0 {
		return nil, fmt.Errorf("open transcript %s: this store's writers have no node id or orphan timeout (node %q, %s)", tr.Locate(id), tr.node, tr.orphanAfter)
	}
	token, err := newToken()
	if err != nil {
		return nil, fmt.Errorf("open transcript %s: %w", tr.Locate(id), err)
	}
	// A release this DB left to the session's end record is made now:
	// this claim would otherwise find the transcript in use, by itself.
	if err := tr.db.writers.releaseNow(ctx, tr.db, id); err != nil {
		return nil, fmt.Errorf("open transcript %s: %w", tr.Locate(id), err)
	}
	s := &sink{db: tr.db, loc: tr.Locate(id), id: id, token: token}
	// Registered first, so that DB.Close, which releases what it finds
	// registered, cannot miss a claim made as it closes.
	if err := tr.db.writers.add(s); err != nil {
		return nil, fmt.Errorf("open transcript %s: %w", tr.Locate(id), err)
	}
	var claimed bool
	args := append([]any{id, tr.node, token}, more...)
	// Retried as idempotent: a retry first checks for its own token.
	err = tr.db.retry(ctx, true, func(ctx context.Context, attempt int) error {
		if attempt > 0 {
			// An earlier attempt may have claimed it and lost the
			// answer: the token is this writer's, so the row says.
			err := tr.db.pool.QueryRow(ctx, `SELECT true FROM transcripts WHERE session_id = $1 AND writer_token = $2`, id, token).Scan(&claimed)
			if !errors.Is(err, pgx.ErrNoRows) {
				return err
			}
		}
		return tr.db.pool.QueryRow(ctx, query, args...).Scan(&claimed)
	})
	if errors.Is(err, pgx.ErrNoRows) {
		tr.db.writers.remove(s)
		return nil, nil
	}
	if err != nil {
		tr.db.writers.remove(s)
		return nil, fmt.Errorf("open transcript %s: %w", tr.Locate(id), oneLine{err})
	}
	s.mu.Lock()
	closing := s.closed
	s.mu.Unlock()
	if closing {
		// DB.Close ran while the claim was on its way and released
		// nothing of it: release it here (while the pool still serves)
		// rather than hand out a writer that is already closed.
		return nil, errors.Join(fmt.Errorf("open transcript %s: the store was closed: %w", tr.Locate(id), fs.ErrClosed), s.release())
	}
	return s, nil
}

// deferredClaim is a fresh Create's writer for a session this DB has just
// recorded: registered, but its claim left to its first append
// (claimAppend).
func (tr *Transcripts) deferredClaim(id string, created int64) (*sink, error) {
	if tr.node == "" || tr.orphanAfter <= 0 {
		return nil, fmt.Errorf("open transcript %s: this store's writers have no node id or orphan timeout (node %q, %s)", tr.Locate(id), tr.node, tr.orphanAfter)
	}
	token, err := newToken()
	if err != nil {
		return nil, fmt.Errorf("open transcript %s: %w", tr.Locate(id), err)
	}
	s := &sink{db: tr.db, loc: tr.Locate(id), id: id, token: token, deferred: true, unclaimed: true, node: tr.node, created: created}
	if err := tr.db.writers.add(s); err != nil {
		return nil, fmt.Errorf("open transcript %s: %w", tr.Locate(id), err)
	}
	return s, nil
}

func newToken() (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("a writer token: %w", err)
	}
	return hex.EncodeToString(b), nil
}

// Create claims session id's transcript, creating it; fresh requires that
// it did not exist.
func (tr *Transcripts) Create(ctx context.Context, id string, fresh bool) (*session.Writer, error) {
	created := time.Now().UnixMilli()
	var (
		s   *sink
		err error
	)
	if fresh && tr.db.writers.takeFresh(id) {
		s, err = tr.deferredClaim(id, created)
	} else if fresh {
		s, err = tr.claim(ctx, claimFresh, id, created)
	} else {
		s, err = tr.claim(ctx, claimCreate, id, tr.orphanAfter.Seconds(), created)
	}
	if err != nil {
		return nil, err
	}
	if s == nil {
		if fresh {
			return nil, fmt.Errorf("create transcript %s: session %s has one already: %w", tr.Locate(id), id, fs.ErrExist)
		}
		return nil, fmt.Errorf("open transcript %s: %w", tr.Locate(id), session.ErrInUse)
	}
	if fresh {
		// The claim inserted the transcript's row, so it has no
		// entries (they reference the row): nothing to read.
		return session.NewWriter(tr.Locate(id), s, ""), nil
	}
	// The claim holds: nothing is appended between this read and the
	// writer's first entry.
	var line string
	err = tr.db.queryRow(ctx, func(r pgx.Row) error { return r.Scan(&line) }, `SELECT line FROM transcript_entries WHERE session_id = $1 ORDER BY seq DESC LIMIT 1`, id)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return nil, errors.Join(fmt.Errorf("create transcript %s: %w", tr.Locate(id), err), s.Close())
	}
	return session.NewWriter(tr.Locate(id), s, session.LastUUID([]byte(line))), nil
}

// Resume claims the transcript of info's session, then reads it: nothing
// can be appended in between.
func (tr *Transcripts) Resume(ctx context.Context, info session.Info) (*session.Writer, []session.Entry, []string, error) {
	s, err := tr.claim(ctx, claimResume, info.ID, tr.orphanAfter.Seconds())
	if err != nil {
		return nil, nil, nil, err
	}
	if s == nil {
		var exists bool
		if err := tr.db.queryRow(ctx, func(r pgx.Row) error { return r.Scan(&exists) }, `SELECT EXISTS (SELECT 1 FROM transcripts WHERE session_id = $1)`, info.ID); err != nil {
			return nil, nil, nil, fmt.Errorf("open transcript %s: %w", tr.Locate(info.ID), err)
		}
		if !exists {
			return nil, nil, nil, fmt.Errorf("resume transcript: %w", notFound{tr.Locate(info.ID)})
		}
		return nil, nil, nil, fmt.Errorf("open transcript %s: %w", tr.Locate(info.ID), session.ErrInUse)
	}
	lines, err := tr.lines(ctx, info.ID)
	if err != nil {
		return nil, nil, nil, errors.Join(err, s.Close())
	}
	entries, problems := session.DecodeLines(tr.Locate(info.ID), lines)
	last := ""
	if len(lines) > 0 {
		last = session.LastUUID(lines[len(lines)-1])
	}
	return session.NewWriter(tr.Locate(info.ID), s, last), entries, problems, nil
}

// Read reads info's transcript in the order it was written.
func (tr *Transcripts) Read(ctx context.Context, info session.Info) ([]session.Entry, []string, error) {
	lines, err := tr.lines(ctx, info.ID)
	if err != nil {
		return nil, nil, err
	}
	entries, problems := session.DecodeLines(tr.Locate(info.ID), lines)
	return entries, problems, nil
}

// lines reads session id's transcript lines; an error wrapping
// fs.ErrNotExist when it has no transcript.
func (tr *Transcripts) lines(ctx context.Context, id string) ([][]byte, error) {
	var (
		lines [][]byte
		line  []byte
	)
	err := tr.db.query(ctx, func(rows pgx.Rows) error {
		lines = lines[:0]
		_, err := pgx.ForEachRow(rows, []any{&line}, func() error {
			lines = append(lines, bytes.Clone(line))
			return nil
		})
		return err
	}, `SELECT line FROM transcript_entries WHERE session_id = $1 ORDER BY seq`, id)
	if err != nil {
		return nil, fmt.Errorf("read transcript %s: %w", tr.Locate(id), err)
	}
	if len(lines) == 0 {
		// No entries: an empty transcript, or none at all.
		var exists bool
		if err := tr.db.queryRow(ctx, func(r pgx.Row) error { return r.Scan(&exists) }, `SELECT EXISTS (SELECT 1 FROM transcripts WHERE session_id = $1)`, id); err != nil {
			return nil, fmt.Errorf("read transcript %s: %w", tr.Locate(id), err)
		}
		if !exists {
			return nil, fmt.Errorf("read transcript: %w", notFound{tr.Locate(id)})
		}
	}
	return lines, nil
}

// Archive records when the transcript was archived; its entries stay
// where they are, readable and resumable by id.
func (tr *Transcripts) Archive(ctx context.Context, info session.Info, at time.Time) (string, error) {
	from := info.TranscriptPath
	if from == "" {
		from = tr.Locate(info.ID)
	}
	if session.Archived(from) {
		return from, nil
	}
	tag, err := tr.db.exec(ctx, true, `UPDATE transcripts SET archived_ms = $2 WHERE session_id = $1`, info.ID, at.UnixMilli())
	if err != nil {
		return "", fmt.Errorf("archive session %s: %w", info.ID, err)
	}
	if tag.RowsAffected() == 0 {
		return "", fmt.Errorf("archive session %s: %w", info.ID, notFound{from})
	}
	return fmt.Sprintf("%s.deleted.%d", from, at.UnixMilli()), nil
}

// appendEntry inserts the next entry of session $1 while token $2 holds
// its claim. The FOR SHARE lock makes a takeover (an UPDATE of the row)
// wait for this insert's commit, and makes this insert see a takeover
// committed first (its token gone: no row). The sequence number is the
// last one plus one, read under the claim, so a writer's entries are
// numbered without gaps in the order appended, even after an append
// whose outcome the writer never heard.
const appendEntry = `INSERT INTO transcript_entries (session_id, seq, line)
	SELECT $1, COALESCE((SELECT max(seq) FROM transcript_entries WHERE session_id = $1), 0) + 1, $3
	WHERE EXISTS (SELECT 1 FROM transcripts WHERE session_id = $1 AND writer_token = $2 FOR SHARE)`

// appendEntries is appendEntry for several lines ($3, in order) in one
// statement: they take the next sequence numbers together, all or none,
// under the same claim check.
const appendEntries = `INSERT INTO transcript_entries (session_id, seq, line)
	SELECT $1, last.seq + l.n, l.line
	FROM (SELECT COALESCE((SELECT max(seq) FROM transcript_entries WHERE session_id = $1), 0) AS seq) last,
		unnest($3::text[]) WITH ORDINALITY AS l(line, n)
	WHERE EXISTS (SELECT 1 FROM transcripts WHERE session_id = $1 AND writer_token = $2 FOR SHARE)`

// claimAppend is claimFresh and appendEntries in one statement, for a
// writer whose claim was deferred (deferredClaim): $1 the session, $2 the
// token, $3 the lines, $4 this node, $5 the creation time. Its entries
// reference the row its first part inserts; when that row existed, it
// inserts nothing.
const claimAppend = `WITH c AS (INSERT INTO transcripts AS t (session_id, created_ms, writer_node, writer_token, writer_since)
		VALUES ($1, $5, $4, $2, now()) ON CONFLICT (session_id) DO NOTHING RETURNING true)
	INSERT INTO transcript_entries (session_id, seq, line)
	SELECT $1, l.n, l.line FROM unnest($3::text[]) WITH ORDINALITY AS l(line, n)
	WHERE EXISTS (SELECT FROM c)`

// createEmpty records empty transcripts, claimed by no one, of sessions
// $1 created at $2: the Close of a deferred writer that appended nothing
// (or DB.Close of those open) leaves what Create would have.
const createEmpty = `INSERT INTO transcripts (session_id, created_ms) SELECT * FROM unnest($1::text[], $2::bigint[]) ON CONFLICT (session_id) DO NOTHING`

// releaseClaims clears the claims of the tokens given: the next writer of
// those transcripts claims them at once.
// (Tokens are random: that session_id and writer_token are each among
// the lists is that they belong together.)
const releaseClaims = `UPDATE transcripts SET ` + unclaimed + `
	WHERE session_id = ANY($1) AND writer_token = ANY($2)`

// unclaimed is the SET list that clears a transcript's claim.
const unclaimed = `writer_node = NULL, writer_token = NULL, writer_since = NULL`

// sink appends a writer's lines through the store's pool while its token
// holds the transcript's claim.
type sink struct {
	db    *DB
	loc   string
	id    string
	token string

	// deferred is a writer made by deferredClaim, unclaimed until its
	// first append claims the transcript, as node at created.
	deferred  bool
	unclaimed bool
	node      string
	created   int64

	// mu serialises appends (the Writer does too; the sequence numbers
	// depend on it) and keeps Close and DB.Close from releasing the claim
	// under an append in flight.
	mu     sync.Mutex
	closed bool
}

var _ session.LinesSink = (*sink)(nil)

// AppendLine inserts line (without its newline: the column holds the
// entry) as the next entry and returns once it is committed.
func (s *sink) AppendLine(line []byte) error {
	return s.AppendLines([][]byte{line})
}

// AppendLines inserts lines as the next entries, in order, in one
// statement (one round trip, all or none), and returns once they are
// committed: a turn's notifications cost the main agent one wait for the
// server, not one each.
func (s *sink) AppendLines(lines [][]byte) error {
	if len(lines) == 0 {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return fmt.Errorf("append to transcript %s: the writer is closed: %w", s.loc, fs.ErrClosed)
	}
	ctx, cancel := context.WithTimeout(context.Background(), appendTimeout)
	defer cancel()
	entries := make([]string, len(lines))
	for i, l := range lines {
		entries[i] = string(bytes.TrimSuffix(l, []byte("\n")))
	}
	last := entries[len(entries)-1]
	var tag pgconn.CommandTag
	// Retried as idempotent: a retry first checks for its own entries.
	err := s.db.retry(ctx, true, func(ctx context.Context, attempt int) (err error) {
		if attempt > 0 {
			// An earlier attempt may have committed and lost the
			// answer. Under the claim only this writer appends, and
			// a statement keeps all its lines or none, so it did if
			// the last entry is the last of these (each line holds
			// its entry's own uuid).
			var got string
			err := s.db.pool.QueryRow(ctx, `SELECT line FROM transcript_entries WHERE session_id = $1 ORDER BY seq DESC LIMIT 1`, s.id).Scan(&got)
			if err == nil && got == last {
				tag = pgconn.NewCommandTag(fmt.Sprintf("INSERT 0 %d", len(entries)))
				return nil
			}
			if err != nil && !errors.Is(err, pgx.ErrNoRows) {
				return err
			}
		}
		switch {
		case s.unclaimed:
			tag, err = s.db.pool.Exec(ctx, claimAppend, s.id, s.token, entries, s.node, s.created)
		case len(entries) == 1:
			tag, err = s.db.pool.Exec(ctx, appendEntry, s.id, s.token, entries[0])
		default:
			tag, err = s.db.pool.Exec(ctx, appendEntries, s.id, s.token, entries)
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("append to transcript %s: %w", s.loc, oneLine{err})
	}
	if tag.RowsAffected() == 0 {
		if s.unclaimed {
			return fmt.Errorf("create transcript %s: session %s has one already: %w", s.loc, s.id, fs.ErrExist)
		}
		return fmt.Errorf("append to transcript %s: %w", s.loc, ErrClaimLost)
	}
	s.unclaimed = false
	return nil
}

// Close releases the writer's claim, so that the next writer claims it at
// once. Closing twice is harmless; so is closing a writer whose claim was
// taken over (the release then changes nothing).
func (s *sink) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	s.db.writers.remove(s)
	var err error
	switch {
	case s.unclaimed:
		err = s.db.createEmpty(context.Background(), []string{s.id}, []int64{s.created})
	case s.deferred && s.db.writers.holdRelease(s.id, s.token):
	default:
		err = s.release()
	}
	if err != nil {
		return fmt.Errorf("close transcript %s: %w", s.loc, err)
	}
	return nil
}

// release clears the writer's claim, if it still holds it.
func (s *sink) release() error {
	return s.db.release(context.Background(), []string{s.id}, []string{s.token})
}

// release clears the claims of tokens, each on the transcript of the
// session at its place in ids (releaseClaims).
func (db *DB) release(ctx context.Context, ids, tokens []string) error {
	return db.housekeep(ctx, "release transcript claims", releaseClaims, ids, tokens)
}

// createEmpty records the empty transcripts of sessions ids, created at
// created, of deferred writers that claimed nothing (createEmpty).
func (db *DB) createEmpty(ctx context.Context, ids []string, created []int64) error {
	return db.housekeep(ctx, "record empty transcripts", createEmpty, ids, created)
}

// housekeep runs sql, an idempotent write that closing writers make,
// within releaseTimeout; what says what it does, for its error.
func (db *DB) housekeep(ctx context.Context, what, sql string, args ...any) error {
	ctx, cancel := context.WithTimeout(ctx, releaseTimeout)
	defer cancel()
	if _, err := db.exec(ctx, true, sql, args...); err != nil {
		return fmt.Errorf("%s: %w", what, oneLine{err})
	}
	return nil
}

// writers are a DB's open writers, so that DB.Close releases their claims
// as their own Close would, and the sessions it recorded with their tasks
// (joint), whose claims ride with their other writes.
type writers struct {
	mu    sync.Mutex
	sinks map[*sink]struct{}
	// joint holds, by session id, a session recorded with its task
	// until its end is: whether its transcript is yet to be created
	// (fresh), then the token of a release its writer's Close left to
	// the end (held).
	joint  map[string]*jointSession
	closed bool
}

type jointSession struct {
	fresh bool
	held  string
}

// recorded notes that session id was recorded with its task just now,
// unless a writer here holds its transcript already: a run launched for
// another node claims it before its record is written and releases it
// for that node (internal/subagent, dispatch.go), and that release may not
// wait for an end this node will not write.
func (ws *writers) recorded(id string) {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	for s := range ws.sinks {
		if s.id == id {
			return
		}
	}
	if ws.joint == nil {
		ws.joint = map[string]*jointSession{}
	}
	ws.joint[id] = &jointSession{fresh: true}
}

// takeFresh reports whether session id was recorded with its task and its
// transcript not created yet, and from then on that it was.
func (ws *writers) takeFresh(id string) bool {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	j := ws.joint[id]
	if j == nil || !j.fresh {
		return false
	}
	j.fresh = false
	return true
}

// holdRelease keeps the release of session id's claim (token), made by a
// deferred writer (deferredClaim), for the write of its end.
func (ws *writers) holdRelease(id, token string) bool {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	j := ws.joint[id]
	if j == nil || j.held != "" {
		return false
	}
	j.fresh, j.held = false, token
	return true
}

// ended forgets session id, whose end is being written, and returns the
// token of the release held for that write, if any.
func (ws *writers) ended(id string) string {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	j := ws.joint[id]
	delete(ws.joint, id)
	if j == nil {
		return ""
	}
	return j.held
}

// releaseNow makes the release held for session id's end now, if any.
func (ws *writers) releaseNow(ctx context.Context, db *DB, id string) error {
	if token := ws.ended(id); token != "" {
		return db.release(ctx, []string{id}, []string{token})
	}
	return nil
}

func (ws *writers) add(s *sink) error {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	if ws.closed {
		return fmt.Errorf("the store is closed: %w", fs.ErrClosed)
	}
	if ws.sinks == nil {
		ws.sinks = map[*sink]struct{}{}
	}
	ws.sinks[s] = struct{}{}
	return nil
}

func (ws *writers) remove(s *sink) {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	delete(ws.sinks, s)
}

// closeAll closes every open writer, waiting for an append in flight,
// and releases their claims in one statement: their writers fail from
// then on, and their sessions can be resumed at once.
func (ws *writers) closeAll(db *DB) error {
	ws.mu.Lock()
	sinks, joint := ws.sinks, ws.joint
	ws.sinks, ws.joint, ws.closed = nil, nil, true
	ws.mu.Unlock()
	var (
		ids, tokens []string
		empty       []string // deferred writers that claimed nothing
		created     []int64
	)
	for id, j := range joint {
		if j.held != "" {
			ids, tokens = append(ids, id), append(tokens, j.held)
		}
	}
	for s := range sinks {
		s.mu.Lock()
		switch {
		case s.closed:
		case s.unclaimed:
			s.closed = true
			empty, created = append(empty, s.id), append(created, s.created)
		default:
			s.closed = true
			ids, tokens = append(ids, s.id), append(tokens, s.token)
		}
		s.mu.Unlock()
	}
	var errs []error
	if len(empty) > 0 {
		errs = append(errs, db.createEmpty(context.Background(), empty, created))
	}
	if len(tokens) > 0 {
		errs = append(errs, db.release(context.Background(), ids, tokens))
	}
	return errors.Join(errs...)
}
