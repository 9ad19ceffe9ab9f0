package anthropic

import (
	"strings"
	"testing"

	"github.com/cadre-dev/cadre/internal/provider/guard"
	"github.com/cadre-dev/cadre/internal/provider/providertest"
	"github.com/cadre-dev/cadre/internal/testkit"
	"github.com/cadre-dev/cadre/llm"
)

func TestLimits(t *testing.T) {
	providertest.TestLimits(t, providertest.Adapter{
		New: func(t testing.TB, h testkit.Handler, l guard.Limits) llm.Model {
			srv := testkit.NewAnthropic(t, h)
			m, err := New(Config{Model: "claude-test", APIKey: "k", BaseURL: srv.URL, Getenv: env(nil), Limits: l})
			if err != nil {
				t.Fatalf("New: %v", err)
			}
			return m
		},
		AfterHeader: 1, // message_start
		AfterDeltas: 4,
	})
}

// BenchmarkLargeReply streams a long text reply, in deltas of 64 bytes,
// from memory through the adapter: the time per byte must not grow with
// the reply's size.
func BenchmarkLargeReply(b *testing.B) {
	for _, size := range []int{1 << 20, 10 << 20} {
		b.Run(guard.Size(int64(size)), func(b *testing.B) {
			srv := testkit.NewAnthropic(b, testkit.Queue(testkit.Reply{Text: strings.Repeat("x", size), DeltaSize: 64}))
			client := testkit.Canned(b, srv.URL+"/v1/messages", `{"model":"claude-test","stream":true,"max_tokens":10,"messages":[]}`)
			m, err := New(Config{Model: "claude-test", APIKey: "k", BaseURL: srv.URL, Getenv: env(nil), HTTPClient: client, Limits: guard.Limits{MaxReplyBytes: 1 << 30}})
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(size))
			for b.Loop() {
				if _, err := run(b.Context(), m, hello()); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
