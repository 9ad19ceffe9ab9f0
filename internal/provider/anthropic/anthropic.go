package anthropic

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"iter"
	"maps"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/cadre-dev/cadre/internal/catalog"
	"github.com/cadre-dev/cadre/internal/provider/guard"
	"github.com/cadre-dev/cadre/internal/provider/toolcache"
	"github.com/cadre-dev/cadre/llm"
)

const provider = "anthropic"

// defaultMaxTokens bounds a reply when neither the request nor the Config
// says how long it may be, for a model the catalogue does not know; for
// one it knows, the bound is its output limit, at most
// catalogMaxTokens (the API estimates output rate limits from max_tokens,
// so asking for the whole limit on every turn would use them up early).
const (
	defaultMaxTokens = 8192
	catalogMaxTokens = 32000
)

// Config configures a Model.
type Config struct {
	// Model is the provider's model id, e.g. "claude-sonnet-5-5".
	Model string
	// APIKey is sent as a bearer token (API version 2026-10-21); "" reads
	// ANTHROPIC_API_KEY, then ANTHROPIC_AUTH_TOKEN.
	APIKey string
	// BaseURL is the API's base URL; "" reads ANTHROPIC_BASE_URL, else the
	// SDK's default (https://api.anthropic.com).
	BaseURL string
	// Getenv reads the environment; nil means os.Getenv.
	Getenv func(string) string
	// HTTPClient, if set, carries every request.
	HTTPClient *http.Client
	// MaxTokens is used when a Request leaves MaxTokens at 0; 0 here means
	// 8192.
	MaxTokens int64
	// Limits bound every stream: time to the first byte, silence mid-stream
	// and the reply's size.
	Limits guard.Limits
	// Headers are added to every request (a provider profile's headers).
	Headers map[string]string
	// Provider is the name in Name(): a provider profile's; "" means
	// "anthropic". A run recorded under it resumes on the same account.
	Provider string
}

// Model is an Anthropic model. It is safe for concurrent use.
type Model struct {
	name      string // provider name in Name()
	client    sdk.Client
	model     string
	maxTokens int64
	// outputLimit is the model's output limit by the catalogue (0 when
	// not known): a thinking budget never raises max_tokens above it.
	outputLimit int64
	limits      guard.Limits
	// tools holds the tool sets already encoded: children and every turn
	// of a conversation send the same ones.
	tools *toolcache.Cache[[]sdk.ToolUnionParam]
}

var _ llm.Model = (*Model)(nil)

// New returns a Model for cfg. Without an API key it fails with an ErrAuth
// error naming ANTHROPIC_API_KEY, unless a custom base URL is configured:
// local and compatible servers often need no key, so then the requests go
// out without one.
func New(cfg Config) (*Model, error) {
	getenv := cfg.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	if cfg.Model == "" {
		return nil, &llm.Error{Kind: llm.ErrConfig, Provider: provider, Message: "no model id given (want e.g. claude-sonnet-5-5)"}
	}
	// The SDK would read the process environment and the user's Anthropic
	// profile files on its own; cadre resolves credentials itself, through
	// Getenv, so that tests and per-agent configs see only what they set.
	opts := []option.RequestOption{option.WithoutEnvironmentDefaults(), option.WithMaxRetries(0)}

	base, baseSource := cfg.BaseURL, "base URL"
	if base == "" {
		base, baseSource = getenv("ANTHROPIC_BASE_URL"), "ANTHROPIC_BASE_URL"
	}
	if base != "" {
		u, err := url.Parse(base)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, &llm.Error{Kind: llm.ErrConfig, Provider: provider, Message: fmt.Sprintf("%s %q is not an http(s) URL", baseSource, base), Err: err}
		}
		opts = append(opts, option.WithBaseURL(base))
	}

	switch {
	case cfg.APIKey != "":
		opts = append(opts, option.WithAPIKey(cfg.APIKey))
	case getenv("ANTHROPIC_API_KEY") != "":
		opts = append(opts, option.WithAPIKey(getenv("ANTHROPIC_API_KEY")))
	case getenv("ANTHROPIC_AUTH_TOKEN") != "":
		opts = append(opts, option.WithAuthToken(getenv("ANTHROPIC_AUTH_TOKEN")))
	case base == "":
		return nil, &llm.Error{Kind: llm.ErrAuth, Provider: provider,
			Message: "ANTHROPIC_API_KEY is not set: export it, put an API key in the provider settings, or point ANTHROPIC_BASE_URL at a server that needs none"}
	}
	if cfg.HTTPClient != nil {
		opts = append(opts, option.WithHTTPClient(cfg.HTTPClient))
	}
	for _, k := range slices.Sorted(maps.Keys(cfg.Headers)) {
		opts = append(opts, option.WithHeader(k, cfg.Headers[k]))
	}
	var limit int64 // the model's output limit; 0 when not known
	if cm, ok := catalog.Default().Lookup(cfg.Model); ok {
		limit = cm.MaxOutput
	}
	maxTokens := cfg.MaxTokens
	if maxTokens <= 0 {
		maxTokens = defaultMaxTokens
		if limit > 0 {
			maxTokens = min(limit, catalogMaxTokens)
		}
	}
	return &Model{name: cmp.Or(cfg.Provider, provider), client: sdk.NewClient(opts...), model: cfg.Model, maxTokens: maxTokens, outputLimit: limit, limits: cfg.Limits.WithDefaults(),
		tools: &toolcache.Cache[[]sdk.ToolUnionParam]{}}, nil
}

