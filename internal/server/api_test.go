package server

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/cadre-dev/cadre/internal/testkit"
)

func TestCheckAddr(t *testing.T) {
	for _, c := range []struct {
		addr, token string
		loopback    bool
		err         string
	}{
		{addr: "127.0.0.1:8420", loopback: true},
		{addr: "localhost:8420", loopback: true},
		{addr: "[::1]:8420", loopback: true},
		{addr: "127.0.0.2:0", loopback: true},
		{addr: "0.0.0.0:8420", err: "set a token with --token or CADRE_SERVE_TOKEN"},
		{addr: ":8420", err: "every interface"},
		{addr: "192.168.1.5:8420", err: "192.168.1.5"},
		{addr: "example.com:8420", err: "beyond this machine"},
		{addr: "0.0.0.0:8420", token: "s3cret"},
		{addr: "8420", err: "want host:port"},
		{addr: "127.0.0.1:", err: "the port is missing"},
	} {
		t.Run(c.addr+"/"+c.token, func(t *testing.T) {
			lb, err := CheckAddr(c.addr, c.token)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("CheckAddr(%q) = %v, want an error with %q", c.addr, err, c.err)
				}
				return
			}
			if err != nil || lb != c.loopback {
				t.Fatalf("CheckAddr(%q) = %v, %v; want %v", c.addr, lb, err, c.loopback)
			}
		})
	}
}

// Every route but the agent card needs the token; a wrong one, a missing
// one or another scheme is 401 with a JSON error.
func TestBearerAuth(t *testing.T) {
	card := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, `{"name":"cadre"}`) })
	a2a := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "a2a "+r.URL.Path) })
	f := newFixture(t, readThenAnswer, Config{Token: "s3cret", AgentCard: card, A2A: a2a})
	get := func(path string, header map[string]string) (int, string) {
		req, _ := http.NewRequest("GET", f.http.URL+path, nil)
		for k, v := range header {
			req.Header.Set(k, v)
		}
		resp, err := f.http.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var b strings.Builder
		fmt.Fprint(&b, resp.Header.Get("WWW-Authenticate"))
		buf := make([]byte, 4096)
		n, _ := resp.Body.Read(buf)
		return resp.StatusCode, string(buf[:n])
	}
	for _, c := range []struct {
		name, path string
		header     map[string]string
		want       int
	}{
		{"no token", "/api/sessions", nil, 401},
		{"wrong token", "/api/sessions", map[string]string{"Authorization": "Bearer nope"}, 401},
		{"a prefix of it", "/api/sessions", map[string]string{"Authorization": "Bearer s3cre"}, 401},
		{"basic scheme", "/api/sessions", map[string]string{"Authorization": "Basic s3cret"}, 401},
		{"right token", "/api/sessions", map[string]string{"Authorization": "Bearer s3cret"}, 200},
		{"query token (EventSource)", "/api/sessions?token=s3cret", nil, 200},
		{"web view's page without (it holds no data)", "/", nil, 200},
		{"web view with", "/?token=s3cret", nil, 200},
		{"a2a without", "/a2a/v1/message:send", nil, 401},
		{"a2a with", "/a2a/v1/message:send", map[string]string{"Authorization": "Bearer s3cret"}, 200},
		{"agent card without", "/.well-known/agent-card.json", nil, 200},
	} {
		t.Run(c.name, func(t *testing.T) {
			st, body := get(c.path, c.header)
			if st != c.want {
				t.Fatalf("GET %s: %d %s, want %d", c.path, st, body, c.want)
			}
			if st == 401 && !strings.Contains(body, `"error"`) {
				t.Errorf("401 body %q is not a JSON error", body)
			}
		})
	}
	if _, body := get("/a2a/v1/message:send", map[string]string{"Authorization": "Bearer s3cret"}); body != "a2a /v1/message:send" {
		t.Errorf("the A2A handler saw %q, want the path without /a2a", body)
	}
}

