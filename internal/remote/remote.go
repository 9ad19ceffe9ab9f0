package remote

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"

	"github.com/cadre-dev/cadre/internal/provider/guard"
	"github.com/cadre-dev/cadre/llm"
)

// Config names a remote agent.
type Config struct {
	// Name is the agent definition's name, for messages.
	Name string
	// URL is the agent's base URL: its card is at
	// URL/.well-known/agent-card.json (a URL naming the card itself is
	// taken too).
	URL string
	// Headers are sent with every request to the agent's origin (auth).
	Headers map[string]string
	// HTTPClient makes the requests; default http.DefaultClient's
	// transport.
	HTTPClient *http.Client
	// OnTask, if set, is told each remote task id as soon as it is known
	// (for logs and records: A2A task ids are the server's).
	OnTask func(id string)
	// Ask, if set, puts a task's INPUT_REQUIRED question to the user and
	// returns the answer, which goes back to that task; an error (the
	// user declined) cancels it. Unset, the question is the turn's answer
	// and the next message to the agent answers it.
	Ask func(ctx context.Context, task, question string) (string, error)
	// CancelTimeout bounds, when a run stops, the wait for the remote
	// task's id and then the cancel request; default 10s.
	CancelTimeout time.Duration
	// Limits bound every exchange with the agent as they bound a model's
	// stream: the wait for its first byte, its silences, and the bytes of
	// its answer (zero fields: the defaults). A silent peer must not hang
	// the run, nor a flood fill the memory (issue 22).
	Limits guard.Limits
}

// Agent is a remote agent as an llm.Model. One Agent serves one subagent
// run: it keeps the A2A context id across the run's turns, so a message
// sent to the running (or resumed) agent continues the remote
// conversation.
type Agent struct {
	cfg    Config
	origin string
	http   *http.Client

	mu        sync.Mutex
	observe   func(line string)
	client    *a2aclient.Client
	contextID string
	waiting   a2a.TaskID // a task left input-required: the next message answers it
	track     func(id string)
}

// Track sets fn to be told each remote task id as soon as the server
// names it, besides Config.OnTask: the run records it so that a later
// cadre can subscribe to the task again (Resume).
func (a *Agent) Track(fn func(id string)) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.track = fn
}

func (a *Agent) tracked(id string) {
	a.mu.Lock()
	fn := a.track
	a.mu.Unlock()
	if a.cfg.OnTask != nil {
		a.cfg.OnTask(id)
	}
	if fn != nil {
		fn(id)
	}
}

// Resume subscribes to a task this agent's server is already working on,
// started by an earlier cadre process (its id was recorded through
// Track), and returns its answer as a run's first turn would: after a
// restart, a background remote run goes on instead of being lost (S-W2).
// A task that ended meanwhile is read with GetTask. When ctx ends first,
// the remote task is canceled.
func (a *Agent) Resume(ctx context.Context, id string) (string, error) {
	if strings.TrimSpace(id) == "" {
		return "", a.fail("no remote task id to resume")
	}
	client, err := a.connect(ctx)
	if err != nil {
		return "", err
	}
	ex := exchange{task: a2a.TaskID(id)}
	err = a.follow(ctx, client, &ex)
	if ctx.Err() != nil {
		cctx, stop := context.WithTimeout(context.WithoutCancel(ctx), a.cfg.CancelTimeout)
		_, _ = client.CancelTask(cctx, &a2a.CancelTaskRequest{ID: ex.task}) // best effort: the server's own limits end it otherwise
		stop()
		// Both the cause and ctx's error, which tells the run it was
		// stopped rather than failed (as in sendText).
		if cause := context.Cause(ctx); cause != ctx.Err() {
			return "", fmt.Errorf("remote agent %q: task %s canceled: %w (%w)", a.cfg.Name, id, cause, ctx.Err())
		}
		return "", fmt.Errorf("remote agent %q: task %s canceled: %w", a.cfg.Name, id, ctx.Err())
	}
	if err != nil {
		return "", a.fail("task %s: cannot subscribe to it again nor read it: %v", id, err)
	}
	a.mu.Lock()
	if ex.contextID != "" {
		a.contextID = ex.contextID
	}
	a.mu.Unlock()
	if !ex.final() {
		return "", a.fail("task %s: the server stopped sending its events while it was %s", id, ex.state)
	}
	return a.outcome(ctx, client, &ex)
}

