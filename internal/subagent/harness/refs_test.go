package harness

import "testing"

// TestHarnessRefs covers the id forms harnessRef undoes.
func TestHarnessRefs(t *testing.T) {
	tests := []struct{ in, id, typ string }{
		{"task_abc", "abc", ""},
		{"sub-abc", "abc", ""},
		{"agent:rev:abc", "abc", "rev"},
		{"agent:rev:subagent:abc", "abc", "rev"},
		{"  abc ", "abc", ""},
		{"agent:rev:x:abc", "agent:rev:x:abc", ""},
	}
	for _, tt := range tests {
		id, typ, _ := harnessRef(tt.in)
		if id != tt.id || typ != tt.typ {
			t.Errorf("harnessRef(%q) = %q, %q; want %q, %q", tt.in, id, typ, tt.id, tt.typ)
		}
	}
}
