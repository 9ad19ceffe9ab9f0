package sqlite

import (
	"path/filepath"
	"testing"

	"github.com/cadre-dev/cadre/internal/tasklist"
	"github.com/cadre-dev/cadre/internal/tasklist/tasklisttest"
)

// Two handles on one file are two processes as far as locking goes: the
// claimers race across them.
func TestTaskListConformance(t *testing.T) {
	tasklisttest.Run(t, func(t *testing.T) []tasklist.Store {
		path := filepath.Join(t.TempDir(), "cadre.db")
		return []tasklist.Store{open(t, path), open(t, path)}
	})
}

// 8 teammates through 200 dependent tasks on one SQLite file, over two
// handles (two processes' worth).
func BenchmarkTeamWork(b *testing.B) {
	path := filepath.Join(b.TempDir(), "cadre.db")
	tasklisttest.Bench(b, []tasklist.Store{open(b, path), open(b, path)})
}
