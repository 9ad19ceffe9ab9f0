package postgres

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"io/fs"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/cadre-dev/cadre/internal/session"
)

// Transcripts keeps sessions' transcripts in the tables transcripts and
// transcript_entries (session.Transcripts), so that every node reads and
// resumes the same conversations.
//
// # One writer, and a dead one's claim
//
// A writer's claim is a session-level advisory lock (pg_try_advisory_lock)
// taken on a connection of its own, opened for the writer and held until
// its Close. PostgreSQL drops a session's advisory locks when its
// connection ends, however it ends: a killed process's socket closes, and
// a lost machine's connection is ended by the server's TCP keepalive, so
// a crashed writer never blocks --resume for long. Every append goes
// through that connection, so a writer whose connection (and so whose
// claim) is gone can no longer append: another writer's entries and its
// own never interleave.
//
// The server notices a vanished machine (no FIN, no RST) by TCP keepalive,
// which a writer's connection asks of it after 30 s idle
// (writerKeepalive), so such a claim ends within about a minute.
//
// The cost is one connection to the server per open writer, that is per
// running session or subagent: size max_connections for the runs of all
// nodes at once.
//
// # Durability
//
// An append is one INSERT committed on its own: when Append returns, the
// entry is as durable as the server's synchronous_commit makes a commit
// (with the default, on disk on the server), the "nothing written is lost"
// rule of a transcript file, kept across machines.
type Transcripts struct {
	db *DB

	mu    sync.Mutex
	sinks map[*sink]struct{} // the open writers'
}

var _ session.Transcripts = (*Transcripts)(nil)

// appendTimeout bounds one append: a server that stops answering fails
// the append (and ends its writer's connection) instead of hanging the run.
const appendTimeout = time.Minute

// locationPrefix starts the TranscriptPath of a transcript kept here: a
// location, not a file path (session.InFile).
const locationPrefix = "postgres:transcripts/"

// Locate is "postgres:transcripts/<id>".
func (tr *Transcripts) Locate(id string) string { return locationPrefix + id }

// lockKey is the advisory lock key of session id's transcript: a 64-bit
// hash of it under a prefix of cadre's own, so that it meets no other
// lock's key (the migration lock's, another session's) but by a 1 in 2^64
// chance.
func lockKey(id string) int64 {
	h := fnv.New64a()
	h.Write([]byte("cadre transcript\x00" + id))
	return int64(h.Sum64())
}

// writerKeepalive are the server's TCP keepalive settings for a writer's
// connection, unless the store URL sets them: a writer whose machine
// vanished (no FIN, no RST) loses its claim after about a minute
// (30 s idle + 3 probes 10 s apart), not after the operating system's
// default of over two hours, so its session can be resumed elsewhere.
var writerKeepalive = map[string]string{
	"tcp_keepalives_idle":     "30",
	"tcp_keepalives_interval": "10",
	"tcp_keepalives_count":    "3",
}

// writerConfig is the pool's connection settings with writerKeepalive.
func writerConfig(pool *pgx.ConnConfig) *pgx.ConnConfig {
	cfg := pool.Copy()
	if cfg.RuntimeParams == nil {
		cfg.RuntimeParams = map[string]string{}
	}
	for k, v := range writerKeepalive {
		if _, set := cfg.RuntimeParams[k]; !set {
			cfg.RuntimeParams[k] = v
		}
	}
	return cfg
}

// notFound is the error for a session without a transcript here.
type notFound struct{ loc string }

func (e notFound) Error() string        { return "no transcript at " + e.loc }
func (e notFound) Is(target error) bool { return target == fs.ErrNotExist }

// claim opens a writer's connection and takes session id's lock on it: an
// error wrapping session.ErrInUse when another connection holds it. The
// sink it returns appends after seq 0 until told otherwise.
func (tr *Transcripts) claim(ctx context.Context, id string) (*sink, error) {
	conn, err := pgx.ConnectConfig(ctx, writerConfig(tr.db.pool.Config().ConnConfig))
	if err != nil {
		return nil, fmt.Errorf("open transcript %s: connect: %w", tr.Locate(id), oneLine{err})
	}
	var locked bool
	if err := conn.QueryRow(ctx, `SELECT pg_try_advisory_lock($1)`, lockKey(id)).Scan(&locked); err != nil {
		return nil, errors.Join(fmt.Errorf("open transcript %s: %w", tr.Locate(id), err), closeConn(conn))
	}
	if !locked {
		return nil, errors.Join(fmt.Errorf("open transcript %s: %w", tr.Locate(id), session.ErrInUse), closeConn(conn))
	}
	s := &sink{tr: tr, conn: conn, id: id}
	tr.mu.Lock()
	defer tr.mu.Unlock()
	if tr.sinks == nil {
		tr.sinks = map[*sink]struct{}{}
	}
	tr.sinks[s] = struct{}{}
	return s, nil
}

// closeAll closes every writer's connection, as the end of the process
// would (DB.Close): their writers fail from then on.
func (tr *Transcripts) closeAll() {
	tr.mu.Lock()
	sinks := tr.sinks
	tr.sinks = nil
	tr.mu.Unlock()
	for s := range sinks {
		s.Close()
	}
}

func closeConn(c *pgx.Conn) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return c.Close(ctx)
}

