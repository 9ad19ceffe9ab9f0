package otlp

import (
	"compress/gzip"
	"context"
	"encoding/json"
	"encoding/pem"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"go.uber.org/goleak"
	"google.golang.org/grpc"
	grpccodes "google.golang.org/grpc/codes"
	_ "google.golang.org/grpc/encoding/gzip" // the server reads gzip requests
	"google.golang.org/grpc/metadata"
	grpcstatus "google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// newExporter is an exporter for cfg that retries at once.
func newExporter(t *testing.T, cfg Config) *Exporter {
	t.Helper()
	if cfg.Timeout == 0 {
		cfg.Timeout = DefaultTimeout
	}
	e, err := New(cfg, "test")
	if err != nil {
		t.Fatal(err)
	}
	e.backoff = func(int) time.Duration { return 0 }
	t.Cleanup(func() { e.Shutdown(context.Background()) })
	return e
}

// received is what a fake collector got.
type received struct {
	header http.Header
	req    *coltracepb.ExportTraceServiceRequest
}

// TestHTTPExport: each HTTP protocol's request reaches the collector with
// its content type, headers and compression, and decodes to the spans.
func TestHTTPExport(t *testing.T) {
	spans := testSpans(t)
	for _, tc := range []struct {
		protocol Protocol
		gzip     bool
	}{{HTTPProtobuf, false}, {HTTPProtobuf, true}, {HTTPJSON, false}, {HTTPJSON, true}} {
		t.Run(string(tc.protocol)+map[bool]string{true: "+gzip"}[tc.gzip], func(t *testing.T) {
			got := make(chan received, 1)
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				var body io.Reader = r.Body
				if r.Header.Get("Content-Encoding") == "gzip" {
					zr, err := gzip.NewReader(r.Body)
					if err != nil {
						t.Error(err)
						return
					}
					body = zr
				}
				b, _ := io.ReadAll(body)
				var req coltracepb.ExportTraceServiceRequest
				if r.Header.Get("Content-Type") == "application/x-protobuf" {
					if err := proto.Unmarshal(b, &req); err != nil {
						t.Error(err)
					}
				} else if !json.Valid(b) {
					t.Errorf("not JSON: %s", b)
				}
				got <- received{r.Header.Clone(), &req}
			}))
			defer srv.Close()
			e := newExporter(t, Config{Protocol: tc.protocol, URL: srv.URL + "/v1/traces", Gzip: tc.gzip, Headers: map[string]string{"api-key": "k1"}})
			if err := e.ExportSpans(context.Background(), spans); err != nil {
				t.Fatal(err)
			}
			r := <-got
			wantType := map[Protocol]string{HTTPProtobuf: "application/x-protobuf", HTTPJSON: "application/json"}[tc.protocol]
			if ct := r.header.Get("Content-Type"); ct != wantType {
				t.Errorf("Content-Type = %q, want %q", ct, wantType)
			}
			if r.header.Get("Api-Key") != "k1" || !strings.HasPrefix(r.header.Get("User-Agent"), "cadre/test") {
				t.Errorf("headers = %v", r.header)
			}
			if gz := r.header.Get("Content-Encoding") == "gzip"; gz != tc.gzip {
				t.Errorf("gzip = %v, want %v", gz, tc.gzip)
			}
			if tc.protocol == HTTPProtobuf && len(prototextShape(r.req)) != 2 {
				t.Errorf("the collector got %v", prototextShape(r.req))
			}
		})
	}
}

