package task_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/cadre-dev/cadre/internal/task"
)

func TestStatus(t *testing.T) {
	tests := []struct {
		s               task.Status
		valid, terminal bool
	}{
		{task.StatusPending, true, false},
		{task.StatusRunning, true, false},
		{task.StatusCompleted, true, true},
		{task.StatusFailed, true, true},
		{task.StatusKilled, true, true},
		{task.StatusTimeout, true, true},
		{"", false, false},
		{"cancelled", false, false},
		{"Completed", false, false},
	}
	for _, tt := range tests {
		if got := tt.s.Valid(); got != tt.valid {
			t.Errorf("Status(%q).Valid() = %v, want %v", tt.s, got, tt.valid)
		}
		if got := tt.s.Terminal(); got != tt.terminal {
			t.Errorf("Status(%q).Terminal() = %v, want %v", tt.s, got, tt.terminal)
		}
	}
}

func TestKind(t *testing.T) {
	for k, want := range map[task.Kind]bool{
		task.KindLocalAgent: true, task.KindLocalBash: true, task.KindRemoteAgent: true,
		"": false, "local": false, "LOCAL_AGENT": false,
	} {
		if got := k.Valid(); got != want {
			t.Errorf("Kind(%q).Valid() = %v, want %v", k, got, want)
		}
	}
}

func TestValidateID(t *testing.T) {
	tests := []struct {
		id      string
		wantErr string // substring of the error; "" means valid
	}{
		{"0192f0c3-7a4e-7b9c-8d2e-3f4a5b6c7d8e", ""},
		{"agent_abc-DEF-123", ""},
		{"a", ""},
		{strings.Repeat("x", 128), ""},
		{"", `invalid task id "": it is empty`},
		{"../x", `invalid task id "../x": only letters, digits, '_' and '-' are allowed`},
		{"a/b", `invalid task id "a/b"`},
		{`a\b`, `invalid task id "a\\b"`},
		{"..", `invalid task id ".."`},
		{"x.lock", `invalid task id "x.lock"`},
		{"/etc/passwd", `invalid task id "/etc/passwd"`},
		{"has space", `invalid task id "has space"`},
		{"nul\x00byte", `invalid task id`},
		{"ünïcode", `invalid task id`},
		{strings.Repeat("x", 129), "129 characters long, the limit is 128"},
	}
	for _, tt := range tests {
		t.Run(tt.id, func(t *testing.T) {
			err := task.ValidateID(tt.id)
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("ValidateID(%q) = %v, want nil", tt.id, err)
			case tt.wantErr == "":
			case err == nil:
				t.Fatalf("ValidateID(%q) = nil, want an error containing %q", tt.id, tt.wantErr)
			case !strings.Contains(err.Error(), tt.wantErr):
				t.Fatalf("ValidateID(%q) = %q, want it to contain %q", tt.id, err, tt.wantErr)
			case !errors.Is(err, task.ErrInvalidID):
				t.Fatalf("ValidateID(%q) = %v, want it to wrap ErrInvalidID", tt.id, err)
			}
		})
	}
}

// TestMemReturnsCopies: a caller editing a record it got back must not
// change the store behind UpdateTask's lock.
func TestMemReturnsCopies(t *testing.T) {
	m := task.NewMem()
	if err := m.CreateTask(t.Context(), task.Task{ID: "t1", Kind: task.KindLocalAgent, Status: task.StatusRunning}); err != nil {
		t.Fatal(err)
	}
	got, _ := m.GetTask(t.Context(), "t1")
	got.Status = task.StatusKilled
	list, _ := m.ListTasks(t.Context(), task.Filter{})
	list[0].Result = "changed"
	again, _ := m.GetTask(t.Context(), "t1")
	if again.Status != task.StatusRunning || again.Result != "" {
		t.Errorf("editing returned records changed the store: %+v", again)
	}
}