// A run: started with a prompt, its events streamed until its result; a
// second message queued and answered in the same session; the session
// listed live with its transcript; stopped, its stream ends.
func TestRunStreamMessageTranscriptStop(t *testing.T) {
	f := newFixture(t, readThenAnswer, Config{})
	r := f.start(map[string]any{"prompt": "What is the secret word?"})
	if r.ID == "" || !r.Running {
		t.Fatalf("started %+v", r)
	}
	s := f.stream(r.ID, nil)
	evs := s.until(t, "the first result", isResult)
	var types []string
	for _, e := range evs {
		if e.name != "approvals" {
			types = append(types, e.name)
		}
		if e.name != "approvals" && e.data["session_id"] != r.ID {
			t.Errorf("%s event of session %v, want %s", e.name, e.data["session_id"], r.ID)
		}
	}
	if got := strings.Join(types, " "); got != "system assistant user assistant result" {
		t.Errorf("events %q, want the stream-json sequence", got)
	}
	if res := evs[len(evs)-1].data; res["result"] != "It says PAPAYA." || res["is_error"] != false {
		t.Errorf("result %v", res)
	}

	// The run's figures are the tree's so far, while the session's
	// record only changes when a turn ends.
	var live runJSON
	if st := f.do("GET", "/api/runs/"+r.ID, nil, &live); st != 200 || live.Tokens <= 0 {
		t.Errorf("run after its first turn: %d %+v, want its tokens so far", st, live)
	}
	if st := f.do("POST", "/api/runs/"+r.ID+"/messages", map[string]any{"text": "second question"}, nil); st != http.StatusAccepted {
		t.Fatalf("message: %d", st)
	}
	evs = s.until(t, "the second result", isResult)
	if res := evs[len(evs)-1].data; res["result"] != "second answer" {
		t.Errorf("second result %v", res)
	}

	var list []sessionJSON
	f.do("GET", "/api/sessions", nil, &list)
	if len(list) != 1 || list[0].ID != r.ID || !list[0].Live {
		t.Fatalf("sessions %+v", list)
	}
	var shown struct {
		Session    sessionJSON
		Transcript []map[string]any
	}
	if st := f.do("GET", "/api/sessions/"+r.ID, nil, &shown); st != 200 {
		t.Fatalf("session: %d", st)
	}
	if len(shown.Transcript) != 6 || !strings.Contains(fmt.Sprint(shown.Transcript), "second answer") {
		t.Errorf("transcript of %d entries: %v", len(shown.Transcript), shown.Transcript)
	}

	var stopped runJSON
	if st := f.do("POST", "/api/runs/"+r.ID+"/stop", nil, &stopped); st != 200 || stopped.Running || stopped.Ended == nil {
		t.Fatalf("stop: %d %+v", st, stopped)
	}
	s.until(t, "the end of the stream", func(e sse) bool { return e.name == "end" })
	if st := f.do("POST", "/api/runs/"+r.ID+"/messages", map[string]any{"text": "more"}, nil); st != http.StatusConflict {
		t.Errorf("message to an ended run: %d, want 409", st)
	}
	// Resumed: the same session goes on in a new run.
	again := f.start(map[string]any{"resume": r.ID, "prompt": "second question", "close": true})
	if again.ID != r.ID {
		t.Errorf("resumed as %s, want %s", again.ID, r.ID)
	}
	f.stream(again.ID, nil).until(t, "the end of the resumed run", func(e sse) bool { return e.name == "end" })
}

// A reconnecting client gives the id of the last event it saw and gets
// the rest, nothing twice.
func TestEventsResumeAfterLastEventID(t *testing.T) {
	f := newFixture(t, readThenAnswer, Config{})
	r := f.start(map[string]any{"prompt": "What is the secret word?", "close": true})
	all := f.stream(r.ID, nil).until(t, "the end", func(e sse) bool { return e.name == "end" })
	if len(all) < 4 {
		t.Fatalf("%d events", len(all))
	}
	cut := all[2]
	rest := f.stream(r.ID, map[string]string{"Last-Event-ID": cut.id}).until(t, "the end", func(e sse) bool { return e.name == "end" })
	if len(rest) != len(all)-3 {
		t.Fatalf("after id %s: %d events, want %d", cut.id, len(rest), len(all)-3)
	}
	for i, e := range rest {
		if w := all[i+3]; e.id != w.id || e.name != w.name {
			t.Errorf("event %d: %s %s, want %s %s", i, e.id, e.name, w.id, w.name)
		}
	}
}

