package main

import (
	"strings"
	"sync/atomic"
	"testing"

	"github.com/cadre-dev/cadre/internal/testkit"
)

// A model call that is retried is announced on stream-json as Claude
// Code's api_retry line, before the answer of the retry: the attempt, the
// limit, the wait, and the error's status and kind.
func TestStreamJSONAPIRetry(t *testing.T) {
	var calls atomic.Int32
	e, _ := anthropicEnv(t, func(req testkit.Request) testkit.Reply {
		if calls.Add(1) == 1 {
			return testkit.Reply{Status: 529, Header: map[string]string{"retry-after": "1"}}
		}
		return testkit.Reply{Text: "Recovered."}
	})
	p := ok(t, e.run("", "-p", "Are you up?", "--model", sonnet, "--output-format", "stream-json", "--verbose"))
	var retry map[string]any
	retryAt, answerAt := -1, -1
	for i, l := range lines(t, p.stdout) {
		if l["type"] == "system" && l["subtype"] == "api_retry" {
			retry, retryAt = l, i
		}
		if l["type"] == "assistant" && strings.Contains(p.stdout, "Recovered.") && answerAt < 0 {
			answerAt = i
		}
	}
	if retry == nil {
		t.Fatalf("no api_retry line:\n%s", p.stdout)
	}
	want := map[string]any{"attempt": 1.0, "max_retries": 4.0, "retry_delay_ms": 1000.0, "error_status": 529.0, "error": "overloaded"}
	for k, v := range want {
		if retry[k] != v {
			t.Errorf("api_retry %s = %v, want %v: %v", k, retry[k], v, retry)
		}
	}
	if id, _ := retry["session_id"].(string); id == "" {
		t.Errorf("api_retry has no session_id: %v", retry)
	}
	if answerAt < retryAt {
		t.Errorf("the api_retry line (%d) does not come before the answer (%d):\n%s", retryAt, answerAt, p.stdout)
	}
}