// Create claims session id's transcript, creating it; fresh requires that
// it did not exist.
func (tr *Transcripts) Create(ctx context.Context, id string, fresh bool) (*session.Writer, error) {
	s, err := tr.claim(ctx, id)
	if err != nil {
		return nil, err
	}
	s.mu.Lock() // against DB.Close, as an append
	w, err := tr.create(ctx, s, fresh)
	s.mu.Unlock()
	if err != nil {
		return nil, errors.Join(fmt.Errorf("create transcript %s: %w", tr.Locate(id), err), s.Close())
	}
	return w, nil
}

// create adds the transcript's row, if new, and returns the writer that
// continues after its last entry; s is claimed and not yet shared.
func (tr *Transcripts) create(ctx context.Context, s *sink, fresh bool) (*session.Writer, error) {
	id, conn := s.id, s.conn
	tag, err := conn.Exec(ctx, `INSERT INTO transcripts (session_id, created_ms) VALUES ($1, $2)
		ON CONFLICT (session_id) DO NOTHING`, id, time.Now().UnixMilli())
	if err != nil {
		return nil, err
	}
	if fresh && tag.RowsAffected() == 0 {
		return nil, fmt.Errorf("session %s has one already: %w", id, fs.ErrExist)
	}
	var (
		seq  int64
		line string
	)
	err = conn.QueryRow(ctx, `SELECT seq, line FROM transcript_entries WHERE session_id = $1 ORDER BY seq DESC LIMIT 1`, id).Scan(&seq, &line)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return nil, err
	}
	s.seq = seq
	return session.NewWriter(tr.Locate(id), s, session.LastUUID([]byte(line))), nil
}

// Resume claims the transcript of info's session, then reads it on the
// claiming connection: nothing can be appended in between.
func (tr *Transcripts) Resume(ctx context.Context, info session.Info) (*session.Writer, []session.Entry, []string, error) {
	s, err := tr.claim(ctx, info.ID)
	if err != nil {
		return nil, nil, nil, err
	}
	s.mu.Lock() // against DB.Close, as an append
	lines, seq, err := tr.lines(ctx, s.conn, info.ID)
	s.seq = seq
	s.mu.Unlock()
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
	lines, _, err := tr.lines(ctx, tr.db.pool, info.ID)
	if err != nil {
		return nil, nil, err
	}
	entries, problems := session.DecodeLines(tr.Locate(info.ID), lines)
	return entries, problems, nil
}

// querier is what a read needs: the pool, or a writer's connection.
type querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// lines reads session id's transcript lines and the last one's seq; an
// error wrapping fs.ErrNotExist when it has no transcript.
func (tr *Transcripts) lines(ctx context.Context, q querier, id string) ([][]byte, int64, error) {
	rows, err := q.Query(ctx, `SELECT seq, line FROM transcript_entries WHERE session_id = $1 ORDER BY seq`, id)
	if err != nil {
		return nil, 0, fmt.Errorf("read transcript %s: %w", tr.Locate(id), err)
	}
	var (
		lines [][]byte
		seq   int64
		line  []byte
	)
	_, err = pgx.ForEachRow(rows, []any{&seq, &line}, func() error {
		lines = append(lines, bytes.Clone(line))
		return nil
	})
	if err != nil {
		return nil, 0, fmt.Errorf("read transcript %s: %w", tr.Locate(id), err)
	}
	if len(lines) == 0 {
		// No entries: an empty transcript, or none at all.
		var exists bool
		if err := q.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM transcripts WHERE session_id = $1)`, id).Scan(&exists); err != nil {
			return nil, 0, fmt.Errorf("read transcript %s: %w", tr.Locate(id), err)
		}
		if !exists {
			return nil, 0, fmt.Errorf("read transcript: %w", notFound{tr.Locate(id)})
		}
	}
	return lines, seq, nil
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
	tag, err := tr.db.pool.Exec(ctx, `UPDATE transcripts SET archived_ms = $2 WHERE session_id = $1`, info.ID, at.UnixMilli())
	if err != nil {
		return "", fmt.Errorf("archive session %s: %w", info.ID, err)
	}
	if tag.RowsAffected() == 0 {
		return "", fmt.Errorf("archive session %s: %w", info.ID, notFound{from})
	}
	return fmt.Sprintf("%s.deleted.%d", from, at.UnixMilli()), nil
}

// sink appends a writer's lines on its claiming connection. A pgx.Conn
// takes one call at a time: mu keeps DB.Close from closing it under an
// append.
type sink struct {
	tr   *Transcripts
	conn *pgx.Conn
	id   string

	mu     sync.Mutex
	seq    int64 // the last entry's
	closed bool
}

// AppendLine inserts line (without its newline: the column holds the
// entry) as the next entry and returns once it is committed. The claim is
// what makes seq safe: no other writer appends to this session.
func (s *sink) AppendLine(line []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return fmt.Errorf("the writer's connection is closed (its store was closed): %w", fs.ErrClosed)
	}
	ctx, cancel := context.WithTimeout(context.Background(), appendTimeout)
	defer cancel()
	_, err := s.conn.Exec(ctx, `INSERT INTO transcript_entries (session_id, seq, line) VALUES ($1, $2, $3)`,
		s.id, s.seq+1, string(bytes.TrimSuffix(line, []byte("\n"))))
	if err != nil {
		return oneLine{err}
	}
	s.seq++
	return nil
}

// Close closes the writer's connection, which ends its claim. Closing
// twice is harmless.
func (s *sink) Close() error {
	s.tr.mu.Lock()
	delete(s.tr.sinks, s)
	s.tr.mu.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	return closeConn(s.conn)
}