// New checks cfg and returns the agent; nothing is requested yet.
func New(cfg Config) (*Agent, error) {
	origin, err := Origin(cfg.URL)
	if err != nil {
		return nil, fmt.Errorf("remote agent %q: url: %w", cfg.Name, err)
	}
	base := cfg.HTTPClient
	if base == nil {
		base = http.DefaultClient
	}
	rt := base.Transport
	if rt == nil {
		rt = http.DefaultTransport
	}
	hc := *base
	hc.Transport = headers{origin: origin, headers: cfg.Headers, next: limited{next: rt}}
	// A redirect may not take the exchange (and the headers' credentials
	// with a redirect the transport did not see) to another host.
	hc.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if o := req.URL.Scheme + "://" + strings.ToLower(req.URL.Host); o != origin {
			return fmt.Errorf("redirect to %s refused: the agent must answer from %s", o, origin)
		}
		if len(via) >= 10 {
			return errors.New("stopped after 10 redirects")
		}
		return nil
	}
	cfg.Limits = cfg.Limits.WithDefaults()
	if cfg.CancelTimeout <= 0 {
		cfg.CancelTimeout = 10 * time.Second
	}
	return &Agent{cfg: cfg, origin: origin, http: &hc}, nil
}

// Origin is scheme://host[:port] of an absolute http or https URL; any
// other URL is an error.
func Origin(raw string) (string, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return "", fmt.Errorf("%q: %w", raw, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return "", fmt.Errorf("%q: scheme %q: only http and https are allowed", raw, u.Scheme)
	}
	if u.Host == "" || u.User != nil {
		return "", fmt.Errorf("%q: want http(s)://host[:port]/path, without user info", raw)
	}
	return u.Scheme + "://" + strings.ToLower(u.Host), nil
}

// headers adds the definition's headers to requests for the agent's
// origin, and only those: a card or a redirect naming another host never
// gets them.
type headers struct {
	origin  string
	headers map[string]string
	next    http.RoundTripper
}

func (h headers) RoundTrip(req *http.Request) (*http.Response, error) {
	if len(h.headers) > 0 && req.URL.Scheme+"://"+strings.ToLower(req.URL.Host) == h.origin {
		req = req.Clone(req.Context())
		for k, v := range h.headers {
			req.Header.Set(k, v)
		}
	}
	return h.next.RoundTrip(req)
}

// guardKey carries a *watched in a request's context: the limits of the
// exchange it belongs to.
type guardKey struct{}

// watched is one exchange's limits: its watchdog, and the bytes of every
// response body read in it against the reply limit.
type watched struct {
	w   *guard.Watch
	max int64

	mu       sync.Mutex
	used     int64
	tooLarge *guard.TooLargeError
}

// watch starts the limits of one exchange under ctx; the returned context
// carries them to the transport and ends when a time limit passes. Stop
// the watch when the exchange is over.
func (a *Agent) watch(ctx context.Context) (context.Context, *watched) {
	ctx, w := guard.Start(ctx, a.cfg.Limits)
	g := &watched{w: w, max: a.cfg.Limits.MaxReplyBytes}
	return context.WithValue(ctx, guardKey{}, g), g
}

// err is the limit the exchange passed, if any.
func (g *watched) err() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.tooLarge != nil {
		return g.tooLarge
	}
	return g.w.Err()
}

// limited puts each response of an exchange under its limits.
type limited struct{ next http.RoundTripper }

func (l limited) RoundTrip(req *http.Request) (*http.Response, error) {
	g, ok := req.Context().Value(guardKey{}).(*watched)
	if !ok {
		return l.next.RoundTrip(req)
	}
	resp, err := g.w.Middleware(req, l.next.RoundTrip)
	if err == nil && resp != nil && resp.Body != nil {
		resp.Body = &countedBody{ReadCloser: resp.Body, g: g}
	}
	return resp, err
}

type countedBody struct {
	io.ReadCloser
	g *watched
}

func (b *countedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.g.mu.Lock()
	defer b.g.mu.Unlock()
	b.g.used += int64(n)
	if b.g.used > b.g.max {
		b.g.tooLarge = &guard.TooLargeError{Limit: b.g.max}
		return n, b.g.tooLarge
	}
	return n, err
}

// Observe sets fn to be told the text of each status message the remote
// agent sends while it works: its progress lines.
func (a *Agent) Observe(fn func(line string)) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.observe = fn
}

func (a *Agent) progress(ev a2a.Event) {
	u, ok := ev.(*a2a.TaskStatusUpdateEvent)
	if !ok || u.Status.State != a2a.TaskStateWorking || u.Status.Message == nil {
		return
	}
	line := strings.TrimSpace(partsText(u.Status.Message.Parts))
	a.mu.Lock()
	fn := a.observe
	a.mu.Unlock()
	if line != "" && fn != nil {
		fn(line)
	}
}

