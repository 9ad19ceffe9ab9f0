package openai

import (
	"context"
	"fmt"
	"iter"
	"maps"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/cadre-dev/cadre/internal/provider/guard"
	"github.com/cadre-dev/cadre/internal/provider/toolcache"
	"github.com/cadre-dev/cadre/llm"
)

// Environment variables read when Config leaves the key or base URL empty.
const (
	EnvAPIKey  = "OPENAI_API_KEY"
	EnvBaseURL = "OPENAI_BASE_URL"
)

// officialHost is the host of the OpenAI API itself; any other base URL is a
// compatible server.
const officialHost = "api.openai.com"

// Config configures a Model.
type Config struct {
	// Model is the provider's model id, for example "gpt-4o-mini" or
	// "qwen3-max".
	Model string
	// APIKey is the key; "" reads OPENAI_API_KEY through Getenv.
	APIKey string
	// BaseURL is the API's base URL, for example "http://localhost:8000/v1";
	// "" reads OPENAI_BASE_URL through Getenv, and if that is empty too the
	// official API is used.
	BaseURL string
	// Getenv reads the environment; nil means os.Getenv. No other
	// environment variable is consulted.
	Getenv func(string) string
	// HTTPClient makes the requests; nil means http.DefaultClient.
	HTTPClient *http.Client
	// Provider is the name used in Name() and in errors; "" means "openai".
	Provider string
	// Limits bound every stream: time to the first byte, silence mid-stream
	// and the reply's size.
	Limits guard.Limits
	// Headers are added to every request (a provider profile's headers).
	Headers map[string]string
	// Organization is sent as OpenAI-Organization when set.
	Organization string
}

// Model is an OpenAI or OpenAI-compatible chat model. It is safe for
// concurrent use.
type Model struct {
	provider string
	model    string
	// custom is true for a base URL other than the official API: such
	// servers know max_tokens but not max_completion_tokens.
	custom bool
	chat   openai.ChatCompletionService
	limits guard.Limits
	// tools holds the tool sets already encoded: children and every turn
	// of a conversation send the same ones.
	tools *toolcache.Cache[[]openai.ChatCompletionToolUnionParam]
}

var _ llm.Model = (*Model)(nil)

// New returns a Model for cfg. Without a key it fails with an llm.ErrAuth
// error naming OPENAI_API_KEY, unless a base URL points at a compatible
// server, which usually needs none.
func New(cfg Config) (*Model, error) {
	provider := cfg.Provider
	if provider == "" {
		provider = "openai"
	}
	getenv := cfg.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	if strings.TrimSpace(cfg.Model) == "" {
		return nil, &llm.Error{Kind: llm.ErrConfig, Provider: provider, Message: "no model name given (want e.g. openai:gpt-4o-mini)"}
	}
	key := cfg.APIKey
	if key == "" {
		key = getenv(EnvAPIKey)
	}
	base := cfg.BaseURL
	baseFrom := "the configured base URL"
	if base == "" {
		base = getenv(EnvBaseURL)
		baseFrom = EnvBaseURL
	}
	base = strings.TrimSpace(base)
	if key == "" && base == "" {
		return nil, &llm.Error{Kind: llm.ErrAuth, Provider: provider,
			Message: EnvAPIKey + " is not set: export it or put the key in the config (a server given by " + EnvBaseURL + " may need none)"}
	}

	// The SDK's NewClient would read OPENAI_* from the process environment
	// on its own and could override this Config; the service is built from
	// explicit options only.
	opts := []option.RequestOption{option.WithMaxRetries(0)}
	custom := false
	if base != "" {
		u, err := url.Parse(base)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, &llm.Error{Kind: llm.ErrConfig, Provider: provider,
				Message: fmt.Sprintf("%s %q is not an http(s) URL such as http://localhost:8000/v1", baseFrom, base)}
		}
		// Requests go to base + "chat/completions": without the trailing
		// slash, ".../v1" would lose its last segment.
		if !strings.HasSuffix(u.Path, "/") {
			u.Path += "/"
		}
		opts = append(opts, option.WithBaseURL(u.String()))
		custom = !strings.EqualFold(u.Hostname(), officialHost)
	} else {
		opts = append(opts, option.WithEnvironmentProduction())
	}
	if key != "" {
		opts = append(opts, option.WithAPIKey(key))
	}
	if cfg.HTTPClient != nil {
		opts = append(opts, option.WithHTTPClient(cfg.HTTPClient))
	}
	if cfg.Organization != "" {
		opts = append(opts, option.WithOrganization(cfg.Organization))
	}
	for _, k := range slices.Sorted(maps.Keys(cfg.Headers)) {
		opts = append(opts, option.WithHeader(k, cfg.Headers[k]))
	}
	return &Model{
		provider: provider,
		model:    cfg.Model,
		custom:   custom,
		chat:     openai.NewChatCompletionService(opts...),
		limits:   cfg.Limits.WithDefaults(),
		tools:    &toolcache.Cache[[]openai.ChatCompletionToolUnionParam]{},
	}, nil
}

