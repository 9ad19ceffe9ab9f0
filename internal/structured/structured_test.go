package structured

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/cadre-dev/cadre/tool"
)

func TestNewChecksTheSchema(t *testing.T) {
	for _, tc := range []struct{ schema, err string }{
		{`{"type":"object","properties":{"a":{"type":"string"}}}`, ""},
		{`{"type":"string"}`, "object"},
		{`[1]`, "not valid JSON Schema"},
		{`{"type":"object","properties":{"a":{"$ref":"#/nope"}}}`, "cannot be used"},
	} {
		_, err := New(json.RawMessage(tc.schema))
		if (err == nil) != (tc.err == "") || err != nil && !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%s: err %v, want %q", tc.schema, err, tc.err)
		}
	}
}

// TestCallRemind: the call keeps the output and ends the turn; the
// reminder comes once, and never after the output was given.
func TestCallRemind(t *testing.T) {
	st, err := New(json.RawMessage(`{"type":"object"}`))
	if err != nil {
		t.Fatal(err)
	}
	if st.Remind() == nil || st.Remind() != nil {
		t.Error("want one reminder, then none")
	}
	st2, _ := New(json.RawMessage(`{"type":"object"}`))
	r, err := st2.Call(context.Background(), tool.Env{}, json.RawMessage(`{"a":1}`))
	if err != nil || !r.Stop || r.IsError {
		t.Errorf("call: %+v %v", r, err)
	}
	if string(st2.Output()) != `{"a":1}` || st2.Remind() != nil {
		t.Errorf("output %s", st2.Output())
	}
}
