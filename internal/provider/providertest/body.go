package providertest

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/cadre-dev/cadre/internal/testkit/golden"
	"github.com/cadre-dev/cadre/llm"
)

// RequestBody pins the body an adapter's params make of Request, tool
// definitions included, against testdata/request_body.json, on a tool
// set's first request and on the next one, and checks that the next reuses
// the set's encoding (the loop builds each request anew, so only a
// per-process encoding can be shared): firstTool returns the address of a
// params value's first tool definition.
func RequestBody[P any](t *testing.T, params func(*llm.Request) (P, error), firstTool func(P) any) {
	t.Helper()
	var seen []any
	for _, name := range []string{"first", "again"} {
		t.Run(name, func(t *testing.T) {
			p, err := params(Request())
			if err != nil {
				t.Fatal(err)
			}
			seen = append(seen, firstTool(p))
			body, err := json.MarshalIndent(p, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			golden.Check(t, filepath.Join("testdata", "request_body.json"), body)
		})
	}
	if len(seen) == 2 && seen[0] != seen[1] {
		t.Error("the second request of one tool set encoded the set again")
	}
}

// BenchRequestBody is an adapter's cost of turning Request into the body
// sent: mapping it onto the SDK's params and the SDK encoding them.
func BenchRequestBody[P any](b *testing.B, params func(*llm.Request) (P, error)) {
	req := Request()
	b.ReportAllocs()
	for b.Loop() {
		p, err := params(req)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := json.Marshal(p); err != nil {
			b.Fatal(err)
		}
	}
}
