package otlpenv

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"go.uber.org/goleak"
	"google.golang.org/grpc"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// clearEnv unsets every variable Open reads, for the test's duration.
func clearEnv(t *testing.T) {
	for _, k := range []string{
		"OTEL_SDK_DISABLED", "OTEL_TRACES_EXPORTER", "OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
		"OTEL_EXPORTER_OTLP_PROTOCOL", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_SERVICE_NAME", "OTEL_RESOURCE_ATTRIBUTES",
	} {
		t.Setenv(k, "")
	}
}

func TestRequested(t *testing.T) {
	tests := []struct {
		env  map[string]string
		want bool
	}{
		{nil, false},
		{map[string]string{"OTEL_SERVICE_NAME": "x", "OTEL_EXPORTER_OTLP_HEADERS": "a=b"}, false},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"}, true},
		{map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://127.0.0.1:4318/v1/traces"}, true},
		{map[string]string{"OTEL_TRACES_EXPORTER": "otlp"}, true},
		{map[string]string{"OTEL_TRACES_EXPORTER": " OTLP , console"}, true},
		{map[string]string{"OTEL_TRACES_EXPORTER": "none", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://x"}, false},
		{map[string]string{"OTEL_TRACES_EXPORTER": "console", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://x"}, false},
		{map[string]string{"OTEL_SDK_DISABLED": "TRUE", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://x"}, false},
		{map[string]string{"OTEL_SDK_DISABLED": "false", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://x"}, true},
	}
	for _, tt := range tests {
		got, why := Requested(func(k string) string { return tt.env[k] })
		if got != tt.want {
			t.Errorf("Requested(%v) = %v (%s), want %v", tt.env, got, why, tt.want)
		}
		if !got && why == "" {
			t.Errorf("Requested(%v) gives no reason", tt.env)
		}
	}
}

func TestOpenOffStartsNothing(t *testing.T) {
	clearEnv(t)
	tr, err := Open(context.Background(), "cadre", "1", func(string) {})
	if err != nil || tr.Provider != nil {
		t.Fatalf("Open with no variables = %+v, %v; want no provider", tr, err)
	}
	if err := tr.Shutdown(); err != nil {
		t.Fatal(err)
	}
	// goleak (TestMain) checks that nothing was started.
}

func TestOpenBadConfiguration(t *testing.T) {
	tests := []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:1", "OTEL_EXPORTER_OTLP_PROTOCOL": "thrift"}, "OTEL_EXPORTER_OTLP_PROTOCOL=thrift"},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:1", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "udp"}, "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL=udp"},
		{map[string]string{"OTEL_TRACES_EXPORTER": "zipkin"}, "OTEL_TRACES_EXPORTER=zipkin"},
	}
	for _, tt := range tests {
		clearEnv(t)
		for k, v := range tt.env {
			t.Setenv(k, v)
		}
		tr, err := Open(context.Background(), "cadre", "1", func(string) {})
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Open(%v) error = %v, want one naming %s", tt.env, err, tt.want)
		}
		if tr == nil || tr.Provider != nil {
			t.Errorf("Open(%v) gave a provider with its error", tt.env)
		}
	}
}

// TestOpenExports: each protocol makes a provider whose spans reach the
// endpoint, or for gRPC at least shut down within the bound.
func TestOpenExports(t *testing.T) {
	var posts atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/traces" {
			posts.Add(1)
		}
	}))
	defer srv.Close()
	for _, protocol := range []string{"", "http/protobuf", "http/json", "grpc"} {
		t.Run("protocol="+protocol, func(t *testing.T) {
			clearEnv(t)
			t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", srv.URL)
			t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", protocol)
			if protocol == "grpc" {
				t.Setenv("OTEL_EXPORTER_OTLP_INSECURE", "true")
			}
			var warnings []string
			tr, err := Open(context.Background(), "cadre", "1", func(s string) { warnings = append(warnings, s) })
			if err != nil || tr.Provider == nil {
				t.Fatalf("Open = %+v, %v", tr, err)
			}
			want := protocol
			if want == "" {
				want = "http/protobuf"
			}
			if tr.Protocol != want || tr.Endpoint != srv.URL {
				t.Errorf("Protocol, Endpoint = %q, %q", tr.Protocol, tr.Endpoint)
			}
			before := posts.Load()
			_, span := tr.Provider.Tracer("t").Start(context.Background(), "s")
			span.End()
			err = tr.Shutdown()
			if protocol == "grpc" {
				return // an HTTP server is no gRPC collector: only the bound matters
			}
			if err != nil {
				t.Fatalf("Shutdown: %v (warnings %q)", err, warnings)
			}
			if posts.Load() == before {
				t.Errorf("no span reached the endpoint over %s", want)
			}
		})
	}
}

// traceService is a gRPC OTLP collector that counts the spans it gets.
type traceService struct {
	coltracepb.UnimplementedTraceServiceServer
	spans atomic.Int64
}

func (s *traceService) Export(_ context.Context, req *coltracepb.ExportTraceServiceRequest) (*coltracepb.ExportTraceServiceResponse, error) {
	for _, rs := range req.GetResourceSpans() {
		for _, ss := range rs.GetScopeSpans() {
			s.spans.Add(int64(len(ss.GetSpans())))
		}
	}
	return &coltracepb.ExportTraceServiceResponse{}, nil
}

// TestOpenExportsGRPC: OTEL_EXPORTER_OTLP_PROTOCOL=grpc sends spans to a
// real gRPC OTLP service.
func TestOpenExportsGRPC(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	svc := &traceService{}
	coltracepb.RegisterTraceServiceServer(srv, svc)
	var wg sync.WaitGroup
	wg.Go(func() { srv.Serve(l) })
	defer wg.Wait()
	defer srv.Stop()
	clearEnv(t)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://"+l.Addr().String())
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")
	t.Setenv("OTEL_EXPORTER_OTLP_INSECURE", "true")
	tr, err := Open(context.Background(), "cadre", "1", func(string) {})
	if err != nil || tr.Provider == nil || tr.Protocol != "grpc" {
		t.Fatalf("Open = %+v, %v", tr, err)
	}
	for _, name := range []string{"a", "b"} {
		_, span := tr.Provider.Tracer("t").Start(context.Background(), name)
		span.End()
	}
	if err := tr.Shutdown(); err != nil {
		t.Fatal(err)
	}
	if n := svc.spans.Load(); n != 2 {
		t.Errorf("the gRPC collector got %d spans, want 2", n)
	}
}

func TestOnceHandler(t *testing.T) {
	var got []string
	h := &onceHandler{warn: func(s string) { got = append(got, s) }, seen: map[string]bool{}}
	for range 3 {
		h.Handle(errors.New("connection refused"))
	}
	if len(got) != 1 || got[0] != "tracing: connection refused" {
		t.Fatalf("a repeated error was said %d times: %q", len(got), got)
	}
	for i := range 100 {
		h.Handle(fmt.Errorf("error %d", i))
	}
	if len(got) != maxWarnings+1 || got[len(got)-1] != "tracing: more errors; no more are shown" {
		t.Errorf("100 distinct errors gave %d warnings, the last %q", len(got), got[len(got)-1])
	}
}
