package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cadre-dev/cadre/internal/session"
	"github.com/cadre-dev/cadre/internal/testkit"
)

// served is a `cadre serve` process and the URL it listens on.
type served struct {
	cmd *exec.Cmd
	url string
	// token is the one the server printed, or the --token it was given.
	token string
	done  chan struct{}

	mu           sync.Mutex
	stdout, errb bytes.Buffer
}

// serve starts `cadre serve --addr 127.0.0.1:0 args…` and waits for the
// line that says where it listens.
func (e *env) serve(args ...string) *served {
	e.t.Helper()
	s := &served{cmd: exec.Command(bin, append([]string{"serve", "--addr", "127.0.0.1:0"}, args...)...), done: make(chan struct{})}
	for i, a := range args {
		if a == "--token" && i+1 < len(args) {
			s.token = args[i+1]
		}
	}
	s.cmd.Dir, s.cmd.Env = e.dir, e.vars
	out, err := s.cmd.StdoutPipe()
	if err != nil {
		e.t.Fatal(err)
	}
	s.cmd.Stderr = &lockedWriter{mu: &s.mu, w: &s.errb}
	if err := s.cmd.Start(); err != nil {
		e.t.Fatal(err)
	}
	urls := make(chan string, 1)
	go func() {
		defer close(s.done)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			line := sc.Text()
			s.mu.Lock()
			s.stdout.WriteString(line + "\n")
			s.mu.Unlock()
			if rest, ok := strings.CutPrefix(line, "cadre serve: listening on "); ok {
				// A token given by --token is not printed (the line
				// says "?token=<token>"): only a generated one is read.
				if _, tok, ok := strings.Cut(rest, "?token="); ok && s.token == "" {
					s.token = strings.Fields(tok)[0]
				}
				urls <- strings.Fields(rest)[0]
			}
		}
		s.cmd.Wait()
	}()
	e.t.Cleanup(func() {
		s.cmd.Process.Kill()
		<-s.done
	})
	select {
	case s.url = <-urls:
	case <-s.done:
		e.t.Fatalf("cadre serve exited before listening: %s", s.stderr())
	case <-time.After(60 * time.Second):
		e.t.Fatalf("cadre serve did not say where it listens in 60s: %s", s.stderr())
	}
	s.url = strings.TrimSuffix(s.url, "/")
	return s
}

// at is the URL of path with the token as a query parameter (the server
// takes it there, as EventSource needs).
func (s *served) at(path string) string {
	sep := "?"
	if strings.Contains(path, "?") {
		sep = "&"
	}
	return s.url + path + sep + "token=" + s.token
}

func (s *served) stderr() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.errb.String()
}

func (s *served) output() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stdout.String()
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// post sends a JSON body and decodes the JSON answer.
func (s *served) post(t *testing.T, path string, body any, out any) int {
	t.Helper()
	b, _ := json.Marshal(body)
	resp, err := http.Post(s.at(path), "application/json", bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if out != nil {
		if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
			t.Fatalf("POST %s: %d: %v", path, resp.StatusCode, err)
		}
	}
	return resp.StatusCode
}

func TestServeRefusesANonLoopbackAddressWithoutAToken(t *testing.T) {
	e := newEnv(t)
	for _, addr := range []string{"0.0.0.0:0", ":0"} {
		p := e.run("", "serve", "--addr", addr)
		failsWith(t, p, addr, "--token or CADRE_SERVE_TOKEN")
	}
	failsWith(t, e.run("", "serve", "--addr", "nonsense"), "want host:port")
}

