package postgres

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"runtime"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/cadre-dev/cadre/internal/session"
	"github.com/cadre-dev/cadre/internal/store/migration"
	"github.com/cadre-dev/cadre/internal/task"
)

// DB is an open PostgreSQL store. It is safe for concurrent use, and any
// number of DBs, in one process or on many machines, may share a database.
type DB struct {
	pool *pgxpool.Pool
	// river is River's own pool (RiverPool), apart from pool so that
	// a node's runs, however many, never starve River's leader
	// election, fetches and completions of a connection.
	river *pgxpool.Pool
	// writers are the open transcript writers, whose claims Close
	// releases.
	writers writers
	// listen is the one LISTEN connection, started by the first watch
	// (listen.go).
	listen *listener
	// retryFor bounds the retries of one operation through a passing
	// connection failure (retry.go); log hears of them.
	retryFor time.Duration
	log      *slog.Logger
	// tasks and sessions are the rows this DB last inserted, read or
	// wrote, with their versions, for updates in one statement
	// (known.go).
	tasks    *known[task.Task]
	sessions *known[session.Info]
}

// DefaultPoolConns is the size of the store's pool when the URL does not
// set pool_max_conns: pgxpool's own default, the larger of 4 and the
// number of CPUs. A query holds a connection only for its round trip, and
// the queries a node has in flight at once are bounded by the CPUs that
// make them, not by how many runs it has. More connections only add
// server backends, each warming its caches and preparing the store's
// statements, that then compete for the server's CPUs: with the server on
// the same 2-core machine, 1,000 background children cost it 1.4 s of CPU
// through 4 connections and 2.1 s through 20, and ran faster (it was 20
// while River shared the pool; it has its own now, RiverConns).
// docs/scaling.md sizes it and max_connections.
func DefaultPoolConns() int32 { return int32(max(4, runtime.NumCPU())) }

// PlanCacheMode is the store's connections' plan_cache_mode when the URL
// does not set one. Every statement of the store is prepared once per
// connection (pgx's statement cache) and finds its rows by key or by an
// index made for it, so the plan never depends on the values bound: at
// PostgreSQL's default (auto) each of the pool's connections planned
// every statement five times before trying the generic plan, and planned
// a statement with an array parameter (the release of a run's transcript
// claims) at every call. River's pool keeps the default for its own
// queries.
const PlanCacheMode = "force_generic_plan"

// RiverConns is the size of River's own pool (RiverPool): its notifier's
// listening connection (held for good), the leader's election and
// maintenance, each queue's fetches and the batched completions. Kept
// apart from the store's pool: at 10,000 runs on two nodes, River's
// elector shared a pool that the runs' appends and the launch's job
// inserts kept busy, and its election timed out (issue 28).
const RiverConns = 6

// Option adjusts how Open sets up a DB.
type Option func(*options)

type options struct {
	log      *slog.Logger
	retryFor time.Duration
}

// WithLogger gives the DB a logger for what it does in the background: the
// change listener warns there when it loses its connection. Without it
// nothing is logged.
func WithLogger(l *slog.Logger) Option {
	return func(o *options) { o.log = l }
}

