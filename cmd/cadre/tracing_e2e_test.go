package main

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/cadre-dev/cadre/internal/testkit"
)

// collector is a fake OTLP/HTTP trace collector: it decodes each
// protobuf export request, as a real collector does, and keeps its spans.
type collector struct {
	*httptest.Server
	mu       sync.Mutex
	spans    []*tracepb.Span
	services []string
	headers  []http.Header
	failures []string
}

func newCollector(t *testing.T) *collector {
	c := &collector{}
	c.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		var req coltracepb.ExportTraceServiceRequest
		if err == nil {
			err = proto.Unmarshal(body, &req)
		}
		c.mu.Lock()
		defer c.mu.Unlock()
		switch {
		case r.Method != http.MethodPost || r.URL.Path != "/v1/traces":
			c.failures = append(c.failures, r.Method+" "+r.URL.Path)
		case r.Header.Get("Content-Type") != "application/x-protobuf":
			c.failures = append(c.failures, "content type "+r.Header.Get("Content-Type"))
		case err != nil:
			c.failures = append(c.failures, "decode: "+err.Error())
		}
		c.headers = append(c.headers, r.Header.Clone())
		for _, rs := range req.GetResourceSpans() {
			for _, kv := range rs.GetResource().GetAttributes() {
				if kv.GetKey() == "service.name" {
					c.services = append(c.services, kv.GetValue().GetStringValue())
				}
			}
			for _, ss := range rs.GetScopeSpans() {
				c.spans = append(c.spans, ss.GetSpans()...)
			}
		}
		out, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
		w.Header().Set("Content-Type", "application/x-protobuf")
		w.Write(out)
	}))
	t.Cleanup(c.Close)
	return c
}

func (c *collector) received() ([]*tracepb.Span, []string, []http.Header, []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.spans), slices.Clone(c.services), slices.Clone(c.headers), slices.Clone(c.failures)
}

func spanAttr(s *tracepb.Span, key string) *commonpb.AnyValue {
	for _, kv := range s.GetAttributes() {
		if kv.GetKey() == key {
			return kv.GetValue()
		}
	}
	return nil
}

// TestTracingOTLPExport runs the real binary with OTEL_EXPORTER_OTLP_ENDPOINT
// set: a main agent that delegates to a subagent, whose spans reach the
// collector as one tree — the main run, its model calls and its Agent
// call; under the call, the child's run and its model call — with the
// headers and the service name the variables give.
func TestTracingOTLPExport(t *testing.T) {
	e := newEnv(t)
	e.write(".claude/agents/reviewer.md", reviewerFile)
	srv := testkit.NewAnthropic(t, spawnReviewer)
	col := newCollector(t)
	e.set("ANTHROPIC_BASE_URL="+srv.URL, "OTEL_EXPORTER_OTLP_ENDPOINT="+col.URL,
		"OTEL_EXPORTER_OTLP_HEADERS=x-team=cadre-e2e", "OTEL_SERVICE_NAME=cadre-under-test")
	p := e.run("", "-p", "review my code", "--model", "claude-sonnet-5-5")
	if p.code != 0 {
		t.Fatalf("exit %d: %s\n%s", p.code, p.stderr, p.stdout)
	}
	spans, services, headers, failures := col.received()
	if len(failures) > 0 {
		t.Fatalf("the collector got bad requests: %v", failures)
	}
	if len(headers) == 0 || headers[0].Get("x-team") != "cadre-e2e" {
		t.Errorf("OTEL_EXPORTER_OTLP_HEADERS did not reach the collector: %v", headers)
	}
	if len(services) == 0 || services[0] != "cadre-under-test" {
		t.Errorf("service.name = %q, want OTEL_SERVICE_NAME's", services)
	}
	byID := map[string]*tracepb.Span{}
	for _, s := range spans {
		byID[string(s.GetSpanId())] = s
	}
	children := func(p *tracepb.Span) []string {
		var out []string
		for _, s := range spans {
			if string(s.GetParentSpanId()) == string(p.GetSpanId()) {
				out = append(out, s.GetName())
			}
		}
		slices.Sort(out)
		return out
	}
	var root, call, child *tracepb.Span
	for _, s := range spans {
		switch s.GetName() {
		case "invoke_agent main":
			root = s
		case "execute_tool Agent":
			call = s
		case "invoke_agent reviewer":
			child = s
		}
	}
	if root == nil || call == nil || child == nil {
		t.Fatalf("spans %v lack the main run, the Agent call or the child's run", names(spans))
	}
	if len(root.GetParentSpanId()) != 0 {
		t.Errorf("the main run span has a parent")
	}
	if got, want := children(root), []string{"chat claude-sonnet-5-5", "chat claude-sonnet-5-5", "execute_tool Agent"}; !slices.Equal(got, want) {
		t.Errorf("children of the main run = %q, want %q", got, want)
	}
	if got, want := children(call), []string{"invoke_agent reviewer"}; !slices.Equal(got, want) {
		t.Errorf("children of the Agent call = %q, want %q", got, want)
	}
	if got, want := children(child), []string{"chat claude-sonnet-5-5"}; !slices.Equal(got, want) {
		t.Errorf("children of the reviewer's run = %q, want %q", got, want)
	}
	for _, s := range spans {
		if string(s.GetTraceId()) != string(root.GetTraceId()) {
			t.Errorf("span %s is in another trace", s.GetName())
		}
		if s.GetName() == "chat claude-sonnet-5-5" {
			if v := spanAttr(s, "gen_ai.provider.name").GetStringValue(); v != "anthropic" {
				t.Errorf("chat span gen_ai.provider.name = %q", v)
			}
			if s.GetKind() != tracepb.Span_SPAN_KIND_CLIENT {
				t.Errorf("chat span kind = %v", s.GetKind())
			}
		}
	}
	if v := spanAttr(call, "gen_ai.tool.call.id").GetStringValue(); v != "toolu_spawn_1" {
		t.Errorf("the Agent call span's gen_ai.tool.call.id = %q", v)
	}
}

