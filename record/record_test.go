package record

import "testing"

func TestStatuses(t *testing.T) {
	for _, tc := range []struct {
		s               TaskStatus
		terminal, valid bool
	}{
		{TaskPending, false, true}, {TaskRunning, false, true},
		{TaskCompleted, true, true}, {TaskFailed, true, true}, {TaskKilled, true, true}, {TaskTimeout, true, true},
		{"stopped", false, false}, {"", false, false},
	} {
		if got := tc.s.Terminal(); got != tc.terminal {
			t.Errorf("%q.Terminal() = %v, want %v", tc.s, got, tc.terminal)
		}
		if got := tc.s.Valid(); got != tc.valid {
			t.Errorf("%q.Valid() = %v, want %v", tc.s, got, tc.valid)
		}
	}
	for _, k := range []TaskKind{TaskLocalAgent, TaskLocalBash, TaskRemoteAgent} {
		if !k.Valid() {
			t.Errorf("%q.Valid() = false", k)
		}
	}
	if TaskKind("cron").Valid() {
		t.Error(`"cron" is a valid kind`)
	}
	for _, s := range []SessionStatus{SessionRunning, SessionIdle, SessionCompleted, SessionFailed, SessionKilled} {
		if !s.Valid() {
			t.Errorf("%q.Valid() = false", s)
		}
	}
	if SessionStatus("paused").Valid() {
		t.Error(`"paused" is a valid session status`)
	}
}
