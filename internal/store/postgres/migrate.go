package postgres

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"slices"
	"strconv"
	"sync"

	"github.com/jackc/pgx/v5"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// migrationLock is the key of the transaction advisory lock that serialises
// migrations: any constant of cadre's own (the bytes of "cadremig").
// Advisory locks are per database, so other databases on the server are not
// held up.
const migrationLock int64 = 0x636164726d6967

// migration is one schema step, from migrations/NNNN_name.sql.
type migration struct {
	version int
	name    string
	sql     string
}

// migrationName is compiled on first use, not when every cadre command
// starts (bench/initcost_test.go).
var migrationName = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^(\d{4})_([a-z0-9_]+)\.sql$`)
})

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
		m := migrationName().FindStringSubmatch(base)
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

// migrate applies the migrations newer than the database's schema version,
// all in one transaction that holds the advisory lock from its start: a
// second node starting at once waits at the lock, then reads the version
// the first committed and applies nothing. DDL is transactional in
// PostgreSQL, so a failing migration leaves the schema as it was.
func (db *DB) migrate(ctx context.Context, ms []migration) error {
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
			if _, err := tx.Exec(ctx, m.sql); err != nil {
				return fmt.Errorf("migration %04d_%s: %w", m.version, m.name, err)
			}
			if _, err := tx.Exec(ctx, `INSERT INTO cadre_schema_version (version, name) VALUES ($1, $2)`, m.version, m.name); err != nil {
				return fmt.Errorf("migration %04d_%s: record version: %w", m.version, m.name, err)
			}
		}
		return nil
	})
}