// Name is "a2a:<agent name>".
func (a *Agent) Name() string { return "a2a:" + a.cfg.Name }

// Stream sends the last user message of req to the remote agent and yields
// its answer as the reply. Failures are *llm.Error of kind ErrOther, never
// retried: a retry would send the task twice.
func (a *Agent) Stream(ctx context.Context, req *llm.Request) iter.Seq2[llm.Event, error] {
	return func(yield func(llm.Event, error) bool) {
		text, err := a.send(ctx, req)
		if err != nil {
			yield(llm.Event{}, err)
			return
		}
		if !yield(llm.Event{Type: llm.EventTextDelta, Delta: text}, nil) {
			return
		}
		resp := llm.Reply(llm.Text(text))
		resp.Message.Role, resp.StopReason, resp.Model = llm.RoleAssistant, llm.StopEndTurn, a.Name()
		yield(llm.Event{Type: llm.EventDone, Response: resp}, nil)
	}
}

func (a *Agent) fail(format string, args ...any) error {
	return &llm.Error{Kind: llm.ErrOther, Provider: "a2a", Message: fmt.Sprintf("remote agent %q at %s: ", a.cfg.Name, a.cfg.URL) + fmt.Sprintf(format, args...)}
}

// connect resolves the agent card once and makes the client.
func (a *Agent) connect(ctx context.Context) (*a2aclient.Client, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.client != nil {
		return a.client, nil
	}
	base, path := a.cfg.URL, ""
	if i := strings.Index(base, "/.well-known/"); i >= 0 {
		base, path = base[:i], base[i:]
	}
	var opts []agentcard.ResolveOption
	if path != "" {
		opts = append(opts, agentcard.WithPath(path))
	}
	cctx, g := a.watch(ctx)
	card, err := agentcard.NewResolver(a.http).Resolve(cctx, base, opts...)
	g.w.Stop()
	if lerr := g.err(); err != nil && lerr != nil {
		return nil, a.fail("cannot read its agent card: %v", lerr)
	}
	if err != nil {
		if ctx.Err() != nil {
			return nil, a.fail("no agent card before the run stopped (%v)", context.Cause(ctx))
		}
		return nil, a.fail("cannot read its agent card (is the server up and the url right?): %v", err)
	}
	// The card says where to send the work; the headers go with it. A card
	// naming another host could collect them: refuse it.
	var ifaces []*a2a.AgentInterface
	for _, i := range card.SupportedInterfaces {
		if i == nil {
			continue
		}
		o, err := Origin(i.URL)
		if err != nil || o != a.origin {
			return nil, a.fail("its agent card names an interface at %q, not on %s: refused, the agent must serve from the origin of its url", i.URL, a.origin)
		}
		ifaces = append(ifaces, i)
	}
	if len(ifaces) == 0 {
		return nil, a.fail("its agent card names no interface")
	}
	client, err := a2aclient.NewFromCard(ctx, card,
		a2aclient.WithJSONRPCTransport(a.http), a2aclient.WithRESTTransport(a.http),
		a2aclient.WithConfig(a2aclient.Config{PreferredTransports: []a2a.TransportProtocol{a2a.TransportProtocolJSONRPC, a2a.TransportProtocolHTTPJSON}}))
	if err != nil {
		return nil, a.fail("no usable interface (cadre speaks JSON-RPC and HTTP+JSON): %v", err)
	}
	a.client = client
	return client, nil
}

// Close releases the client.
func (a *Agent) Close() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.client != nil {
		return a.client.Destroy()
	}
	return nil
}

func lastUserText(req *llm.Request) string {
	for i := len(req.Messages) - 1; i >= 0; i-- {
		if m := req.Messages[i]; m.Role == llm.RoleUser {
			return strings.TrimSpace(m.Text())
		}
	}
	return ""
}

// send runs one exchange: the message out, the events in, until the task
// ends or waits for input.
func (a *Agent) send(ctx context.Context, req *llm.Request) (string, error) {
	text := lastUserText(req)
	if text == "" {
		return "", a.fail("nothing to send: the turn has no text")
	}
	return a.sendText(ctx, text)
}

