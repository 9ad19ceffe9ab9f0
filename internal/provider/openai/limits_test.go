package openai_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/cadre-dev/cadre/internal/provider/guard"
	"github.com/cadre-dev/cadre/internal/provider/openai"
	"github.com/cadre-dev/cadre/internal/provider/providertest"
	"github.com/cadre-dev/cadre/internal/testkit"
	"github.com/cadre-dev/cadre/llm"
)

func TestLimits(t *testing.T) {
	providertest.TestLimits(t, providertest.Adapter{
		New: func(t testing.TB, h testkit.Handler, l guard.Limits) llm.Model {
			srv := testkit.NewOpenAI(t, h)
			c := &http.Client{Transport: &http.Transport{}}
			t.Cleanup(c.CloseIdleConnections)
			m, err := openai.New(openai.Config{Model: "test-model", BaseURL: srv.URL, Getenv: env(), HTTPClient: c, Limits: l})
			if err != nil {
				t.Fatalf("New: %v", err)
			}
			return m
		},
		AfterHeader: 1, // the role chunk
		AfterDeltas: 3,
	})
}

// BenchmarkLargeReply streams a long text reply, in deltas of 64 bytes,
// from memory through the adapter: the time per byte must not grow with
// the reply's size.
func BenchmarkLargeReply(b *testing.B) {
	for _, size := range []int{1 << 20, 10 << 20} {
		b.Run(guard.Size(int64(size)), func(b *testing.B) {
			srv := testkit.NewOpenAI(b, testkit.Queue(testkit.Reply{Text: strings.Repeat("x", size), DeltaSize: 64}))
			client := testkit.Canned(b, srv.URL+"/chat/completions", `{"model":"test-model","stream":true,"messages":[]}`)
			m, err := openai.New(openai.Config{Model: "test-model", BaseURL: srv.URL, Getenv: env(), HTTPClient: client, Limits: guard.Limits{MaxReplyBytes: 1 << 30}})
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(size))
			for b.Loop() {
				for _, err := range m.Stream(b.Context(), hello()) {
					if err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}
