package openai

import (
	"testing"

	"github.com/cadre-dev/cadre/internal/provider/providertest"
)

// BenchmarkRequestBody: see providertest.BenchRequestBody.
func BenchmarkRequestBody(b *testing.B) {
	m, err := New(Config{Model: "gpt-test", APIKey: "k"})
	if err != nil {
		b.Fatal(err)
	}
	providertest.BenchRequestBody(b, m.params)
}
