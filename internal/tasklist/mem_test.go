package tasklist_test

import (
	"testing"

	"github.com/cadre-dev/cadre/internal/tasklist"
	"github.com/cadre-dev/cadre/internal/tasklist/tasklisttest"
)

func TestMemConformance(t *testing.T) {
	tasklisttest.Run(t, func(t *testing.T) []tasklist.Store { return []tasklist.Store{tasklist.NewMem()} })
}

// 8 teammates through 200 dependent tasks, in memory.
func BenchmarkTeamWork(b *testing.B) {
	tasklisttest.Bench(b, []tasklist.Store{tasklist.NewMem()})
}