func names(spans []*tracepb.Span) []string {
	out := make([]string, len(spans))
	for i, s := range spans {
		out[i] = s.GetName()
	}
	return out
}

// TestTracingOff: variables that turn tracing off leave the collector
// untouched, though an endpoint is set.
func TestTracingOff(t *testing.T) {
	for _, off := range []string{"OTEL_TRACES_EXPORTER=none", "OTEL_SDK_DISABLED=true"} {
		t.Run(off, func(t *testing.T) {
			e := newEnv(t)
			srv := testkit.NewAnthropic(t, testkit.Queue(testkit.Reply{Text: "hello"}))
			col := newCollector(t)
			e.set("ANTHROPIC_BASE_URL="+srv.URL, "OTEL_EXPORTER_OTLP_ENDPOINT="+col.URL, off)
			p := e.run("", "-p", "hi", "--model", "claude-sonnet-5-5")
			if p.code != 0 {
				t.Fatalf("exit %d: %s", p.code, p.stderr)
			}
			if spans, _, headers, _ := col.received(); len(headers) > 0 {
				t.Errorf("with %s, the collector got %d requests (%d spans)", off, len(headers), len(spans))
			}
		})
	}
}

// TestTracingCollectorDown: a collector that refuses connections, or takes
// them and never answers, costs the run its spans, not its result: cadre
// ends successfully, says why on stderr, and does not wait for the
// exporter's and the batcher's own timeouts — set to two minutes here,
// past e.run's limit, so a flush that waited for them would fail the test.
func TestTracingCollectorDown(t *testing.T) {
	refused := func(t *testing.T) string {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := l.Addr().String()
		l.Close()
		return "http://" + addr
	}
	silent := func(t *testing.T) string {
		stop := make(chan struct{})
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-stop:
			case <-r.Context().Done():
			}
		}))
		t.Cleanup(srv.Close)
		t.Cleanup(func() { close(stop) }) // runs first: the handlers return
		return srv.URL
	}
	for _, tc := range []struct {
		name     string
		endpoint func(*testing.T) string
	}{
		{"refused", refused},
		{"silent", silent},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			srv := testkit.NewAnthropic(t, testkit.Queue(testkit.Reply{Text: "the answer"}))
			e.set("ANTHROPIC_BASE_URL="+srv.URL, "OTEL_EXPORTER_OTLP_ENDPOINT="+tc.endpoint(t), "OTEL_EXPORTER_OTLP_TIMEOUT=120000", "OTEL_BSP_EXPORT_TIMEOUT=120000")
			p := e.run("", "-p", "hi", "--model", "claude-sonnet-5-5")
			if p.code != 0 || !strings.Contains(p.stdout, "the answer") {
				t.Fatalf("exit %d, stdout %q; stderr:\n%s", p.code, p.stdout, p.stderr)
			}
			if !strings.Contains(p.stderr, "cadre: warning: tracing: ") {
				t.Errorf("stderr does not say the spans were lost:\n%s", p.stderr)
			}
		})
	}
}
