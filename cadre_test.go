package cadre_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/cadre-dev/cadre"
	"github.com/cadre-dev/cadre/internal/testkit"
	"github.com/cadre-dev/cadre/internal/testkit/pgtest"
	"github.com/cadre-dev/cadre/llm"
	"github.com/google/go-cmp/cmp"
)

// pg is a throwaway PostgreSQL server, started by the first test that asks
// for a database (store_test.go).
var pg pgtest.Server

func TestMain(m *testing.M) { pg.Main(m) }

// fixture is a project dir and a state dir, with a model that reads
// notes.txt, then answers with what the tool returned.
type fixture struct {
	dir, home string
	mu        sync.Mutex
	requests  []*llm.Request
	// fn, if set, replaces the read-then-answer model.
	fn func(ctx context.Context, req *llm.Request) (*llm.Response, error)
}

func newFixture(t *testing.T) *fixture {
	f := &fixture{dir: t.TempDir(), home: t.TempDir()}
	if err := os.WriteFile(filepath.Join(f.dir, "notes.txt"), []byte("The secret word is PAPAYA.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return f
}

func (f *fixture) model(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	f.mu.Lock()
	f.requests = append(f.requests, req)
	f.mu.Unlock()
	last := req.Messages[len(req.Messages)-1]
	for _, b := range last.Content {
		if b.Type == llm.BlockToolResult {
			return llm.Reply(llm.Text("Answer: " + b.ResultText())), nil
		}
	}
	if strings.Contains(last.Text(), "bash") {
		return llm.Reply(llm.ToolUse("t1", "Bash", json.RawMessage(`{"command":"echo ran"}`))), nil
	}
	return llm.Reply(llm.ToolUse("t1", "Read", json.RawMessage(`{"file_path":"notes.txt"}`))), nil
}

func (f *fixture) open(t *testing.T, opts cadre.Options) *cadre.Runtime {
	t.Helper()
	opts.Cwd = f.dir
	opts.LLM = &llm.ModelFunc{ID: "test:model", Func: f.model}
	if f.fn != nil {
		opts.LLM = &llm.ModelFunc{ID: "test:model", Func: f.fn}
	}
	opts.Getenv = testkit.Home(f.home)
	rt, err := cadre.New(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close() })
	return rt
}

func collect(t *testing.T, rt *cadre.Runtime, req cadre.Request) []cadre.Event {
	t.Helper()
	var evs []cadre.Event
	for ev, err := range rt.Run(context.Background(), req) {
		if err != nil {
			t.Fatal(err)
		}
		evs = append(evs, ev)
	}
	return evs
}

func TestRunYieldsTheSessionsEventsInOrder(t *testing.T) {
	f := newFixture(t)
	rt := f.open(t, cadre.Options{})
	evs := collect(t, rt, cadre.Request{Prompt: "what is the secret word?"})
	var types []string
	for _, e := range evs {
		types = append(types, string(e.Type))
		if e.SessionID != evs[0].SessionID || e.UUID == "" {
			t.Errorf("event %s: session %q uuid %q", e.Type, e.SessionID, e.UUID)
		}
	}
	if got := strings.Join(types, ","); got != "system,assistant,user,assistant,result" {
		t.Fatalf("events %s", got)
	}
	res := evs[len(evs)-1].Result
	if res.IsError || !strings.Contains(res.Result, "PAPAYA") || res.NumTurns != 2 {
		t.Errorf("result %+v", res)
	}
	// The run is persisted: index record and transcript.
	infos, err := rt.Sessions(context.Background(), "", 10)
	if err != nil || len(infos) != 1 || infos[0].ID != evs[0].SessionID || infos[0].Status != "completed" || infos[0].NumTurns != 2 {
		t.Fatalf("sessions %+v, %v", infos, err)
	}
	_, entries, err := rt.Session(context.Background(), infos[0].ID)
	if err != nil || len(entries) != 4 {
		t.Fatalf("transcript: %d entries, %v", len(entries), err)
	}
	// A message's uuid in the stream is its uuid in the transcript.
	if entries[1].UUID != evs[1].UUID {
		t.Errorf("transcript uuid %s, event uuid %s", entries[1].UUID, evs[1].UUID)
	}
}

func TestResumeCarriesTheHistory(t *testing.T) {
	f := newFixture(t)
	rt := f.open(t, cadre.Options{})
	first := collect(t, rt, cadre.Request{Prompt: "what is the secret word?"})
	sid := first[0].SessionID
	second := collect(t, rt, cadre.Request{Prompt: "and again?", Resume: sid})
	if second[0].SessionID != sid {
		t.Fatalf("resumed under a new session %s", second[0].SessionID)
	}
	last := f.requests[len(f.requests)-1]
	// prompt, tool call, result, answer, new prompt, tool call, result
	if len(last.Messages) != 7 || last.Messages[0].Text() != "what is the secret word?" {
		t.Errorf("resumed request has %d messages", len(last.Messages))
	}
	third := collect(t, rt, cadre.Request{Prompt: "once more", Continue: true})
	if third[0].SessionID != sid {
		t.Errorf("continue picked %s, want %s", third[0].SessionID, sid)
	}
	infos, _ := rt.Sessions(context.Background(), "", 10)
	if len(infos) != 1 || infos[0].NumTurns != 6 {
		t.Errorf("sessions %+v", infos)
	}
}

func TestSetupErrorsComeBeforeAnyEvent(t *testing.T) {
	f := newFixture(t)
	rt := f.open(t, cadre.Options{})
	for _, req := range []cadre.Request{
		{Prompt: "x", Resume: "../../etc/passwd"},
		{Prompt: "x", Resume: "0190a000-0000-7000-8000-00000000dead"},
		{Prompt: "   "},
		{Prompt: "x", Resume: "a", Continue: true},
	} {
		n := 0
		var got error
		for _, err := range rt.Run(context.Background(), req) {
			n++
			got = err
		}
		if n != 1 || got == nil {
			t.Errorf("%+v: %d items, err %v", req, n, got)
		}
	}
}

func TestPermissionCallbackAnswersAsks(t *testing.T) {
	for _, allow := range []bool{true, false} {
		f := newFixture(t)
		var asked []cadre.PermissionRequest
		rt := f.open(t, cadre.Options{Permission: func(_ context.Context, req cadre.PermissionRequest) (cadre.PermissionDecision, error) {
			asked = append(asked, req)
			return cadre.PermissionDecision{Allow: allow}, nil
		}})
		evs := collect(t, rt, cadre.Request{Prompt: "run bash"})
		if len(asked) != 1 || asked[0].Tool != "Bash" || asked[0].Target != "echo ran" {
			t.Fatalf("asked %+v", asked)
		}
		result := evs[2].Message.Content[0]
		if result.IsError == allow {
			t.Errorf("allow=%v: result %q is_error=%v", allow, result.ResultText(), result.IsError)
		}
		if res := evs[len(evs)-1].Result; !allow && len(res.PermissionDenials) != 1 {
			t.Errorf("denials %+v", res.PermissionDenials)
		}
	}
}

// An approval of an edit shows the diff it would make, computed by the
// tool before it runs.
func TestPermissionRequestCarriesTheDiff(t *testing.T) {
	f := newFixture(t)
	f.fn = func(_ context.Context, req *llm.Request) (*llm.Response, error) {
		if len(req.Messages) == 1 {
			return llm.Reply(llm.ToolUse("t1", "Edit", json.RawMessage(`{"file_path":"notes.txt","old_string":"PAPAYA","new_string":"MANGO"}`))), nil
		}
		return llm.Reply(llm.Text("done")), nil
	}
	var asked []cadre.PermissionRequest
	rt := f.open(t, cadre.Options{Permission: func(_ context.Context, req cadre.PermissionRequest) (cadre.PermissionDecision, error) {
		asked = append(asked, req)
		return cadre.PermissionDecision{Allow: true}, nil
	}})
	collect(t, rt, cadre.Request{Prompt: "edit"})
	path := filepath.Join(f.dir, "notes.txt")
	want := &cadre.FileChange{
		Path: path, Old: "The secret word is PAPAYA.\n", New: "The secret word is MANGO.\n",
		Diff: "--- " + path + "\n+++ " + path + "\n@@ -1 +1 @@\n-The secret word is PAPAYA.\n+The secret word is MANGO.\n",
	}
	if len(asked) != 1 {
		t.Fatalf("asked %d times", len(asked))
	}
	if diff := cmp.Diff(want, asked[0].Change); diff != "" {
		t.Errorf("change (-want +got):\n%s", diff)
	}
}

func TestStoppingIterationEndsTheRun(t *testing.T) {
	f := newFixture(t)
	rt := f.open(t, cadre.Options{})
	for ev, err := range rt.Run(context.Background(), cadre.Request{Prompt: "what is the secret word?"}) {
		if err != nil {
			t.Fatal(err)
		}
		if ev.Type == cadre.EventAssistant {
			break // goleak checks the run's goroutine is gone
		}
	}
	infos, _ := rt.Sessions(context.Background(), "", 10)
	if len(infos) != 1 || infos[0].Status == "running" {
		t.Errorf("session left %+v", infos)
	}
}

// greetingFixture is a project whose shared settings set GREETING and
// allow Bash, and a model that echoes $GREETING and answers with what Bash
// printed.
func greetingFixture(t *testing.T) *fixture {
	t.Helper()
	f := newFixture(t)
	os.MkdirAll(filepath.Join(f.dir, ".cadre"), 0o755)
	os.WriteFile(filepath.Join(f.dir, ".cadre", "settings.json"), []byte(`{"env": {"GREETING": "hi from settings"}, "permissions": {"allow": ["Bash"]}}`), 0o644)
	f.fn = func(_ context.Context, req *llm.Request) (*llm.Response, error) {
		if len(req.Messages) == 1 {
			return llm.Reply(llm.ToolUse("t1", "Bash", json.RawMessage(`{"command":"echo $GREETING"}`))), nil
		}
		return llm.Reply(llm.Text(req.Messages[2].Content[0].ResultText())), nil
	}
	return f
}

func TestSettingsEnvReachesBash(t *testing.T) {
	f := greetingFixture(t)
	// The project's own settings: the SDK's option trusts them (issue 22).
	rt := f.open(t, cadre.Options{TrustWorkspace: true})
	evs := collect(t, rt, cadre.Request{Prompt: "greet"})
	if got := evs[len(evs)-1].Result.Result; !strings.Contains(got, "hi from settings") {
		t.Errorf("result %q", got)
	}
}

// TestUntrustedProjectSettingsDoNotWidenSDKRuns: through the Go SDK too, a
// project the user has not trusted may not allow tools or set env; the
// runtime's warnings name what was skipped, and Trust says why.
func TestUntrustedProjectSettingsDoNotWidenSDKRuns(t *testing.T) {
	f := greetingFixture(t)
	rt := f.open(t, cadre.Options{})
	if w := rt.Trust(); w.Trusted || len(w.Asks) != 2 {
		t.Errorf("trust %+v, want untrusted asking for env and an allow rule", w)
	}
	if !strings.Contains(strings.Join(rt.Warnings(), "\n"), "permissions.allow") {
		t.Errorf("warnings %v", rt.Warnings())
	}
	evs := collect(t, rt, cadre.Request{Prompt: "greet"})
	if got := evs[len(evs)-1].Result.Result; strings.Contains(got, "hi from settings") || !strings.Contains(got, "denied") {
		t.Errorf("result %q: the untrusted allow rule ran Bash", got)
	}
}

// TestSavedRuleUpdates: an approval's rule updates land in the settings
// file of their destination, hold for the rest of the conversation, and a
// destination cadre does not write fails the call with an error naming it.
func TestSavedRuleUpdates(t *testing.T) {
	for _, tc := range []struct {
		dest    cadre.RuleDestination
		file    func(f *fixture) string // "" when nothing is written
		wantErr string
	}{
		{dest: cadre.RulesLocal, file: func(f *fixture) string { return filepath.Join(f.dir, ".cadre", "settings.local.json") }},
		{dest: cadre.RulesUser, file: func(f *fixture) string { return filepath.Join(f.home, "settings.json") }},
		{dest: cadre.RulesSession},
		{dest: cadre.RulesProject, wantErr: "cannot save Bash(echo ran) to projectSettings"},
		{dest: "elsewhere", wantErr: `unknown destination "elsewhere"`},
	} {
		t.Run(string(tc.dest), func(t *testing.T) {
			f := newFixture(t)
			// Two calls of the same command, one after the other.
			f.fn = func(_ context.Context, req *llm.Request) (*llm.Response, error) {
				switch len(req.Messages) {
				case 1:
					return llm.Reply(llm.ToolUse("t1", "Bash", json.RawMessage(`{"command":"echo ran"}`))), nil
				case 3:
					return llm.Reply(llm.ToolUse("t2", "Bash", json.RawMessage(`{"command":"echo ran"}`))), nil
				}
				return llm.Reply(llm.Text("done")), nil
			}
			asked := 0
			rt := f.open(t, cadre.Options{Permission: func(_ context.Context, req cadre.PermissionRequest) (cadre.PermissionDecision, error) {
				asked++
				return cadre.PermissionDecision{Allow: true, Save: []cadre.RuleUpdate{{Destination: tc.dest, Behavior: "allow", Rules: req.ExactRules}}}, nil
			}})
			evs := collect(t, rt, cadre.Request{Prompt: "run bash"})
			var results []llm.Block
			for _, ev := range evs {
				if ev.Message == nil {
					continue
				}
				for _, b := range ev.Message.Content {
					if b.Type == llm.BlockToolResult {
						results = append(results, b)
					}
				}
			}
			if len(results) != 2 {
				t.Fatalf("%d tool results, want 2", len(results))
			}
			if r := results[0]; tc.wantErr != "" {
				if !r.IsError || !strings.Contains(r.ResultText(), tc.wantErr) {
					t.Fatalf("result %q is_error=%v, want an error saying %q", r.ResultText(), r.IsError, tc.wantErr)
				}
			} else {
				for _, r := range results {
					if r.IsError || strings.TrimSpace(r.ResultText()) != "ran" {
						t.Fatalf("result %q is_error=%v", r.ResultText(), r.IsError)
					}
				}
			}
			if tc.wantErr == "" && asked != 1 {
				t.Errorf("asked %d times, want the saved rule to approve the second call", asked)
			}
			for _, p := range []string{filepath.Join(f.dir, ".cadre", "settings.local.json"), filepath.Join(f.home, "settings.json"), filepath.Join(f.dir, ".cadre", "settings.json")} {
				data, err := os.ReadFile(p)
				want := tc.file != nil && tc.file(f) == p
				switch {
				case want && (err != nil || !strings.Contains(string(data), `"Bash(echo ran)"`)):
					t.Errorf("%s = %q (%v), want the rule saved", p, data, err)
				case !want && err == nil:
					t.Errorf("%s written: %s", p, data)
				}
			}
		})
	}
}
