package server

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cadre-dev/cadre"
	"github.com/cadre-dev/cadre/internal/testkit"
	"github.com/cadre-dev/cadre/llm"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// deadline bounds every wait of these tests: generous for -race on a
// shared machine; it only ends a test that could never pass.
const deadline = 2 * time.Minute

// fixture is a Server over a runtime whose model is a fake Anthropic
// server answering with h, served by httptest on 127.0.0.1.
type fixture struct {
	t     *testing.T
	srv   *Server
	http  *httptest.Server
	model *testkit.AnthropicServer
	dir   string
	token string
}

func newFixture(t *testing.T, h testkit.Handler, cfg Config) *fixture {
	t.Helper()
	return newFixtureWith(t, h, cfg, "")
}

// newFixtureWith is newFixture with settings (a JSON object, as
// cadre.Options.Settings takes it).
func newFixtureWith(t *testing.T, h testkit.Handler, cfg Config, settings string) *fixture {
	t.Helper()
	f := &fixture{t: t, model: testkit.NewAnthropic(t, h), dir: t.TempDir(), token: cfg.Token}
	if err := os.WriteFile(filepath.Join(f.dir, "notes.txt"), []byte("The secret word is PAPAYA.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	env := map[string]string{"CADRE_HOME": home, "ANTHROPIC_BASE_URL": f.model.URL}
	rt, err := cadre.New(context.Background(), cadre.Options{
		Cwd: f.dir, Model: "claude-sonnet-5-5", Getenv: func(k string) string { return env[k] },
		Agents:   []cadre.Agent{{Name: "slow", Description: "Works slowly.", Prompt: "SLOW-CHILD: work.", Tools: []string{"Read"}}},
		Settings: settings,
	})
	if err != nil {
		t.Fatal(err)
	}
	cfg.Runtime = rt
	f.srv, err = New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	f.token = f.srv.Token()
	f.http = httptest.NewServer(f.srv)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), deadline)
		defer cancel()
		if err := f.srv.Shutdown(ctx); err != nil {
			t.Error(err)
		}
		f.http.Close()
		rt.Close()
	})
	return f
}

// do sends a request with a JSON body (nil for none) and decodes the
// JSON answer into out (if not nil); it returns the status.
func (f *fixture) do(method, path string, body any, out any) int {
	f.t.Helper()
	var rd io.Reader
	if body != nil {
		if s, ok := body.(string); ok {
			rd = strings.NewReader(s)
		} else {
			b, _ := json.Marshal(body)
			rd = bytes.NewReader(b)
		}
	}
	req, err := http.NewRequest(method, f.http.URL+path, rd)
	if err != nil {
		f.t.Fatal(err)
	}
	if f.token != "" {
		req.Header.Set("Authorization", "Bearer "+f.token)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := f.http.Client().Do(req)
	if err != nil {
		f.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			f.t.Fatalf("%s %s: %d %s: %v", method, path, resp.StatusCode, b, err)
		}
	}
	return resp.StatusCode
}

func (f *fixture) start(body map[string]any) runJSON {
	f.t.Helper()
	var r runJSON
	if st := f.do("POST", "/api/runs", body, &r); st != http.StatusCreated {
		f.t.Fatalf("start run: status %d, %+v", st, r)
	}
	return r
}

// sse is an event of a stream.
type sse struct {
	id, name string
	raw      string         // the data line
	data     map[string]any // raw decoded, when it is an object
}

// stream reads a run's SSE stream in the background; events arrive on
// the channel, which closes when the stream does.
type stream struct {
	events <-chan sse
	cancel context.CancelFunc
	done   chan struct{}
}

func (f *fixture) stream(id string, header map[string]string) *stream {
	f.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "GET", f.http.URL+"/api/runs/"+id+"/events", nil)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	if f.token != "" {
		req.Header.Set("Authorization", "Bearer "+f.token)
	}
	resp, err := f.http.Client().Do(req)
	if err != nil {
		cancel()
		f.t.Fatal(err)
	}
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		cancel()
		f.t.Fatalf("events: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	ch := make(chan sse, 1024)
	s := &stream{events: ch, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(s.done)
		defer close(ch)
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 1<<22)
		var cur sse
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "":
				if cur.name != "" {
					ch <- cur
				}
				cur = sse{}
			case strings.HasPrefix(line, "id: "):
				cur.id = strings.TrimPrefix(line, "id: ")
			case strings.HasPrefix(line, "event: "):
				cur.name = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: "):
				cur.raw = strings.TrimPrefix(line, "data: ")
				json.Unmarshal([]byte(cur.raw), &cur.data)
			}
		}
	}()
	f.t.Cleanup(func() { cancel(); <-s.done })
	return s
}

// until reads events until one satisfies ok, and returns all read.
func (s *stream) until(t *testing.T, what string, ok func(sse) bool) []sse {
	t.Helper()
	var got []sse
	timer := time.NewTimer(deadline)
	defer timer.Stop()
	for {
		select {
		case e, open := <-s.events:
			if !open {
				t.Fatalf("the stream closed before %s; read %d events", what, len(got))
			}
			got = append(got, e)
			if ok(e) {
				return got
			}
		case <-timer.C:
			t.Fatalf("no %s within %v", what, deadline)
		}
	}
}

func isResult(e sse) bool {
	return e.name == "result" && e.data["parent_tool_use_id"] == nil
}

// readThenAnswer reads notes.txt, then quotes it; a later message is
// echoed.
func readThenAnswer(req testkit.Request) testkit.Reply {
	body := string(req.Body)
	if strings.Contains(body, "second question") {
		return testkit.Reply{Text: "second answer"}
	}
	if !strings.Contains(body, "tool_result") {
		return testkit.Reply{ToolCalls: []testkit.ToolCall{{Name: "Read", Input: map[string]any{"file_path": "notes.txt"}}}}
	}
	return testkit.Reply{Text: "It says PAPAYA.", Usage: llm.Usage{InputTokens: 120, OutputTokens: 6}}
}
