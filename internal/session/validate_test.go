package session_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/cadre-dev/cadre/internal/session"
)

func TestValidateID(t *testing.T) {
	tests := []struct {
		id      string
		wantErr string // substring of the error; "" means valid
	}{
		{"0192f0c3-7a4e-7b9c-8d2e-3f4a5b6c7d8e", ""},
		{"sub-abc_DEF-123", ""},
		{"a", ""},
		{strings.Repeat("x", 128), ""},
		{"", `invalid session id "": it is empty`},
		{"../x", `invalid session id "../x": only letters, digits, '_' and '-' are allowed`},
		{"a/b", `invalid session id "a/b"`},
		{`a\b`, `invalid session id "a\\b"`},
		{"..", `invalid session id ".."`},
		{"x.jsonl", `invalid session id "x.jsonl"`},
		{"/etc/passwd", `invalid session id "/etc/passwd"`},
		{"has space", `invalid session id "has space"`},
		{"nul\x00byte", `invalid session id`},
		{"ünïcode", `invalid session id`},
		{strings.Repeat("x", 129), "129 characters long, the limit is 128"},
	}
	for _, tt := range tests {
		t.Run(tt.id, func(t *testing.T) {
			err := session.ValidateID(tt.id)
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("ValidateID(%q) = %v, want nil", tt.id, err)
			case tt.wantErr == "":
			case err == nil:
				t.Fatalf("ValidateID(%q) = nil, want an error containing %q", tt.id, tt.wantErr)
			case !strings.Contains(err.Error(), tt.wantErr):
				t.Fatalf("ValidateID(%q) = %q, want it to contain %q", tt.id, err, tt.wantErr)
			case !errors.Is(err, session.ErrInvalidID):
				t.Fatalf("ValidateID(%q) = %v, want it to wrap ErrInvalidID", tt.id, err)
			}
		})
	}
}