// TestHTTPResponses: throttling and an unavailable collector are retried,
// honouring Retry-After; other statuses fail at once with the collector's
// words; a partial success is an error naming what was rejected.
func TestHTTPResponses(t *testing.T) {
	spans := testSpans(t)
	partial, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{PartialSuccess: &coltracepb.ExportTracePartialSuccess{RejectedSpans: 2, ErrorMessage: "too old"}})
	type answer struct {
		status int
		header map[string]string
		body   string
	}
	for _, tc := range []struct {
		name    string
		answers []answer
		calls   int
		wantErr string
	}{
		{"ok", []answer{{status: 200}}, 1, ""},
		{"503 then ok", []answer{{status: 503, body: "busy"}, {status: 200}}, 2, ""},
		{"429 with Retry-After 0, 502, 504, ok", []answer{{status: 429, header: map[string]string{"Retry-After": "0"}}, {status: 502}, {status: 504}, {status: 200}}, 4, ""},
		{"400 is final", []answer{{status: 400, body: "bad span"}, {status: 200}}, 1, "400 Bad Request: bad span"},
		{"401 is final", []answer{{status: 401}}, 1, "401 Unauthorized: (empty)"},
		{"partial success", []answer{{status: 200, header: map[string]string{"Content-Type": "application/x-protobuf"}, body: string(partial)}}, 1, "rejected 2 spans: too old"},
		{"partial success in JSON", []answer{{status: 200, header: map[string]string{"Content-Type": "application/json"}, body: `{"partialSuccess":{"rejectedSpans":"1","errorMessage":"x"}}`}}, 1, "rejected 1 spans: x"},
		{"empty success in JSON", []answer{{status: 200, header: map[string]string{"Content-Type": "application/json"}, body: `{}`}}, 1, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var calls atomic.Int64
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				io.Copy(io.Discard, r.Body)
				a := tc.answers[min(int(calls.Add(1))-1, len(tc.answers)-1)]
				for k, v := range a.header {
					w.Header().Set(k, v)
				}
				w.WriteHeader(a.status)
				io.WriteString(w, a.body)
			}))
			defer srv.Close()
			e := newExporter(t, Config{Protocol: HTTPProtobuf, URL: srv.URL})
			err := e.ExportSpans(context.Background(), spans)
			if (tc.wantErr == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.wantErr)) {
				t.Errorf("error = %v, want %q", err, tc.wantErr)
			}
			if n := calls.Load(); n != int64(tc.calls) {
				t.Errorf("%d requests, want %d", n, tc.calls)
			}
		})
	}
}

// TestRetriesStop: retries end when their time is spent, and when ctx ends.
func TestRetriesStop(t *testing.T) {
	spans := testSpans(t)
	var calls atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	e := newExporter(t, Config{Protocol: HTTPProtobuf, URL: srv.URL})
	e.backoff = func(n int) time.Duration { return time.Hour }
	e.maxElapsed = 30 * time.Minute // no room for a retry
	if err := e.ExportSpans(context.Background(), spans); err == nil || !strings.Contains(err.Error(), "503") {
		t.Errorf("error = %v, want the 503", err)
	}
	if n := calls.Load(); n != 1 {
		t.Errorf("%d requests, want 1 (the next wait would pass the bound)", n)
	}

	e.maxElapsed = 100 * time.Hour
	e.backoff = func(n int) time.Duration { return time.Duration(n-1) * time.Hour } // retry once at once, then wait
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.ExportSpans(ctx, spans) }()
	waitFor(t, func() bool { return calls.Load() == 3 })
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("error = %v, want one wrapping context.Canceled", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a cancelled export kept waiting to retry")
	}
}

// TestShutdownEndsExports: an export waiting on a collector that never
// answers ends when the exporter shuts down, and later exports fail.
func TestShutdownEndsExports(t *testing.T) {
	spans := testSpans(t)
	arrived := make(chan struct{}, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body) // then the server notices the client going
		arrived <- struct{}{}
		<-r.Context().Done()
	}))
	defer srv.Close()
	e := newExporter(t, Config{Protocol: HTTPProtobuf, URL: srv.URL, Timeout: time.Hour})
	done := make(chan error, 1)
	go func() { done <- e.ExportSpans(context.Background(), spans) }()
	<-arrived
	if err := e.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err == nil {
			t.Error("an export cut short by Shutdown succeeded")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Shutdown did not end the export in flight")
	}
	if err := e.ExportSpans(context.Background(), spans); err == nil || !strings.Contains(err.Error(), "shut down") {
		t.Errorf("export after Shutdown: %v", err)
	}
}

// TestHTTPSWithCertificate: OTEL_EXPORTER_OTLP_CERTIFICATE is the CA the
// collector's certificate is checked against.
func TestHTTPSWithCertificate(t *testing.T) {
	spans := testSpans(t)
	var calls atomic.Int64
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { calls.Add(1) }))
	defer srv.Close()
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": srv.URL}
	cfg, err := FromEnv(HTTPProtobuf, func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	if err := newExporter(t, cfg).ExportSpans(context.Background(), spans); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("without the CA: %v, want a certificate error", err)
	}
	env["OTEL_EXPORTER_OTLP_CERTIFICATE"] = ca
	if cfg, err = FromEnv(HTTPProtobuf, func(k string) string { return env[k] }); err != nil {
		t.Fatal(err)
	}
	if err := newExporter(t, cfg).ExportSpans(context.Background(), spans); err != nil || calls.Load() != 1 {
		t.Errorf("with the CA: %v, %d requests", err, calls.Load())
	}
}

