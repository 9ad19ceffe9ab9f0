package routing

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/cadre-dev/cadre/internal/task"
)

// TestAddressee: a message names an agent of the run tree by the name it
// was given (the newest, when a name was reused), else by its id.
func TestAddressee(t *testing.T) {
	ctx := context.Background()
	tasks := task.NewMem()
	at := time.Date(2026, 11, 29, 8, 0, 0, 0, time.UTC)
	for i, r := range []task.Task{
		{ID: "a1", Name: "bob", RootSessionID: "root"},
		{ID: "a2", Name: "Bob", RootSessionID: "root"},
		{ID: "a3", Name: "carol", RootSessionID: "other"},
	} {
		r.Kind, r.Status, r.Created = task.KindLocalAgent, task.StatusRunning, at.Add(time.Duration(i)*time.Minute)
		if err := tasks.CreateTask(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	cases := []struct{ to, want, err string }{
		{"bob", "a2", ""},
		{" BOB ", "a2", ""},
		{"a1", "a1", ""},
		{"carol", "carol", ""}, // another tree's name is only an id here (InTree refuses it later)
		{"../etc", "", "invalid agent id"},
		{"", "", "to is empty"},
	}
	for _, c := range cases {
		got, err := Addressee(ctx, tasks, "root", c.to)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("Addressee(%q) = %q, %v; want an error with %q", c.to, got, err, c.err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("Addressee(%q) = %q, %v; want %q", c.to, got, err, c.want)
		}
	}
}
