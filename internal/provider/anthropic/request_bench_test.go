package anthropic

import (
	"testing"

	"github.com/cadre-dev/cadre/internal/provider/providertest"
)

// BenchmarkRequestBody: see providertest.BenchRequestBody.
func BenchmarkRequestBody(b *testing.B) {
	m, err := New(Config{Model: "claude-test", APIKey: "k"})
	if err != nil {
		b.Fatal(err)
	}
	providertest.BenchRequestBody(b, m.params)
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
