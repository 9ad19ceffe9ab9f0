package anthropic

import (
	"encoding/json"
	"path/filepath"
	"testing"

	sdk "github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/packages/param"

	"github.com/cadre-dev/cadre/internal/provider/providertest"
	"github.com/cadre-dev/cadre/internal/testkit/golden"
	"github.com/cadre-dev/cadre/llm"
)

// TestRequestBody pins the body a request becomes, tool definitions
// included, on the first request of a tool set and on the next ones, which
// reuse its encoding.
func TestRequestBodyGolden(t *testing.T) {
	m, err := New(Config{Model: "claude-test", APIKey: "k"})
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
	m, err := New(Config{Model: "claude-test", APIKey: "k"})
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

// TestToolDefEncodesAsTheSDK holds cadre's encoding of a tool definition to
// the SDK's own, on what the golden body does not show: no description, no
// schema, characters encoding/json escapes.
func TestToolDefEncodesAsTheSDK(t *testing.T) {
	specs := []llm.ToolSpec{
		{Name: "Plain", InputSchema: json.RawMessage(`{"type":"object"}`)},
		{Name: "NoSchema", Description: "Has none."},
		{Name: "Marks", Description: "Use <tags> & \"quotes\" \u2028 here.", InputSchema: json.RawMessage(`{ "type": "object", "description": "a <b> & c" }`)},
		{Name: "Last", Description: "Carries the cache breakpoint."},
	}
	got, err := toolParams(specs)
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range specs {
		schema := s.InputSchema
		if len(schema) == 0 {
			schema = json.RawMessage(`{"type":"object"}`)
		}
		tp := &sdk.ToolParam{Name: s.Name, InputSchema: param.Override[sdk.ToolInputSchemaParam](schema)}
		if s.Description != "" {
			tp.Description = param.NewOpt(s.Description)
		}
		if i == len(specs)-1 {
			tp.CacheControl = sdk.NewCacheControlEphemeralParam()
		}
		want, err := json.Marshal(sdk.ToolUnionParam{OfTool: tp})
		if err != nil {
			t.Fatal(err)
		}
		if g, err := json.Marshal(got[i]); err != nil || string(g) != string(want) {
			t.Errorf("%s: cadre encodes %s (%v), the SDK %s", s.Name, g, err, want)
		}
	}
}
