package sqlite

import (
	"context"
	"embed"
	"fmt"
	"time"

	"github.com/cadre-dev/cadre/internal/store/migration"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// migrate applies the migrations newer than the database's schema version.
// All of it runs in one IMMEDIATE transaction, which holds the write lock
// from the start: when two processes open a fresh database at once, the
// second waits, then reads the version the first wrote and applies nothing.
func (db *DB) migrate(ctx context.Context, ms []migration.Step) error {
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
		if _, err := tx.ExecContext(ctx, m.SQL); err != nil {
			return fmt.Errorf("migration %04d_%s: %w", m.Version, m.Name, err)
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO schema_version (version, name, applied_ms) VALUES (?, ?, ?)`,
			m.Version, m.Name, time.Now().UnixMilli())
		if err != nil {
			return fmt.Errorf("migration %04d_%s: record version: %w", m.Version, m.Name, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("migrate: commit: %w", err)
	}
	return nil
}
