package postgres

import (
	"testing"

	"github.com/cadre-dev/cadre/internal/tasklist"
	"github.com/cadre-dev/cadre/internal/tasklist/tasklisttest"
)

// Two handles of one database are two nodes, each with its own pool: the
// claimers race across them.
func TestTaskListConformance(t *testing.T) {
	tasklisttest.Run(t, func(t *testing.T) []tasklist.Store {
		url := pg.URL(t)
		return []tasklist.Store{open(t, url), open(t, url)}
	})
}

// 8 teammates through 200 dependent tasks on one PostgreSQL database,
// over two handles with pools of their own (two nodes). Every list read
// is one round trip, every update two (rmw).
func BenchmarkTeamWork(b *testing.B) {
	url := pg.URL(b)
	tasklisttest.Bench(b, []tasklist.Store{open(b, url), open(b, url)})
}
