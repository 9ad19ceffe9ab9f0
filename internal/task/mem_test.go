package task_test

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/cadre-dev/cadre/internal/task"
	"github.com/cadre-dev/cadre/internal/task/tasktest"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

func TestMemConformance(t *testing.T) {
	tasktest.Run(t, func(t *testing.T) task.Store { return task.NewMem() })
}
