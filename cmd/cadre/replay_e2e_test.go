package main

import (
	"encoding/json"
	"testing"

	"github.com/cadre-dev/cadre/internal/testkit"
)

// --replay-user-messages echoes each user line on stdout in Claude Code's
// shape, before that turn's result; without the flag nothing is echoed.
func TestStreamInputReplayUserMessages(t *testing.T) {
	for _, replay := range []bool{true, false} {
		t.Run(map[bool]string{true: "on", false: "off"}[replay], func(t *testing.T) {
			srv := testkit.NewAnthropic(t, sdkScript)
			e := newEnv(t).set("ANTHROPIC_BASE_URL=" + srv.URL)
			args := streamArgs()
			if replay {
				args = append(args, "--replay-user-messages")
			}
			l := e.startPiped(args...)
			l.send(`{"type":"user","uuid":"7b0d3c52-2f7e-4f43-9a59-6c1f8f0c2a11","message":{"role":"user","content":[{"type":"text","text":"STREAM-ONE"}]},"parent_tool_use_id":null,"session_id":""}`)
			var echo map[string]any
			r := l.until("a result", func(m map[string]any) bool {
				if m["type"] == "user" && m["isReplay"] == true {
					if echo != nil {
						t.Errorf("a second echo: %v", m)
					}
					echo = m
				}
				return isResult(m)
			})
			l.user("STREAM-TWO")
			var echo2 map[string]any
			l.until("the second result", func(m map[string]any) bool {
				if m["type"] == "user" && m["isReplay"] == true {
					echo2 = m
				}
				return isResult(m)
			})
			if code, stderr := l.end(); code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			if !replay {
				if echo != nil || echo2 != nil {
					t.Fatalf("echoed without --replay-user-messages: %v %v", echo, echo2)
				}
				return
			}
			if echo == nil || echo2 == nil {
				t.Fatalf("user messages not echoed before their results: %v %v", echo, echo2)
			}
			msg, _ := json.Marshal(echo["message"])
			if string(msg) != `{"content":[{"text":"STREAM-ONE","type":"text"}],"role":"user"}` {
				t.Errorf("echoed message %s, want the content as sent", msg)
			}
			if echo["uuid"] != "7b0d3c52-2f7e-4f43-9a59-6c1f8f0c2a11" {
				t.Errorf("echo uuid %v, want the line's", echo["uuid"])
			}
			if v, ok := echo["parent_tool_use_id"]; !ok || v != nil {
				t.Errorf("parent_tool_use_id %v (present %v), want null", v, ok)
			}
			if echo["session_id"] != r["session_id"] || echo["timestamp"] == nil {
				t.Errorf("echo session %v timestamp %v; the result's session is %v", echo["session_id"], echo["timestamp"], r["session_id"])
			}
			if c, _ := echo2["message"].(map[string]any); c["content"] != "STREAM-TWO" || echo2["uuid"] == "" || echo2["uuid"] == nil {
				t.Errorf("second echo %v, want the string content and a new uuid", echo2)
			}
		})
	}
}
