package sqlite

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"slices"
	"strconv"
	"time"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// migration is one schema step, from migrations/NNNN_name.sql.
type migration struct {
	version int
	name    string
	sql     string
}

var migrationName = regexp.MustCompile(`^(\d{4})_([a-z0-9_]+)\.sql$`)

// loadMigrations reads the migrations in fsys's migrations/ folder and checks
// that they are numbered 1, 2, 3... without gaps or repeats.
func loadMigrations(fsys fs.FS) ([]migration, error) {
	names, err := fs.Glob(fsys, "migrations/*.sql")
	if err != nil {
		return nil, fmt.Errorf("list migrations: %w", err)
	}
	var ms []migration
	for _, name := range names {
		base := path.Base(name)
		m := migrationName.FindStringSubmatch(base)
		if m == nil {
			return nil, fmt.Errorf("migration %s: name must look like 0001_some_name.sql", base)
		}
		text, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, fmt.Errorf("migration %s: %w", base, err)
		}
		v, _ := strconv.Atoi(m[1])
		ms = append(ms, migration{version: v, name: m[2], sql: string(text)})
	}
	slices.SortFunc(ms, func(a, b migration) int { return a.version - b.version })
	for i, m := range ms {
		if m.version != i+1 {
			return nil, fmt.Errorf("migration %04d_%s: expected version %d (versions must run 1, 2, 3... without gaps or repeats)", m.version, m.name, i+1)
		}
	}
	return ms, nil
}

// migrate applies the migrations newer than the database's schema version.
// All of it runs in one IMMEDIATE transaction, which holds the write lock
// from the start: when two processes open a fresh database at once, the
// second waits, then reads the version the first wrote and applies nothing.
func (db *DB) migrate(ctx context.Context, ms []migration) error {
	tx, err := db.w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	defer tx.Rollback()

	_, err = tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_version (
		version    INTEGER PRIMARY KEY,
		name       TEXT    NOT NULL,
		applied_ms INTEGER NOT NULL
	) STRICT`)
	if err != nil {
		return fmt.Errorf("migrate: create schema_version: %w", err)
	}
	var current int
	if err := tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_version`).Scan(&current); err != nil {
		return fmt.Errorf("migrate: read schema version: %w", err)
	}
	if current > len(ms) {
		return fmt.Errorf("the database schema is at version %d but this cadre knows only up to %d: use a newer cadre", current, len(ms))
	}
	if current == len(ms) {
		return nil // nothing to do; the rollback releases the lock
	}
	for _, m := range ms[current:] {
		if _, err := tx.ExecContext(ctx, m.sql); err != nil {
			return fmt.Errorf("migration %04d_%s: %w", m.version, m.name, err)
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO schema_version (version, name, applied_ms) VALUES (?, ?, ?)`,
			m.version, m.name, time.Now().UnixMilli())
		if err != nil {
			return fmt.Errorf("migration %04d_%s: record version: %w", m.version, m.name, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("migrate: commit: %w", err)
	}
	return nil
}