// Open connects to the database at dsn (a postgres:// or postgresql://
// URL) and brings its schema up to date. The password, if the URL has one,
// never appears in its errors.
func Open(ctx context.Context, dsn string, opts ...Option) (*DB, error) {
	o := options{log: slog.New(slog.DiscardHandler), retryFor: DefaultRetryFor}
	for _, opt := range opts {
		opt(&o)
	}
	shown, err := checkURL(dsn)
	if err != nil {
		return nil, fmt.Errorf("open PostgreSQL store: %w", err)
	}
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("open PostgreSQL store %s: %w", shown, err)
	}
	riverCfg := cfg.Copy()
	if u, err := url.Parse(dsn); err == nil {
		q := u.Query()
		if !q.Has("pool_max_conns") {
			cfg.MaxConns = DefaultPoolConns()
		}
		if !q.Has("plan_cache_mode") {
			cfg.ConnConfig.RuntimeParams["plan_cache_mode"] = PlanCacheMode
		}
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("open PostgreSQL store %s: %w", shown, oneLine{err})
	}
	riverCfg.MaxConns = RiverConns
	riverCfg.ConnConfig.RuntimeParams["application_name"] = RiverName
	river, err := pgxpool.NewWithConfig(ctx, riverCfg)
	if err != nil {
		pool.Close()
		return nil, fmt.Errorf("open PostgreSQL store %s: %w", shown, oneLine{err})
	}
	// Open itself retries nothing: a URL that cannot be reached at start
	// stops the command at once with its error (docs/scaling.md), rather
	// than after the retry bound. The retries start once it is open.
	db := &DB{pool: pool, river: river, log: o.log, tasks: newKnownTasks(), sessions: newKnownSessions()}
	listenCfg := cfg.ConnConfig.Copy()
	listenCfg.RuntimeParams["application_name"] = ListenerName
	db.listen = newListener(func(ctx context.Context) (*pgx.Conn, error) {
		return pgx.ConnectConfig(ctx, listenCfg)
	}, o.log)
	ms, err := migration.Load(migrationFiles)
	if err == nil {
		err = db.migrate(ctx, ms)
	}
	if err != nil {
		pool.Close()
		river.Close()
		return nil, fmt.Errorf("open PostgreSQL store %s: %w", shown, oneLine{err})
	}
	db.retryFor = o.retryFor
	return db, nil
}

// oneLine is an error whose message is put on one line: pgx gives each
// address it tried a line of its own, and a command-line front end shows
// only an error's first line, which would then end before saying what
// went wrong.
type oneLine struct{ err error }

func (e oneLine) Error() string {
	lines := strings.Split(strings.TrimSpace(e.err.Error()), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimSpace(l)
	}
	return strings.Join(lines, " ")
}

func (e oneLine) Unwrap() error { return e.err }

// checkURL checks that dsn is a PostgreSQL URL with a host (or a socket
// directory, libpq's ?host=/dir) and returns it
// with any password replaced by "xxxxx", to name it in errors.
func checkURL(dsn string) (string, error) {
	u, err := url.Parse(dsn)
	if err != nil {
		// url.Error repeats the text it could not parse, password
		// and all: say only what is wrong.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return "", fmt.Errorf("the store URL is not a valid URL: %w", err)
	}
	if u.Scheme != "postgres" && u.Scheme != "postgresql" {
		return "", fmt.Errorf("the store URL %s: want postgres://user@host:port/database", u.Redacted())
	}
	if u.Host == "" && u.Query().Get("host") == "" {
		// libpq's defaults would pick a socket of their own choosing:
		// the server is named, as a host or as a socket directory.
		return "", fmt.Errorf("the store URL %s has no host: want postgres://user@host:port/database, or ?host=/socket/directory for a local server's Unix socket", u.Redacted())
	}
	return u.Redacted(), nil
}

// Pool is the store's connection pool, for what writes beside the store
// on the same database (a job inserted in a transaction of the store's,
// package dispatch). It is closed by Close.
func (db *DB) Pool() *pgxpool.Pool { return db.pool }

// RiverPool is River's own pool, RiverConns connections at most, for the
// River client of package cluster. It is closed by Close.
func (db *DB) RiverPool() *pgxpool.Pool { return db.river }

// RiverName is the application_name of River's connections.
const RiverName = "cadre-river"

// Transcripts is the store's transcripts (session.Transcripts), written by
// this process as node: the id of its record in nodes, whose heartbeats
// keep its writers' claims (package cluster; the process's task owner id).
// A claim of a node silent for orphanAfter may be taken over, so pass the
// cluster's orphan timeout (store.orphanAfterSeconds).
func (db *DB) Transcripts(node string, orphanAfter time.Duration) *Transcripts {
	return &Transcripts{db: db, node: node, orphanAfter: orphanAfter}
}

// Close stops the change listener, if it started, closes the open
// transcript writers, releasing their claims as their own Close would,
// and closes the pool's connections, waiting for those in use to be
// returned. Closing twice is harmless.
func (db *DB) Close() error {
	db.listen.close()
	err := db.writers.closeAll(db)
	db.pool.Close()
	db.river.Close()
	return err
}
