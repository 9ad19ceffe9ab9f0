package openai

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/cadre-dev/cadre/internal/provider/providertest"
	"github.com/cadre-dev/cadre/internal/testkit/golden"
)

// TestRequestBody pins the body a request becomes, tool definitions
// included, on the first request of a tool set and on the next ones, which
// reuse its encoding.
func TestRequestBodyGolden(t *testing.T) {
	m, err := New(Config{Model: "gpt-test", APIKey: "k"})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"first", "again"} {
		t.Run(name, func(t *testing.T) {
			p, err := m.params(providertest.Request())
			if err != nil {
				t.Fatal(err)
			}
			body, err := json.MarshalIndent(p, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			golden.Check(t, filepath.Join("testdata", "request_body.json"), body)
		})
	}
}

// TestToolSetEncodedOnce: the requests of one tool set (built anew each
// time, as the loop does) share the set's encoding.
func TestToolSetEncodedOnce(t *testing.T) {
	m, err := New(Config{Model: "gpt-test", APIKey: "k"})
	if err != nil {
		t.Fatal(err)
	}
	first, err := m.params(providertest.Request())
	if err != nil {
		t.Fatal(err)
	}
	next, err := m.params(providertest.Request())
	if err != nil {
		t.Fatal(err)
	}
	if &first.Tools[0] != &next.Tools[0] {
		t.Error("the second request of one tool set encoded the set again")
	}
}
