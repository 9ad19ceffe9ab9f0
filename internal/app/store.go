package app

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"

	"github.com/cadre-dev/cadre/internal/cluster"
	"github.com/cadre-dev/cadre/internal/config"
	"github.com/cadre-dev/cadre/internal/crossnode"
	"github.com/cadre-dev/cadre/internal/dispatch"
	"github.com/cadre-dev/cadre/internal/mailbox"
	"github.com/cadre-dev/cadre/internal/session"
	"github.com/cadre-dev/cadre/internal/store/postgres"
	"github.com/cadre-dev/cadre/internal/store/sqlite"
	"github.com/cadre-dev/cadre/internal/task"
	"github.com/cadre-dev/cadre/internal/tasklist"
)

// Store holds a runtime's session index, task records and teams' task
// lists: the embedded SQLite file, or a PostgreSQL database several
// processes share.
// Both write a child's session and task records together (the joint
// writes the subagent service looks for).
type Store interface {
	session.Index
	task.Store
	tasklist.Store
	CreateSessionTask(ctx context.Context, s session.Info, t task.Task) error
	UpdateSessionTask(ctx context.Context, sessionID string, sfn func(*session.Info) error, taskID string, tfn func(*task.Task) error) (task.Task, error)
	Close() error
}

// transcriptsOf is where a runtime keeps transcripts: in the store, when it
// keeps them (PostgreSQL, so that every node reads and resumes them, and
// nothing is written under home/sessions), else in files under
// home/sessions. In PostgreSQL a writer's claim is held for node (this
// process's owner id, whose heartbeats keep it) and may be taken over once
// that node has been silent for orphanAfter.
func transcriptsOf(db Store, home, node string, orphanAfter time.Duration) session.Transcripts {
	if pg, ok := db.(*postgres.DB); ok {
		return pg.Transcripts(node, orphanAfter)
	}
	return session.Files{Dir: filepath.Join(home, "sessions")}
}

// ErrStateNotWritable is the error of a runtime whose state dir
// (CADRE_HOME) it cannot write; the SDK exports it.
var ErrStateNotWritable = errors.New("the state directory is not writable")

// openStore opens the store that CADRE_STORE_URL, or else the settings'
// store.url, names: a PostgreSQL URL, or nothing for the SQLite file
// cadre.db under home (which PostgreSQL mode never creates). A URL that
// cannot be used is an error naming where it came from.
func openStore(ctx context.Context, home, settingsURL string, getenv func(string) string, log *slog.Logger) (Store, error) {
	url, from := getenv("CADRE_STORE_URL"), "CADRE_STORE_URL"
	if url == "" {
		url, from = settingsURL, "settings store.url"
	}
	if url == "" {
		db, err := sqlite.Open(ctx, filepath.Join(home, "cadre.db"))
		if err != nil {
			// SQLite says "unable to open database file (14)": say why.
			if werr := writable(home); werr != nil {
				return nil, fmt.Errorf("%w: %s (CADRE_HOME) %s; cadre keeps its sessions and tasks there: make it writable or point CADRE_HOME at a directory that is", ErrStateNotWritable, home, werr)
			}
			return nil, fmt.Errorf("open session store: %w", err)
		}
		return db, nil
	}
	db, err := postgres.Open(ctx, url, postgres.WithLogger(log))
	if err != nil {
		return nil, fmt.Errorf("open session store (%s): %w", from, err)
	}
	return db, nil
}

