package session_test

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/cadre-dev/cadre/internal/session"
	"github.com/cadre-dev/cadre/internal/session/sessiontest"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

func TestMemConformance(t *testing.T) {
	sessiontest.Run(t, func(t *testing.T) session.Index { return session.NewMem() })
}
