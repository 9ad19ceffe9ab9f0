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
