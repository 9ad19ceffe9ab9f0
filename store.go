package cadre

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/cadre-dev/cadre/internal/session"
	"github.com/cadre-dev/cadre/internal/store/postgres"
	"github.com/cadre-dev/cadre/internal/store/sqlite"
	"github.com/cadre-dev/cadre/internal/task"
)

// recordStore holds a runtime's session index and task records: the
// embedded SQLite file, or a PostgreSQL database several processes share.
// Both write a child's session and task records together (the joint
// writes the subagent service looks for).
type recordStore interface {
	session.Index
	task.Store
	CreateSessionTask(ctx context.Context, s session.Info, t task.Task) error
	UpdateSessionTask(ctx context.Context, sessionID string, sfn func(*session.Info) error, taskID string, tfn func(*task.Task) error) (task.Task, error)
	Close() error
}

// openStore opens the store that CADRE_STORE_URL, or else the settings'
// store.url, names: a PostgreSQL URL, or nothing for the SQLite file
// cadre.db under home (which PostgreSQL mode never creates). A URL that
// cannot be used is an error naming where it came from.
func openStore(ctx context.Context, home, settingsURL string, getenv func(string) string) (recordStore, error) {
	url, from := getenv("CADRE_STORE_URL"), "CADRE_STORE_URL"
	if url == "" {
		url, from = settingsURL, "settings store.url"
	}
	if url == "" {
		db, err := sqlite.Open(ctx, filepath.Join(home, "cadre.db"))
		if err != nil {
			return nil, fmt.Errorf("open session store: %w", err)
		}
		return db, nil
	}
	db, err := postgres.Open(ctx, url)
	if err != nil {
		return nil, fmt.Errorf("open session store (%s): %w", from, err)
	}
	return db, nil
}
