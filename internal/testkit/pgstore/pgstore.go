// Package pgstore opens cadre's PostgreSQL store for a test, on a database
// that pgtest made: a handle of the test's own, to set up or watch what
// the code under test records, closed when the test ends. (The store's own
// tests cannot use it: it imports the store.)
package pgstore

import (
	"testing"

	"github.com/cadre-dev/cadre/internal/store/postgres"
)

// Open opens the store at url (migrating it, as any process would) and
// closes it when t ends.
func Open(t testing.TB, url string) *postgres.DB {
	t.Helper()
	db, err := postgres.Open(t.Context(), url)
	if err != nil {
		t.Fatalf("open the PostgreSQL store: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}
