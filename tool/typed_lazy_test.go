package tool

import (
	"context"
	"encoding/json"
	"testing"
)

// TestTypedResolvesOnFirstValidation: offering a tool (Info, for its spec)
// does not compile its schema for validation; the first validation does,
// once, for the tool and every variant made With it.
func TestTypedResolvesOnFirstValidation(t *testing.T) {
	type in struct {
		Path string `json:"path"`
	}
	run := func(context.Context, Env, in) (Result, error) { return Text("ok"), nil }
	base := New(Info{Name: "Read"}, run)
	variant := base.With(Info{Name: "Read", Description: "for one session"}, run)
	if len(base.Info().InputSchema) == 0 || len(variant.Info().InputSchema) == 0 {
		t.Fatal("no schema in Info")
	}
	if base.resolved != nil {
		t.Fatal("Info resolved the schema")
	}
	if err := variant.ValidateInput(json.RawMessage(`{"path":"a"}`)); err != nil {
		t.Fatal(err)
	}
	if err := variant.ValidateInput(json.RawMessage(`{"path":1}`)); err == nil {
		t.Error("a number passed as a path")
	}
	if base.resolved == nil || variant.resolved != nil {
		t.Error("the variant did not share the base tool's resolved schema")
	}
}