// sendText sends text, to the task waiting for input if there is one.
func (a *Agent) sendText(ctx context.Context, text string) (string, error) {
	client, err := a.connect(ctx)
	if err != nil {
		return "", err
	}
	msg := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart(text))
	a.mu.Lock()
	msg.ContextID, msg.TaskID = a.contextID, a.waiting
	a.waiting = ""
	a.mu.Unlock()

	// The stream outlives ctx by a little: when the run stops, the remote
	// task is canceled first (once its id is known), so the server hears
	// of it, and only then is the stream dropped.
	sctx, drop := context.WithCancel(context.WithoutCancel(ctx))
	defer drop()
	sctx, limits := a.watch(sctx)
	defer limits.w.Stop()
	var (
		ex       exchange
		idMu     sync.Mutex
		id       a2a.TaskID
		known    = make(chan struct{})
		finished = make(chan struct{})
		watched  = make(chan struct{})
	)
	go func() {
		defer close(watched)
		defer drop()
		select {
		case <-finished:
			return
		case <-ctx.Done():
		}
		deadline := time.NewTimer(a.cfg.CancelTimeout)
		defer deadline.Stop()
		select {
		case <-known:
			idMu.Lock()
			task := id
			idMu.Unlock()
			cctx, stop := context.WithTimeout(context.WithoutCancel(ctx), a.cfg.CancelTimeout)
			_, _ = client.CancelTask(cctx, &a2a.CancelTaskRequest{ID: task}) // best effort, as above
			stop()
		case <-finished:
		case <-deadline.C:
		}
	}()
	var streamErr error
	for ev, err := range client.SendStreamingMessage(sctx, &a2a.SendMessageRequest{Message: msg}) {
		if err != nil {
			streamErr = err
			break
		}
		before := ex.task
		ex.add(ev)
		a.progress(ev)
		if ex.task != before && ex.task != "" {
			if before == "" {
				idMu.Lock()
				id = ex.task
				idMu.Unlock()
				close(known)
			}
			a.tracked(string(ex.task))
		}
		if ex.final() {
			break
		}
	}
	if !ex.final() && ex.task != "" && ctx.Err() == nil && limits.err() == nil {
		// The stream ended early (a dropped connection); the task goes on
		// on the server: pick it up again.
		if err := a.follow(sctx, client, &ex); err == nil {
			streamErr = nil
		} else if streamErr == nil {
			streamErr = err
		}
	}
	if limits.err() != nil && ex.task != "" && ctx.Err() == nil {
		// cadre gave up on the task: the server should stop it too.
		cctx, stop := context.WithTimeout(context.WithoutCancel(ctx), a.cfg.CancelTimeout)
		_, _ = client.CancelTask(cctx, &a2a.CancelTaskRequest{ID: ex.task}) // best effort: the server's own limits end it otherwise
		stop()
	}
	close(finished)
	<-watched
	a.mu.Lock()
	if ex.contextID != "" {
		a.contextID = ex.contextID
	}
	a.mu.Unlock()
	if ctx.Err() != nil {
		// Both the cause (TaskStop, a timeout) and ctx's error, which
		// tells the run it was stopped rather than failed.
		if cause := context.Cause(ctx); cause != ctx.Err() {
			return "", fmt.Errorf("remote agent %q: task %s canceled: %w (%w)", a.cfg.Name, orNone(string(ex.task)), cause, ctx.Err())
		}
		return "", fmt.Errorf("remote agent %q: task %s canceled: %w", a.cfg.Name, orNone(string(ex.task)), ctx.Err())
	}
	if lerr := limits.err(); lerr != nil {
		return "", a.fail("task %s: %v", orNone(string(ex.task)), lerr)
	}
	if streamErr != nil {
		if ex.task == "" {
			return "", a.fail("the request failed: %v", streamErr)
		}
		return "", a.fail("task %s: the stream broke: %v", ex.task, streamErr)
	}
	return a.outcome(ctx, client, &ex)
}