// Bad input: ids, bodies, routes, limits, decisions; each a JSON error
// with its status.
func TestBadRequests(t *testing.T) {
	f := newFixture(t, readThenAnswer, Config{})
	live := f.start(map[string]any{})
	for _, c := range []struct {
		method, path string
		body         any
		want         int
		says         string
	}{
		{"GET", "/api/runs/..%2F..%2Fetc", nil, 400, "only letters"},
		{"GET", "/api/runs/0199a0b4-0000-7000-8000-000000000000", nil, 404, "no run"},
		{"GET", "/api/sessions/bad.id", nil, 400, "only letters"},
		{"GET", "/api/sessions/0199a0b4-0000-7000-8000-000000000000", nil, 404, "not found"},
		{"GET", "/api/sessions/0199a0b4-0000-7000-8000-000000000000/tree", nil, 404, "not found"},
		{"GET", "/api/sessions?limit=0", nil, 400, "limit"},
		{"GET", "/api/sessions?limit=x", nil, 400, "limit"},
		{"GET", "/api/sessions?order=oldest", nil, 400, "newest or tree"},
		{"GET", "/api/tasks?session=a/b", nil, 400, "session"},
		{"GET", "/api/tasks/0199a0b4-0000-7000-8000-000000000000", nil, 404, "not found"},
		{"GET", "/api/tasks/0199a0b4-0000-7000-8000-000000000000/output", nil, 404, "not found"},
		{"POST", "/api/tasks/0199a0b4-0000-7000-8000-000000000000/stop", nil, 404, ""},
		{"POST", "/api/runs", "", 400, "empty"},
		{"POST", "/api/runs", "{", 400, "request body"},
		{"POST", "/api/runs", map[string]any{"promt": "typo"}, 400, "unknown field"},
		{"POST", "/api/runs", map[string]any{"resume": "../x"}, 400, "resume"},
		{"POST", "/api/runs", map[string]any{"resume": "0199a0b4-0000-7000-8000-000000000000"}, 404, ""},
		{"POST", "/api/runs", map[string]any{"permission_mode": "yolo"}, 400, "permission_mode"},
		{"POST", "/api/runs", map[string]any{"close": true}, 400, "close without a prompt"},
		{"POST", "/api/runs", map[string]any{"resume": live.ID}, 409, "running in this server"},
		{"POST", "/api/runs", map[string]any{"model": "nosuch:model"}, 400, "model"},
		{"POST", "/api/runs/" + live.ID + "/messages", map[string]any{"text": " "}, 400, "empty"},
		{"POST", "/api/runs/" + live.ID + "/messages", map[string]any{"text": "/nosuchcommand"}, 400, "nosuchcommand"},
		{"POST", "/api/runs/" + live.ID + "/approvals/0", map[string]any{"decision": "allow"}, 400, "approval id"},
		{"POST", "/api/runs/" + live.ID + "/approvals/7", map[string]any{"decision": "allow"}, 404, "not waiting"},
		{"POST", "/api/runs/" + live.ID + "/approvals/7", map[string]any{"decision": "maybe"}, 400, "allow, always or deny"},
		{"POST", "/api/runs/" + live.ID + "/subagents/%239/stop", nil, 404, "no subagent"},
		{"POST", "/api/runs/" + live.ID + "/subagents/%239/messages", map[string]any{"text": "hi"}, 404, "no subagent"},
		{"GET", "/api/runs/" + live.ID + "/events?after=-4", nil, 400, "Last-Event-ID"},
		{"GET", "/api/nosuch", nil, 404, "no API route"},
		{"DELETE", "/api/runs", nil, 404, "no API route DELETE /api/runs"},
	} {
		t.Run(c.method+" "+c.path, func(t *testing.T) {
			var body errorBody
			st := f.do(c.method, c.path, c.body, &body)
			if st != c.want {
				t.Fatalf("status %d (%q), want %d", st, body.Error, c.want)
			}
			if body.Error == "" || !strings.Contains(body.Error, c.says) {
				t.Errorf("error %q, want one saying %q", body.Error, c.says)
			}
		})
	}
}