// Name returns the provider's name ("anthropic", or the profile's), ":"
// and the model id.
func (m *Model) Name() string { return m.name + ":" + m.model }

// Stream sends req and streams the reply. Deltas are yielded as they
// arrive; a successful stream ends with EventDone carrying the complete
// response. Errors are *llm.Error, except cancellation, which wraps
// ctx.Err(). Stopping the iteration early closes the connection.
func (m *Model) Stream(ctx context.Context, req *llm.Request) iter.Seq2[llm.Event, error] {
	return func(yield func(llm.Event, error) bool) {
		params, err := m.params(req)
		if err != nil {
			yield(llm.Event{}, err)
			return
		}
		// The watch cancels the request when the provider takes too long to
		// answer or falls silent; stopping it on return tears the connection
		// down however the iteration ends, including when the consumer stops
		// early.
		ctx, watch := guard.Start(ctx, m.limits)
		defer watch.Stop()

		var httpResp *http.Response
		stream := m.client.Messages.NewStreaming(ctx, params, option.WithResponseInto(&httpResp),
			option.WithMiddleware(func(r *http.Request, next option.MiddlewareNext) (*http.Response, error) {
				return watch.Middleware(r, next)
			}))
		defer stream.Close()

		var msg sdk.Message
		acc := newAccumulator(&msg, guard.NewBudget(m.limits))
		events := 0
		complete := false
		for stream.Next() {
			// A cancelled stream may still hold buffered events; they must
			// not reach the consumer after it asked to stop.
			if ctx.Err() != nil {
				break
			}
			ev := stream.Current()
			events++
			if err := acc.add(ev); err != nil {
				var tl *guard.TooLargeError
				if errors.As(err, &tl) {
					yield(llm.Event{}, &llm.Error{Kind: llm.ErrOther, Provider: provider,
						Message: fmt.Sprintf("after %d events: %v", events, err), Err: err})
					return
				}
				yield(llm.Event{}, &llm.Error{Kind: llm.ErrServer, Provider: provider,
					Message: fmt.Sprintf("malformed stream: event %d (%s): %v", events, ev.Type, err), Err: err})
				return
			}
			out, ok := event(ev)
			if ok && !yield(out, nil) {
				return
			}
			if ev.Type == "message_stop" {
				complete = true
			}
		}
		if err := watch.Err(); err != nil {
			yield(llm.Event{}, &llm.Error{Kind: llm.ErrTimeout, Provider: provider,
				Message: fmt.Sprintf("%v, after %d events; nothing received was kept", err, events), Err: err})
			return
		}
		if err := ctx.Err(); err != nil {
			yield(llm.Event{}, fmt.Errorf("anthropic: stream of %s cancelled after %d events: %w", params.Model, events, err))
			return
		}
		if err := stream.Err(); err != nil {
			yield(llm.Event{}, classify(err, httpResp, events))
			return
		}
		if !complete {
			yield(llm.Event{}, &llm.Error{Kind: llm.ErrStreamCut, Provider: provider,
				Message: fmt.Sprintf("stream ended after %d events without message_stop; nothing received was kept", events)})
			return
		}
		yield(llm.Event{Type: llm.EventDone, Response: response(&msg)}, nil)
	}
}

