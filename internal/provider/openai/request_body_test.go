package openai

import (
	"testing"

	"github.com/openai/openai-go/v3"

	"github.com/cadre-dev/cadre/internal/provider/providertest"
)

// TestRequestBodyGolden pins the body a request becomes and that a tool
// set is encoded once (providertest.RequestBody).
func TestRequestBodyGolden(t *testing.T) {
	m, err := New(Config{Model: "gpt-test", APIKey: "k"})
	if err != nil {
		t.Fatal(err)
	}
	providertest.RequestBody(t, m.params, func(p openai.ChatCompletionNewParams) any { return &p.Tools[0] })
}
