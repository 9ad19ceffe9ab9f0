package main

import (
	"context"
	"encoding/json"
	"iter"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"

	"github.com/cadre-dev/cadre/internal/testkit"
)

// slowPeer is an A2A agent built with a2a-go that says it is working on
// each message and answers only once released; it counts the messages
// and cancels it gets.
type slowPeer struct {
	srv     *httptest.Server
	release chan struct{}

	mu       sync.Mutex
	messages int
	canceled int
}

func (p *slowPeer) Execute(ctx context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		p.mu.Lock()
		p.messages++
		p.mu.Unlock()
		text := ""
		for _, part := range ec.Message.Parts {
			text += part.Text()
		}
		if ec.StoredTask == nil && !yield(a2a.NewSubmittedTask(ec, ec.Message), nil) {
			return
		}
		working := a2a.NewMessageForTask(a2a.MessageRoleAgent, ec, a2a.NewTextPart("working on "+text))
		if !yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateWorking, working), nil) {
			return
		}
		select {
		case <-p.release:
		case <-ctx.Done():
			return
		}
		if !yield(a2a.NewArtifactEvent(ec, a2a.NewTextPart("slow peer answer: "+text)), nil) {
			return
		}
		yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateCompleted, nil), nil)
	}
}

func (p *slowPeer) Cancel(ctx context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		p.mu.Lock()
		p.canceled++
		p.mu.Unlock()
		yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateCanceled, nil), nil)
	}
}

func startSlowPeer(t *testing.T) *slowPeer {
	t.Helper()
	p := &slowPeer{release: make(chan struct{})}
	mux := http.NewServeMux()
	mux.Handle("/rpc", a2asrv.NewJSONRPCHandler(a2asrv.NewHandler(p)))
	mux.HandleFunc(a2asrv.WellKnownAgentCardPath, func(w http.ResponseWriter, r *http.Request) {
		card := &a2a.AgentCard{Name: "slow", Version: "1", Capabilities: a2a.AgentCapabilities{Streaming: true},
			SupportedInterfaces: []*a2a.AgentInterface{a2a.NewAgentInterface(p.srv.URL+"/rpc", a2a.TransportProtocolJSONRPC)}}
		a2asrv.NewStaticAgentCardHandler(card).ServeHTTP(w, r)
	})
	p.srv = httptest.NewServer(mux)
	t.Cleanup(p.srv.Close)
	return p
}

// TestSW2BackgroundRemoteRunSurvivesARestart: the main agent starts a
// remote agent in the background; the cadre process is SIGKILLed while the
// remote task is still working; a new cadre resuming the session in the
// same CADRE_HOME subscribes to the remote task again, and the task's
// answer arrives as the usual notification — the peer got one message and
// no cancel.
func TestSW2BackgroundRemoteRunSurvivesARestart(t *testing.T) {
	e, peer, agents, sid := killedMidRemoteTask(t)

	second := e.startLive("-p", "any news?", "--resume", sid, "--model", sonnet, "--agents", agents, "--output-format", "stream-json", "--verbose")
	// Released once the new process has the session: the remote task is
	// then most likely still working, so the answer comes by the new
	// subscription (had it ended, GetTask would read it back).
	second.await(t, "the session resumed", func(l map[string]any) bool { return l["session_id"] == sid })
	close(peer.release)
	p := second.finish(t)
	if p.code != 0 {
		t.Fatalf("the resumed run exited %d; stderr:\n%s", p.code, p.stderr)
	}
	if !strings.Contains(p.stdout, "notified: ") || !strings.Contains(p.stdout, "slow peer answer: SLOW work") {
		t.Errorf("the remote answer did not arrive as a notification in the resumed run:\n%s\nstderr:\n%s", p.stdout, p.stderr)
	}
	peer.mu.Lock()
	defer peer.mu.Unlock()
	if peer.messages != 1 || peer.canceled != 0 {
		t.Errorf("the peer got %d messages and %d cancels; want the one task, never canceled nor sent again", peer.messages, peer.canceled)
	}
	show := ok(t, e.run("", "tasks"))
	if !strings.Contains(show.stdout, "completed") {
		t.Errorf("the task is not recorded completed:\n%s", show.stdout)
	}
}

// TestSW2RestartWithoutTheAgentDefinitionFailsTheRun: resumed by a cadre
// that no longer knows the remote agent, the run cannot be followed: it
// ends failed, and the main agent is told why, instead of the record
// staying running forever.
func TestSW2RestartWithoutTheAgentDefinitionFailsTheRun(t *testing.T) {
	e, peer, _, sid := killedMidRemoteTask(t)
	defer close(peer.release)
	p := ok(t, e.run("", "-p", "any news?", "--resume", sid, "--model", sonnet, "--output-format", "stream-json", "--verbose"))
	if !strings.Contains(p.stdout, `is not defined with a url here`) {
		t.Errorf("the main agent was not told why the run could not be followed:\n%s", p.stdout)
	}
	show := ok(t, e.run("", "tasks"))
	if !strings.Contains(show.stdout, "failed") {
		t.Errorf("the task is not recorded failed:\n%s", show.stdout)
	}
}

// killedMidRemoteTask starts a background remote run on a slow peer and
// SIGKILLs cadre while the remote task works; it returns the env, the
// peer, the --agents value and the session id.
func killedMidRemoteTask(t *testing.T) (*env, *slowPeer, string, string) {
	t.Helper()
	peer := startSlowPeer(t)
	agents, _ := json.Marshal(map[string]any{"slow": map[string]any{
		"description": "A slow agent on another server", "url": peer.srv.URL,
	}})
	h := func(req testkit.Request) testkit.Reply {
		text, results, _ := lastUser(req)
		switch {
		case strings.Contains(text, "slow peer answer"):
			return testkit.Reply{Text: "notified: " + text}
		case len(results) > 0:
			return testkit.Reply{Text: "launched; waiting"}
		case strings.Contains(text, "ask the peer"):
			return testkit.Reply{ToolCalls: []testkit.ToolCall{{ID: "toolu_slow", Name: "Agent", Input: map[string]any{
				"subagent_type": "slow", "description": "slow work", "prompt": "SLOW work", "run_in_background": true,
			}}}}
		}
		return testkit.Reply{Text: "noted: " + text}
	}
	e, _ := anthropicEnv(t, h)
	first := e.startLive("-p", "ask the peer", "--model", sonnet, "--agents", string(agents), "--output-format", "stream-json", "--verbose")
	var sid string
	first.await(t, "the session id", func(l map[string]any) bool {
		sid, _ = l["session_id"].(string)
		return sid != ""
	})
	// The peer's "working" status is read after the event that named the
	// task, whose id the run recorded first: once that status shows as the
	// task's progress (the first: a remote agent has no model steps), the
	// id is on the record.
	first.await(t, "the remote task's progress", func(l map[string]any) bool {
		return l["subtype"] == "task_progress"
	})
	if err := first.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-first.done

	return e, peer, string(agents), sid
}
