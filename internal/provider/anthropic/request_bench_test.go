package anthropic

import (
	"encoding/json"
	"testing"

	"github.com/cadre-dev/cadre/internal/provider/providertest"
)

// BenchmarkRequestBody is the adapter's cost of turning one request into
// the body sent: mapping it onto the SDK's params and the SDK encoding
// them, twelve tool definitions included.
func BenchmarkRequestBody(b *testing.B) {
	m, err := New(Config{Model: "claude-test", APIKey: "k"})
	if err != nil {
		b.Fatal(err)
	}
	req := providertest.Request()
	b.ReportAllocs()
	for b.Loop() {
		p, err := m.params(req)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := json.Marshal(p); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkToolParams is the first request of a tool set: encoding the
// twelve definitions, which later requests reuse.
func BenchmarkToolParams(b *testing.B) {
	specs := providertest.Request().Tools
	b.ReportAllocs()
	for b.Loop() {
		if _, err := toolParams(specs); err != nil {
			b.Fatal(err)
		}
	}
}