// collector is the official gRPC server's OTLP trace service, answering
// with the codes it is given in turn.
type collector struct {
	coltracepb.UnimplementedTraceServiceServer
	mu      sync.Mutex
	codes   []grpccodes.Code
	partial *coltracepb.ExportTracePartialSuccess
	calls   int
	md      metadata.MD
	got     *coltracepb.ExportTraceServiceRequest
}

func (c *collector) Export(ctx context.Context, req *coltracepb.ExportTraceServiceRequest) (*coltracepb.ExportTraceServiceResponse, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls++
	c.md, _ = metadata.FromIncomingContext(ctx)
	c.got = req
	if len(c.codes) > 0 {
		code := c.codes[0]
		c.codes = c.codes[1:]
		if code != grpccodes.OK {
			return nil, grpcstatus.Error(code, "collector says "+code.String())
		}
	}
	return &coltracepb.ExportTraceServiceResponse{PartialSuccess: c.partial}, nil
}

func startCollector(t *testing.T, c *collector) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	coltracepb.RegisterTraceServiceServer(srv, c)
	var wg sync.WaitGroup
	wg.Go(func() { srv.Serve(l) })
	t.Cleanup(func() { srv.Stop(); wg.Wait() })
	return l.Addr().String()
}

// TestGRPCExport: spans reach the official gRPC server's trace service in
// plain text, with metadata and gzip; retryable codes are retried, others
// are final; a partial success is an error.
func TestGRPCExport(t *testing.T) {
	spans := testSpans(t)
	for _, tc := range []struct {
		name    string
		gzip    bool
		codes   []grpccodes.Code
		partial *coltracepb.ExportTracePartialSuccess
		calls   int
		wantErr string
	}{
		{name: "ok", calls: 1},
		{name: "gzip", gzip: true, calls: 1},
		{name: "unavailable, then ok", codes: []grpccodes.Code{grpccodes.Unavailable, grpccodes.ResourceExhausted, grpccodes.OK}, calls: 3},
		{name: "invalid argument is final", codes: []grpccodes.Code{grpccodes.InvalidArgument}, calls: 1, wantErr: "INVALID_ARGUMENT: collector says InvalidArgument"},
		{name: "unauthenticated is final", codes: []grpccodes.Code{grpccodes.Unauthenticated}, calls: 1, wantErr: "UNAUTHENTICATED"},
		{name: "partial success", partial: &coltracepb.ExportTracePartialSuccess{RejectedSpans: 4, ErrorMessage: "quota"}, calls: 1, wantErr: "rejected 4 spans: quota"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &collector{codes: tc.codes, partial: tc.partial}
			addr := startCollector(t, c)
			env := map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": addr, "OTEL_EXPORTER_OTLP_INSECURE": "true", "OTEL_EXPORTER_OTLP_HEADERS": "api-key=k2"}
			if tc.gzip {
				env["OTEL_EXPORTER_OTLP_COMPRESSION"] = "gzip"
			}
			cfg, err := FromEnv(GRPC, func(k string) string { return env[k] })
			if err != nil {
				t.Fatal(err)
			}
			err = newExporter(t, cfg).ExportSpans(context.Background(), spans)
			if (tc.wantErr == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.wantErr)) {
				t.Errorf("error = %v, want %q", err, tc.wantErr)
			}
			c.mu.Lock()
			defer c.mu.Unlock()
			if c.calls != tc.calls {
				t.Errorf("%d calls, want %d", c.calls, tc.calls)
			}
			if got := c.md.Get("api-key"); len(got) != 1 || got[0] != "k2" {
				t.Errorf("metadata = %v", c.md)
			}
			if len(prototextShape(c.got)) != 2 {
				t.Errorf("the collector got %v", prototextShape(c.got))
			}
		})
	}
}

// waitFor polls cond until it holds, failing the test after a deadline.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 10s")
		}
		time.Sleep(time.Millisecond)
	}
}