// accumulator builds the message from the stream with the SDK's
// Message.Accumulate, except for the text, thinking and signature deltas,
// which Accumulate joins by string concatenation — a copy of everything
// received so far at every delta, quadratic in the reply's size. Those are
// gathered in builders and set on their blocks when the blocks end. The
// blocks' raw JSON, which Accumulate refreshes at every block stop, is never
// read by cadre, so content_block_stop and message_stop are not passed on
// either: each would copy the whole reply once more.
type accumulator struct {
	msg    *sdk.Message
	budget *guard.Budget
	open   map[int64]*pending
}

// pending holds the text of one block not yet set on it.
type pending struct {
	text, thinking, signature strings.Builder
}

func newAccumulator(msg *sdk.Message, b *guard.Budget) *accumulator {
	return &accumulator{msg: msg, budget: b, open: map[int64]*pending{}}
}

func (a *accumulator) add(ev sdk.MessageStreamEventUnion) error {
	switch ev.Type {
	case "content_block_delta":
		if err := a.checkIndex(ev); err != nil {
			return err
		}
		d := ev.Delta
		if err := a.budget.Add(len(d.Text) + len(d.Thinking) + len(d.Signature) + len(d.PartialJSON)); err != nil {
			return err
		}
		switch d.Type {
		case "text_delta":
			a.pending(ev.Index).text.WriteString(d.Text)
			return nil
		case "thinking_delta":
			a.pending(ev.Index).thinking.WriteString(d.Thinking)
			return nil
		case "signature_delta":
			a.pending(ev.Index).signature.WriteString(d.Signature)
			return nil
		}
	case "content_block_stop":
		if err := a.checkIndex(ev); err != nil {
			return err
		}
		a.flush(ev.Index)
		return nil
	case "message_stop":
		for i := range a.open {
			a.flush(i)
		}
		return nil
	}
	return a.msg.Accumulate(ev)
}

// pending returns the gathered text of block i, started if need be.
func (a *accumulator) pending(i int64) *pending {
	p := a.open[i]
	if p == nil {
		p = &pending{}
		a.open[i] = p
	}
	return p
}

func (a *accumulator) checkIndex(ev sdk.MessageStreamEventUnion) error {
	if ev.Index < 0 || ev.Index >= int64(len(a.msg.Content)) {
		return fmt.Errorf("%s for content block %d, but %d blocks have started", ev.Type, ev.Index, len(a.msg.Content))
	}
	return nil
}

// flush sets the gathered text of block i on it.
func (a *accumulator) flush(i int64) {
	p := a.open[i]
	if p == nil {
		return
	}
	delete(a.open, i)
	cb := &a.msg.Content[i]
	cb.Text += p.text.String()
	cb.Thinking += p.thinking.String()
	cb.Signature += p.signature.String()
}

// event translates a stream event into the llm event it announces, if any.
func event(ev sdk.MessageStreamEventUnion) (llm.Event, bool) {
	switch ev.Type {
	case "content_block_start":
		if ev.ContentBlock.Type == "tool_use" {
			return llm.Event{Type: llm.EventToolUseStart, Index: int(ev.Index), ID: ev.ContentBlock.ID, Name: ev.ContentBlock.Name}, true
		}
	case "content_block_delta":
		switch ev.Delta.Type {
		case "text_delta":
			return llm.Event{Type: llm.EventTextDelta, Index: int(ev.Index), Delta: ev.Delta.Text}, true
		case "thinking_delta":
			return llm.Event{Type: llm.EventThinkingDelta, Index: int(ev.Index), Delta: ev.Delta.Thinking}, true
		}
	}
	return llm.Event{}, false
}