// A call that needs approval waits in the run's queue, is shown in the
// stream, and is answered through the API: deny with a message (the model
// reads it), then always (the rule covers the next such call).
func TestApprovalsAnsweredOverHTTP(t *testing.T) {
	h := func(req testkit.Request) testkit.Reply {
		msgs, _ := req.JSON()["messages"].([]any)
		last := fmt.Sprint(msgs[len(msgs)-1])
		switch {
		case !strings.Contains(last, "tool_result"):
			return testkit.Reply{ToolCalls: []testkit.ToolCall{{Name: "Bash", Input: map[string]any{"command": "echo ran-it"}}}}
		case strings.Contains(last, "use the tool not now"):
			return testkit.Reply{Text: "OK, I will not."}
		case strings.Contains(last, "ran-it"):
			return testkit.Reply{Text: "done"}
		}
		return testkit.Reply{Text: "unexpected: " + last}
	}
	f := newFixture(t, h, Config{})
	r := f.start(map[string]any{"prompt": "run it"})
	s := f.stream(r.ID, nil)
	asked := func(e sse) bool { return e.name == "approvals" && strings.Contains(e.raw, `"tool":"Bash"`) }
	s.until(t, "an approval in the stream", asked)
	var list []approvalJSON
	f.do("GET", "/api/runs/"+r.ID+"/approvals", nil, &list)
	if len(list) != 1 || list[0].Tool != "Bash" || list[0].Agent != "main" || list[0].RunID != r.ID {
		t.Fatalf("pending %+v", list)
	}
	var all []approvalJSON
	f.do("GET", "/api/approvals", nil, &all)
	if len(all) != 1 || all[0].ID != list[0].ID {
		t.Fatalf("all pending %+v", all)
	}
	if st := f.do("POST", fmt.Sprintf("/api/runs/%s/approvals/%d", r.ID, list[0].ID), map[string]any{"decision": "deny", "message": "use the tool not now"}, nil); st != 200 {
		t.Fatalf("deny: %d", st)
	}
	evs := s.until(t, "the result", isResult)
	if res := evs[len(evs)-1].data; res["result"] != "OK, I will not." {
		t.Errorf("after the denial: %v", res)
	}
	if st := f.do("POST", fmt.Sprintf("/api/runs/%s/approvals/%d", r.ID, list[0].ID), map[string]any{"decision": "allow"}, nil); st != 404 {
		t.Errorf("answering twice: %d, want 404", st)
	}

	f.do("POST", "/api/runs/"+r.ID+"/messages", map[string]any{"text": "run it again"}, nil)
	s.until(t, "the second approval", asked)
	f.do("GET", "/api/runs/"+r.ID+"/approvals", nil, &list)
	if len(list) != 1 || len(list[0].Suggestions) == 0 {
		t.Fatalf("pending %+v, want one with a rule to remember", list)
	}
	var ans map[string]any
	if st := f.do("POST", fmt.Sprintf("/api/runs/%s/approvals/%d", r.ID, list[0].ID), map[string]any{"decision": "always"}, &ans); st != 200 {
		t.Fatalf("always: %d %v", st, ans)
	}
	if fmt.Sprint(ans["remembered"]) != fmt.Sprint([]any{list[0].Suggestions[0]}) {
		t.Errorf("remembered %v, want %v", ans["remembered"], list[0].Suggestions)
	}
	evs = s.until(t, "the second result", isResult)
	if res := evs[len(evs)-1].data; res["result"] != "done" {
		t.Errorf("after always: %v", res)
	}
	// The remembered rule approves the same call: no question this time.
	f.do("POST", "/api/runs/"+r.ID+"/messages", map[string]any{"text": "once more"}, nil)
	evs = s.until(t, "the third result", isResult)
	for _, e := range evs {
		if asked(e) {
			t.Errorf("asked again after always: %s", e.raw)
		}
	}
	if res := evs[len(evs)-1].data; res["result"] != "done" {
		t.Errorf("third result: %v", res)
	}
}

// Ended runs beyond Config.KeepEnded leave memory, oldest first; their
// sessions are still read from the store.
func TestEndedRunsAreEvicted(t *testing.T) {
	f := newFixture(t, readThenAnswer, Config{KeepEnded: 1})
	var ids []string
	for range 3 {
		r := f.start(map[string]any{"prompt": "What is the secret word?", "close": true})
		f.stream(r.ID, nil).until(t, "the end", func(e sse) bool { return e.name == "end" })
		ids = append(ids, r.ID)
	}
	// Each start drops the ended runs beyond one: the newest ended stays.
	live := f.start(map[string]any{})
	var runs []runJSON
	f.do("GET", "/api/runs", nil, &runs)
	var got []string
	for _, r := range runs {
		got = append(got, r.ID)
	}
	if want := []string{live.ID, ids[2]}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("runs %v, want %v (the running one and the newest ended)", got, want)
	}
	if st := f.do("GET", "/api/runs/"+ids[0], nil, nil); st != 404 {
		t.Errorf("an evicted run: %d, want 404", st)
	}
	if st := f.do("GET", "/api/sessions/"+ids[0], nil, nil); st != 200 {
		t.Errorf("an evicted run's session: %d, want 200", st)
	}
}
