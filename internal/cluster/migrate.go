package cluster

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"
)

// riverMigrationLock is the key of the advisory lock that serialises
// River's migrations between nodes (the bytes of "cadreriv"). It differs
// from the store's own migration lock, so the two never wait on each
// other.
const riverMigrationLock int64 = 0x6361647265726976

// migrateRiver brings River's schema up to date. rivermigrate applies each
// version in a transaction of its own and takes no lock, so two nodes
// starting at once on a fresh database would both try to create River's
// tables. One connection holds a transaction advisory lock while the
// migrator works on others: a second node waits at the lock, then finds
// every version applied. The lock ends with the transaction, which is
// rolled back (it changed nothing), or with the connection if the process
// dies.
func migrateRiver(ctx context.Context, pool *pgxpool.Pool, log *slog.Logger) error {
	tx, err := pool.Begin(ctx)
	if err != nil {
		return fmt.Errorf("migrate River: %w", err)
	}
	// After the commit it fails by design; before, the connection ends
	// the transaction anyway.
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, riverMigrationLock); err != nil {
		return fmt.Errorf("migrate River: take the migration lock: %w", err)
	}
	m, err := rivermigrate.New(riverpgxv5.New(pool), &rivermigrate.Config{Logger: log})
	if err != nil {
		return fmt.Errorf("migrate River: %w", err)
	}
	res, err := m.Migrate(ctx, rivermigrate.DirectionUp, nil)
	if err != nil {
		return fmt.Errorf("migrate River: %w", err)
	}
	if len(res.Versions) > 0 {
		log.InfoContext(ctx, "migrated River's schema", "versions", len(res.Versions))
	}
	return nil
}
