package postgres

import (
	"context"
	"embed"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/cadre-dev/cadre/internal/store/migration"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// migrationLock is the key of the transaction advisory lock that serialises
// migrations: any constant of cadre's own (the bytes of "cadremig").
// Advisory locks are per database, so other databases on the server are not
// held up.
const migrationLock int64 = 0x636164726d6967

// migrate applies the migrations newer than the database's schema version,
// all in one transaction that holds the advisory lock from its start: a
// second node starting at once waits at the lock, then reads the version
// the first committed and applies nothing. DDL is transactional in
// PostgreSQL, so a failing migration leaves the schema as it was.
func (db *DB) migrate(ctx context.Context, ms []migration.Step) error {
	return db.inTx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, migrationLock); err != nil {
			return fmt.Errorf("migrate: take the migration lock: %w", err)
		}
		_, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS cadre_schema_version (
			version    INTEGER     PRIMARY KEY,
			name       TEXT        NOT NULL,
			applied_at TIMESTAMPTZ NOT NULL DEFAULT now()
		)`)
		if err != nil {
			return fmt.Errorf("migrate: create cadre_schema_version: %w", err)
		}
		var current int
		if err := tx.QueryRow(ctx, `SELECT COALESCE(MAX(version), 0) FROM cadre_schema_version`).Scan(&current); err != nil {
			return fmt.Errorf("migrate: read schema version: %w", err)
		}
		if current > len(ms) {
			return fmt.Errorf("the database schema is at version %d but this cadre knows only up to %d: use a newer cadre", current, len(ms))
		}
		for _, m := range ms[current:] {
			if _, err := tx.Exec(ctx, m.SQL); err != nil {
				return fmt.Errorf("migration %04d_%s: %w", m.Version, m.Name, err)
			}
			if _, err := tx.Exec(ctx, `INSERT INTO cadre_schema_version (version, name) VALUES ($1, $2)`, m.Version, m.Name); err != nil {
				return fmt.Errorf("migration %04d_%s: record version: %w", m.Version, m.Name, err)
			}
		}
		return nil
	})
}