// startNode makes this process a node of the cluster of processes sharing
// db, when db is PostgreSQL: its heartbeat, the orphan sweep and River on
// the store's pool, started in the background (cluster.Start does no
// database work itself, so nothing here delays a run's first model
// request). With SQLite it starts nothing and returns nil.
//
// A worker (dispatch any) makes the node work the shared queue of
// background runs, with lane workers.
func startNode(ctx context.Context, db Store, ownerID string, s config.Store, log *slog.Logger, worker *dispatch.Worker, lane int) (*cluster.Node, error) {
	pg, ok := db.(*postgres.DB)
	if !ok {
		return nil, nil
	}
	cfg := cluster.Config{
		Store: pg, Pool: pg.RiverPool(), NodeID: ownerID,
		Heartbeat: s.Heartbeat(), OrphanAfter: s.OrphanAfter(),
		Logger: log,
	}
	if worker != nil {
		cfg.Workers = river.NewWorkers()
		river.AddWorker(cfg.Workers, worker)
		cfg.Queues = map[string]river.QueueConfig{dispatch.Queue: {MaxWorkers: lane}}
		// A node that stops stops the runs it works at once (recorded
		// killed, their parents told) rather than keep its caller waiting.
		cfg.StopGrace = time.Millisecond
	}
	n, err := cluster.Start(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("join the cluster on the PostgreSQL store: %w", err)
	}
	return n, nil
}

// crossProcess is what lets the processes sharing a PostgreSQL store reach
// each other's runs: its mailbox, for messages to agents running in
// another process, and its task watch, which tells a run at once that
// another process asked it to stop. The SQLite store has neither (nil):
// messages reach only this process's runs, and a stop is polled for.
func crossProcess(db Store) (mailbox.Mailbox, mailbox.TaskWatcher) {
	if pg, ok := db.(*postgres.DB); ok {
		return pg.Mailbox(), pg
	}
	return nil, nil
}

// OwnerAlive reports whether the process that recorded owner may still be
// running what it owns: with SQLite, whether it holds its lock in RunDir
// (one machine); with PostgreSQL, whether its node's record says it left
// or went silent (any machine: another machine's locks are not here), or
// its lock here says it was a process of this CADRE_HOME that ended.
func (a *App) OwnerAlive(ctx context.Context, owner string) bool {
	if a.Node == nil {
		return task.Alive(a.RunDir, owner)
	}
	return !task.Ended(a.RunDir, owner) && cluster.Alive(ctx, a.DB.(*postgres.DB), owner, a.Node.OrphanAfter())
}

// dispatchMode is the settings' store.dispatch, else the front end's
// default, else sticky.
func dispatchMode(setting, dflt string) (string, error) {
	switch d := cmp.Or(setting, dflt, config.DispatchSticky); d {
	case config.DispatchSticky, config.DispatchAny:
		return d, nil
	default:
		return "", fmt.Errorf("Options.Dispatch %q: want %q or %q", d, config.DispatchSticky, config.DispatchAny)
	}
}

// dispatchWorker is the worker of the shared queue of background runs
// that a node with dispatch any works, nil for a sticky node or the
// SQLite store.
func dispatchWorker(db Store, d string) *dispatch.Worker {
	if _, pg := db.(*postgres.DB); pg && d == config.DispatchAny {
		return dispatch.NewWorker()
	}
	return nil
}

// dispatcher is the subagent service's Dispatcher when worker is set: the
// node's River client, which New starts after the service (no run can
// dispatch before New returns).
func (a *App) dispatcher(worker *dispatch.Worker) crossnode.Dispatcher {
	if worker == nil {
		return nil
	}
	d := dispatch.Dispatcher{Clients: nodeClients{a}}
	if pg, ok := a.DB.(*postgres.DB); ok {
		// Jobs go in through the store's pool, River's own is for River.
		d.Pool = pg.Pool()
	}
	return d
}

type nodeClients struct{ a *App }

func (c nodeClients) Client(ctx context.Context) (*river.Client[pgx.Tx], error) {
	return c.a.Node.Client(ctx)
}

// writable says, in words, why dir cannot hold new files, or nil when it
// can: it creates dir if need be, then a file in it, which it removes.
func writable(dir string) error {
	words := func(err error) error {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			return fmt.Errorf("cannot be written (%w)", pe.Err)
		}
		return fmt.Errorf("cannot be written (%w)", err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return words(err)
	}
	f, err := os.CreateTemp(dir, ".cadre-write-probe-")
	if err != nil {
		return words(err)
	}
	f.Close()
	return os.Remove(f.Name())
}
