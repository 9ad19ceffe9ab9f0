package anthropic

import (
	"encoding/json"
	"testing"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/packages/param"

	"github.com/cadre-dev/cadre/internal/provider/providertest"
	"github.com/cadre-dev/cadre/llm"
)

// TestRequestBodyGolden pins the body a request becomes and that a tool
// set is encoded once (providertest.RequestBody).
func TestRequestBodyGolden(t *testing.T) {
	m, err := New(Config{Model: "claude-test", APIKey: "k"})
	if err != nil {
		t.Fatal(err)
	}
	providertest.RequestBody(t, m.params, func(p sdk.MessageNewParams) any { return &p.Tools[0] })
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