// SIGTERM in the middle of a run: the server stops it as /stop does and
// exits 0; the session is on disk as killed, with the prompt in its
// transcript; the event stream that was open ends with the run's result.
func TestServeSIGTERMStopsAndRecordsTheRun(t *testing.T) {
	h, arrived := counting(func(int, testkit.Request) testkit.Reply {
		return testkit.Reply{Stall: testkit.StallNoResponse}
	})
	e, _ := anthropicEnv(t, h)
	s := e.serve("--model", sonnet)
	// A token always, printed as the URL to open (issue 22).
	if !strings.Contains(s.output(), s.url+"/?token="+s.token) || len(s.token) < 32 {
		t.Errorf("the start-up line does not give the URL with its token: %q", s.output())
	}
	if resp, err := http.Get(s.url + "/api/sessions"); err != nil || resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("without the token: %v %v", resp, err)
	} else {
		resp.Body.Close()
	}
	var run struct{ ID string }
	if st := s.post(t, "/api/runs", map[string]any{"prompt": "take your time"}, &run); st != http.StatusCreated || run.ID == "" {
		t.Fatalf("start a run: %d %+v", st, run)
	}
	resp, err := http.Get(s.at("/api/runs/" + run.ID + "/events"))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	waitRequest(t, arrived, 1)
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	stream, _ := io.ReadAll(resp.Body) // ends when the run has
	select {
	case <-s.done:
	case <-time.After(60 * time.Second):
		t.Fatalf("cadre serve did not exit within 60s of SIGTERM: %s", s.stderr())
	}
	if code := s.cmd.ProcessState.ExitCode(); code != 0 {
		t.Errorf("exit %d after SIGTERM, want 0; stderr: %s", code, s.stderr())
	}
	if !strings.Contains(s.output(), "cadre serve: stopped") {
		t.Errorf("stdout %q does not say it stopped", s.output())
	}
	if !strings.Contains(string(stream), "event: result") || !strings.Contains(string(stream), "event: end") {
		t.Errorf("the open stream did not get the result and its end:\n%s", stream)
	}
	infos := listSessions(t, e)
	if len(infos) != 1 || infos[0].ID != run.ID || infos[0].Status != session.StatusKilled {
		t.Fatalf("sessions after SIGTERM: %+v, want the run's, killed", infos)
	}
	shown := showSession(t, e, run.ID)
	if len(shown.Transcript) == 0 || shown.Transcript[0].Message == nil || shown.Transcript[0].Message.Text() != "take your time" {
		t.Errorf("transcript after SIGTERM: %+v", shown.Transcript)
	}
}

// The settings and permission flags reach the runs: a run's init event
// says the mode and lists the tools that --permission-mode and
// --disallowedTools leave.
func TestServeFlagsReachTheRuns(t *testing.T) {
	e := newEnv(t)
	e.write("scenario.yaml", "model: scripted\nagents:\n  main:\n    - text: done\n")
	s := e.serve("--model", "script:scenario.yaml", "--permission-mode", "plan", "--disallowedTools", "Bash")
	var run struct{ ID string }
	if st := s.post(t, "/api/runs", map[string]any{"prompt": "hi", "close": true}, &run); st != http.StatusCreated {
		t.Fatalf("start a run: %d", st)
	}
	resp, err := http.Get(s.at("/api/runs/" + run.ID + "/events"))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	stream, _ := io.ReadAll(resp.Body) // the run closes: the stream ends
	var init struct {
		PermissionMode string   `json:"permissionMode"`
		Tools          []string `json:"tools"`
		Model          string   `json:"model"`
	}
	for _, l := range strings.Split(string(stream), "\n") {
		if d, ok := strings.CutPrefix(l, "data: "); ok && strings.Contains(d, `"subtype":"init"`) {
			json.Unmarshal([]byte(d), &init)
		}
	}
	if init.PermissionMode != "plan" || !strings.HasPrefix(init.Model, "script:") || len(init.Tools) == 0 {
		t.Fatalf("init %+v, want plan mode and the scripted model\n%s", init, stream)
	}
	for _, tl := range init.Tools {
		if tl == "Bash" {
			t.Errorf("tools %v: --disallowedTools Bash left it", init.Tools)
		}
	}
	if !strings.Contains(string(stream), "event: end") {
		t.Errorf("the stream did not end with the run:\n%s", stream)
	}
}