// Name returns "provider:model".
func (m *Model) Name() string { return m.provider + ":" + m.model }

// Stream sends req as a streamed chat completion. It yields text and
// thinking deltas and tool call starts as they arrive and ends with
// EventDone carrying the assembled response; a failure is yielded once, as
// an *llm.Error, or as an error wrapping ctx.Err() when ctx ends. Stopping
// the iteration early closes the stream.
func (m *Model) Stream(ctx context.Context, req *llm.Request) iter.Seq2[llm.Event, error] {
	return func(yield func(llm.Event, error) bool) {
		params, err := m.params(req)
		if err != nil {
			yield(llm.Event{}, err)
			return
		}
		// The watch cancels the request when the server takes too long to
		// answer or falls silent; stopping it on return tears the connection
		// down however the iteration ends, including when the consumer stops
		// early.
		ctx, watch := guard.Start(ctx, m.limits)
		defer watch.Stop()

		var httpResp *http.Response
		stream := m.chat.NewStreaming(ctx, params, option.WithResponseInto(&httpResp),
			option.WithMiddleware(func(r *http.Request, next option.MiddlewareNext) (*http.Response, error) {
				return watch.Middleware(r, next)
			}))
		defer stream.Close()

		asm := newAssembler()
		budget := guard.NewBudget(m.limits)
		chunks := 0
		for stream.Next() {
			// A cancelled stream may still hold buffered chunks; they must
			// not reach the consumer after it asked to stop.
			if ctx.Err() != nil {
				break
			}
			chunks++
			chunk := stream.Current()
			if err := budget.Add(contentBytes(chunk)); err != nil {
				yield(llm.Event{}, m.errorf(llm.ErrOther, fmt.Errorf("after %d chunks: %w", chunks, err)))
				return
			}
			events, err := asm.add(chunk)
			if err != nil {
				yield(llm.Event{}, m.errorf(llm.ErrServer, fmt.Errorf("malformed stream: chunk %d: %w", chunks, err)))
				return
			}
			for _, ev := range events {
				if ctx.Err() != nil {
					break
				}
				if !yield(ev, nil) {
					return
				}
			}
		}
		if err := watch.Err(); err != nil {
			yield(llm.Event{}, m.errorf(llm.ErrTimeout, fmt.Errorf("%w, after %d chunks", err, chunks)))
			return
		}
		if ctx.Err() != nil {
			yield(llm.Event{}, m.cancelled(ctx, chunks))
			return
		}
		if err := stream.Err(); err != nil {
			yield(llm.Event{}, m.streamError(err, httpResp, chunks))
			return
		}
		resp, err := asm.response()
		if err != nil {
			yield(llm.Event{}, m.errorf(llm.ErrStreamCut, fmt.Errorf("after %d chunks: %w", chunks, err)))
			return
		}
		yield(llm.Event{Type: llm.EventDone, Response: resp}, nil)
	}
}
