package otlp

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"sync"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// Exporter sends spans to an OTLP collector. It starts no goroutine of its
// own; its HTTP transport's connections close at Shutdown.
type Exporter struct {
	cfg       Config
	userAgent string
	client    *http.Client
	transport *http.Transport
	// send makes one attempt; the HTTP or the gRPC one.
	send func(ctx context.Context, body []byte) error

	// backoff is the wait before the retry after n failed attempts.
	backoff func(n int) time.Duration
	// maxElapsed bounds an export's retries.
	maxElapsed time.Duration

	// stop is cancelled by Shutdown, ending exports still in flight.
	stop   context.Context
	cancel context.CancelFunc
	mu     sync.Mutex
	closed bool
}

var _ sdktrace.SpanExporter = (*Exporter)(nil)

// New returns an exporter sending as cfg says; version goes into the
// User-Agent.
func New(cfg Config, version string) (*Exporter, error) {
	switch cfg.Protocol {
	case HTTPProtobuf, HTTPJSON, GRPC:
	default:
		return nil, fmt.Errorf("OTLP protocol %q: not http/protobuf, http/json or grpc", cfg.Protocol)
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = cfg.TLS
	if cfg.Protocol == GRPC {
		// gRPC is HTTP/2 only: over TLS by ALPN, in plain text with
		// prior knowledge. It does not go through HTTP proxies.
		var p http.Protocols
		if cfg.Insecure {
			p.SetUnencryptedHTTP2(true)
		} else {
			p.SetHTTP2(true)
		}
		tr.Protocols = &p
		tr.Proxy = nil
	}
	e := &Exporter{
		cfg:        cfg,
		userAgent:  "cadre/" + version + " (OTLP trace exporter)",
		client:     &http.Client{Transport: tr},
		transport:  tr,
		backoff:    backoff,
		maxElapsed: time.Minute,
	}
	e.send = e.sendHTTP
	if cfg.Protocol == GRPC {
		e.send = e.sendGRPC
	}
	e.stop, e.cancel = context.WithCancel(context.Background())
	return e, nil
}

// backoff doubles from one second to thirty, with up to a fifth of jitter
// so that many cadre processes do not retry in step.
func backoff(n int) time.Duration {
	d := time.Second << min(n-1, 5)
	d = min(d, 30*time.Second)
	return d - time.Duration(rand.Int64N(int64(d/5)))
}

// retryable is a failed attempt that may succeed later; after is the
// collector's Retry-After (or gRPC retry delay), 0 when it gave none.
type retryable struct {
	err   error
	after time.Duration
}

func (r *retryable) Error() string { return r.err.Error() }
func (r *retryable) Unwrap() error { return r.err }

// ExportSpans sends spans in one request, retrying what the OTLP
// specification calls retryable (throttling, an unavailable collector)
// until ctx ends, Shutdown is called, or a minute has gone.
func (e *Exporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	if len(spans) == 0 {
		return nil
	}
	e.mu.Lock()
	closed := e.closed
	e.mu.Unlock()
	if closed {
		return errors.New("traces export: the exporter is shut down")
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(e.stop, cancel)
	defer stop()

	body, err := e.encode(newRequest(spans))
	if err != nil {
		return fmt.Errorf("traces export: %w", err)
	}
	start := time.Now()
	for n := 1; ; n++ {
		err := e.attempt(ctx, body)
		var r *retryable
		if err == nil || !errors.As(err, &r) {
			return err
		}
		wait := max(e.backoff(n), r.after)
		if time.Since(start)+wait > e.maxElapsed {
			return err
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("%w (gave up retrying: %w)", err, context.Cause(ctx))
		case <-t.C:
		}
	}
}

// attempt is one request, bounded by the configured timeout.
func (e *Exporter) attempt(ctx context.Context, body []byte) error {
	if e.cfg.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, e.cfg.Timeout)
		defer cancel()
	}
	return e.send(ctx, body)
}

// encode is the request's body: the message, gzipped when asked for.
func (e *Exporter) encode(req *exportRequest) ([]byte, error) {
	var msg []byte
	if e.cfg.Protocol == HTTPJSON {
		var err error
		if msg, err = marshalJSON(req); err != nil {
			return nil, err
		}
	} else {
		msg = marshalProto(req)
	}
	if !e.cfg.Gzip {
		return msg, nil
	}
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(msg); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Shutdown ends exports still in flight, and any retry they wait for, and
// closes the idle connections; later exports fail.
func (e *Exporter) Shutdown(ctx context.Context) error {
	e.mu.Lock()
	e.closed = true
	e.mu.Unlock()
	e.cancel()
	e.transport.CloseIdleConnections()
	return nil
}

// connError is a request that got no answer: worth retrying (the
// collector may be restarting), unless it was cancelled or TLS refused the
// collector's certificate or protocol, which waiting does not change.
func connError(ctx context.Context, err error) error {
	err = fmt.Errorf("traces export: %w", err)
	var (
		verify *tls.CertificateVerificationError
		record tls.RecordHeaderError
		alert  tls.AlertError
	)
	if ctx.Err() != nil || errors.As(err, &verify) || errors.As(err, &record) || errors.As(err, &alert) {
		return err
	}
	return &retryable{err: err}
}

// maxResponse bounds what is read of a response: a collector's answer is
// a few bytes; a proxy's error page need not be read whole.
const maxResponse = 64 << 10

func readBody(r io.Reader) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, maxResponse))
	if err != nil {
		return nil, fmt.Errorf("reading the collector's response: %w", err)
	}
	return b, nil
}

// retryAfter is a Retry-After header's delay in seconds (the date form is
// not used by collectors), 0 when absent or unreadable.
func retryAfter(h http.Header) time.Duration {
	s, err := strconv.Atoi(h.Get("Retry-After"))
	if err != nil || s < 0 {
		return 0
	}
	return time.Duration(s) * time.Second
}
