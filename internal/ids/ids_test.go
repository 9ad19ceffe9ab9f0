package ids

import (
	"errors"
	"strings"
	"testing"
)

func TestCheck(t *testing.T) {
	bad := errors.New("invalid thing")
	for _, tc := range []struct {
		id, want string
	}{
		{"01a200f0-8646-73b5_x", ""},
		{strings.Repeat("a", MaxLen), ""},
		{"", "it is empty"},
		{strings.Repeat("a", MaxLen+1), "129 characters long"},
		{"../x", `found '.' at byte 0`},
		{"a/b", `found '/' at byte 1`},
		{"é", `found 'é'`},
	} {
		err := Check(tc.id, bad)
		if tc.want == "" {
			if err != nil {
				t.Errorf("Check(%q) = %v", tc.id, err)
			}
			continue
		}
		if !errors.Is(err, bad) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Check(%q) = %v, want it to wrap the sentinel and say %q", tc.id, err, tc.want)
		}
	}
}

func TestDeriveIsStableAndSeparatesNamespaces(t *testing.T) {
	a, b := Derive("a2a-context", "chat-1"), Derive("a2a-context", "chat-1")
	if a != b || len(a) != 36 {
		t.Errorf("%q, %q: want one 36-character id", a, b)
	}
	if Derive("a2a-context", "chat-2") == a || Derive("other", "chat-1") == a {
		t.Error("different names or namespaces gave the same id")
	}
	if err := Check(a, errors.New("bad")); err != nil {
		t.Error(err)
	}
}