// outcome is the answer of an exchange that reached a final state, or the
// error that says how it ended otherwise; a task that waits for input asks
// the user (Ask) and goes on with the answer.
func (a *Agent) outcome(ctx context.Context, client *a2aclient.Client, ex *exchange) (string, error) {
	switch ex.state {
	case a2a.TaskStateCompleted, "":
		if ex.answer() == "" && ex.state == "" {
			return "", a.fail("the stream ended without a result")
		}
		return ex.answer(), nil
	case a2a.TaskStateInputRequired:
		a.mu.Lock()
		a.waiting = ex.task
		a.mu.Unlock()
		if a.cfg.Ask != nil {
			answer, err := a.cfg.Ask(ctx, string(ex.task), orNone(ex.answer()))
			if err != nil {
				a.mu.Lock()
				a.waiting = ""
				a.mu.Unlock()
				cctx, stop := context.WithTimeout(context.WithoutCancel(ctx), a.cfg.CancelTimeout)
				_, _ = client.CancelTask(cctx, &a2a.CancelTaskRequest{ID: ex.task}) // best effort: the server's own limits end it otherwise
				stop()
				return "", a.fail("task %s needed input (%s) and got none, so it was canceled: %v", ex.task, orNone(ex.answer()), err)
			}
			return a.sendText(ctx, answer)
		}
		return fmt.Sprintf("[The remote agent needs input to go on with task %s; the next message to this agent answers it.]\n%s", ex.task, ex.answer()), nil
	case a2a.TaskStateFailed:
		return "", a.fail("task %s failed: %s", ex.task, orNone(ex.status))
	case a2a.TaskStateCanceled:
		return "", a.fail("task %s was canceled on the server: %s", ex.task, orNone(ex.status))
	case a2a.TaskStateRejected:
		return "", a.fail("task %s was rejected: %s", ex.task, orNone(ex.status))
	case a2a.TaskStateAuthRequired:
		return "", a.fail("task %s needs authentication: set the agent's headers (an agent declared in your settings can carry them): %s", ex.task, orNone(ex.status))
	}
	return "", a.fail("task %s ended the stream in state %s: %s", ex.task, ex.state, orNone(ex.status))
}

// follow picks a task up again after its stream ended early:
// SubscribeToTask, then GetTask when the server will not resubscribe (the
// task may have ended meanwhile).
func (a *Agent) follow(ctx context.Context, client *a2aclient.Client, ex *exchange) error {
	for ev, err := range client.SubscribeToTask(ctx, &a2a.SubscribeToTaskRequest{ID: ex.task}) {
		if err != nil {
			break
		}
		ex.add(ev)
		a.progress(ev)
		if ex.final() {
			return nil
		}
	}
	task, err := client.GetTask(ctx, &a2a.GetTaskRequest{ID: ex.task})
	if err != nil {
		return err
	}
	ex.add(task)
	return nil
}

func orNone(s string) string {
	if s == "" {
		return "(no message)"
	}
	return s
}

// exchange gathers one message's events.
type exchange struct {
	task      a2a.TaskID
	contextID string
	state     a2a.TaskState
	status    string   // the last status message's text
	artifacts []string // artifact text, in order
	message   string   // a direct Message answer
	direct    bool
}

func partsText(parts a2a.ContentParts) string {
	var b []string
	for _, p := range parts {
		if p == nil {
			continue
		}
		if t := p.Text(); t != "" {
			b = append(b, t)
		}
	}
	return strings.Join(b, "\n")
}

func (e *exchange) add(ev a2a.Event) {
	switch v := ev.(type) {
	case *a2a.Message:
		e.direct, e.message, e.contextID = true, partsText(v.Parts), v.ContextID
	case *a2a.Task:
		e.task, e.contextID, e.state = v.ID, v.ContextID, v.Status.State
		if v.Status.Message != nil {
			e.status = partsText(v.Status.Message.Parts)
		}
		e.artifacts = e.artifacts[:0]
		for _, art := range v.Artifacts {
			e.artifacts = append(e.artifacts, partsText(art.Parts))
		}
	case *a2a.TaskStatusUpdateEvent:
		e.task, e.contextID, e.state = v.TaskID, v.ContextID, v.Status.State
		if v.Status.Message != nil {
			e.status = partsText(v.Status.Message.Parts)
		}
	case *a2a.TaskArtifactUpdateEvent:
		e.task, e.contextID = v.TaskID, v.ContextID
		t := partsText(v.Artifact.Parts)
		if v.Append && len(e.artifacts) > 0 {
			e.artifacts[len(e.artifacts)-1] += t
		} else {
			e.artifacts = append(e.artifacts, t)
		}
	}
}

func (e *exchange) final() bool {
	return e.direct || e.state.Terminal() || e.state == a2a.TaskStateInputRequired || e.state == a2a.TaskStateAuthRequired
}

// answer is the artifacts' text, else the last status message's (an agent
// that answers in its completed status), else a direct message's.
func (e *exchange) answer() string {
	if e.direct {
		return e.message
	}
	if t := strings.TrimSpace(strings.Join(e.artifacts, "\n")); t != "" {
		return t
	}
	return e.status
}

var _ llm.Model = (*Agent)(nil)
