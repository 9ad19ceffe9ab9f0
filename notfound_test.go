package cadre_test

import (
	"context"
	"errors"
	"testing"

	"github.com/cadre-dev/cadre"
)

// Front ends (the server's 404) tell "there is no such thing" from a
// failure by ErrNotFound: resuming an unknown session and stopping an
// unknown task say so.
func TestUnknownSessionAndTaskAreErrNotFound(t *testing.T) {
	f := newFixture(t)
	rt := f.open(t, cadre.Options{})
	const id = "0199a0b4-0000-7000-8000-000000000000"
	if _, err := rt.Open(context.Background(), cadre.OpenRequest{Resume: id}); !errors.Is(err, cadre.ErrNotFound) {
		t.Errorf("Open resuming an unknown session: %v, want ErrNotFound", err)
	}
	if _, err := rt.StopTask(context.Background(), id); !errors.Is(err, cadre.ErrNotFound) {
		t.Errorf("StopTask of an unknown task: %v, want ErrNotFound", err)
	}
}
