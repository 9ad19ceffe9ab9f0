package otlp

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/testing/protocmp"
)

// testSpans are spans with every kind of field an export carries: each
// attribute type, events, a remote link with a trace state, a parent,
// statuses, kinds, two instrumentation scopes and a resource.
func testSpans(t *testing.T) []sdktrace.ReadOnlySpan {
	t.Helper()
	rec := tracetest.NewSpanRecorder()
	res := resource.NewWithAttributes("https://opentelemetry.io/schemas/1.26.0",
		attribute.String("service.name", "cadre"), attribute.String("service.version", "1.2.3"))
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec), sdktrace.WithResource(res))
	defer tp.Shutdown(context.Background())

	ts, err := trace.ParseTraceState("vendor=value,other=x")
	if err != nil {
		t.Fatal(err)
	}
	remote := trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: trace.TraceID{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16},
		SpanID:  trace.SpanID{0xa, 0xb, 0xc, 0xd, 0xe, 0xf, 1, 2}, TraceFlags: trace.FlagsSampled,
		TraceState: ts, Remote: true,
	})
	all := []attribute.KeyValue{
		attribute.String("s", "héllo \"quoted\" <tag>"), attribute.String("empty", ""),
		attribute.Bool("t", true), attribute.Bool("f", false),
		attribute.Int64("i", -42), attribute.Int64("zero", 0), attribute.Int64("big", math.MaxInt64),
		attribute.Float64("d", 3.25), attribute.Float64("dzero", 0), attribute.Float64("nan", math.NaN()),
		attribute.Float64("inf", math.Inf(1)), attribute.Float64("ninf", math.Inf(-1)),
		attribute.StringSlice("ss", []string{"a", "", "c"}), attribute.BoolSlice("bs", []bool{true, false}),
		attribute.Int64Slice("is", []int64{1, -1, 0}), attribute.Float64Slice("fs", []float64{0.5, 0}),
		attribute.ByteSlice("bytes", []byte{0, 1, 0xff}),
		attribute.Slice("mixed", attribute.StringValue("x"), attribute.IntValue(7), attribute.BoolValue(false)),
		attribute.Map("map", attribute.String("k", "v"), attribute.Int("n", 3)),
		{Key: "nothing", Value: attribute.Value{}},
	}
	ctx := trace.ContextWithRemoteSpanContext(context.Background(), remote)
	tr := tp.Tracer("github.com/cadre-dev/cadre", trace.WithInstrumentationVersion("v0.1.0"),
		trace.WithSchemaURL("https://opentelemetry.io/schemas/1.26.0"), trace.WithInstrumentationAttributes(attribute.String("scope.attr", "1")))
	ctx, root := tr.Start(ctx, "invoke_agent main", trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(all...),
		trace.WithLinks(trace.Link{SpanContext: remote, Attributes: []attribute.KeyValue{attribute.String("why", "resumed")}}))
	_, chat := tr.Start(ctx, "chat claude", trace.WithSpanKind(trace.SpanKindClient))
	chat.AddEvent("first token", trace.WithAttributes(attribute.Int("n", 1)))
	chat.AddEvent("bare")
	chat.SetStatus(codes.Error, "rate_limit: slow down")
	chat.End()
	root.SetStatus(codes.Ok, "")
	root.End()
	for _, kind := range []trace.SpanKind{trace.SpanKindServer, trace.SpanKindProducer, trace.SpanKindConsumer, trace.SpanKindUnspecified} {
		_, s := tp.Tracer("other").Start(context.Background(), "other "+kind.String(), trace.WithSpanKind(kind))
		s.End()
	}
	return rec.Ended()
}

// official is what the official OTLP/HTTP exporter sends for spans, with
// encoding: the bytes this package's encoders are held to.
func official(t *testing.T, encoding otlptracehttp.Encoding, spans []sdktrace.ReadOnlySpan) []byte {
	t.Helper()
	var (
		mu   sync.Mutex
		body []byte
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		body = b
		mu.Unlock()
	}))
	defer srv.Close()
	exp, err := otlptracehttp.New(context.Background(), otlptracehttp.WithEndpointURL(srv.URL+"/v1/traces"),
		otlptracehttp.WithEncoding(encoding), otlptracehttp.WithRetry(otlptracehttp.RetryConfig{Enabled: false}))
	if err != nil {
		t.Fatal(err)
	}
	if err := exp.ExportSpans(context.Background(), spans); err != nil {
		t.Fatal(err)
	}
	if err := exp.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	return body
}

// TestProtoIsTheOfficialExporters: the protobuf body decodes, with the
// generated OTLP types, to the message the official exporter sends.
func TestProtoIsTheOfficialExporters(t *testing.T) {
	spans := testSpans(t)
	var want, got coltracepb.ExportTraceServiceRequest
	if err := proto.Unmarshal(official(t, otlptracehttp.EncodingProtobuf, spans), &want); err != nil {
		t.Fatal(err)
	}
	if err := proto.Unmarshal(marshalProto(newRequest(spans)), &got); err != nil {
		t.Fatalf("the request does not decode: %v", err)
	}
	// A link's trace state is in the OTLP Link message, and cadre sends
	// it; the official exporter leaves it out.
	for _, rs := range got.ResourceSpans {
		for _, ss := range rs.ScopeSpans {
			for _, s := range ss.Spans {
				for _, l := range s.Links {
					if l.TraceState != "vendor=value,other=x" {
						t.Errorf("link trace state = %q", l.TraceState)
					}
					l.TraceState = ""
				}
			}
		}
	}
	if diff := cmp.Diff(&want, &got, protocmp.Transform(), cmpopts.EquateNaNs()); diff != "" {
		t.Errorf("the request differs from the official exporter's (-official +ours):\n%s", diff)
	}
	if n := len(got.GetResourceSpans()); n != 1 || len(got.ResourceSpans[0].GetScopeSpans()) != 2 {
		t.Errorf("want one resource with two scopes, got %v", prototextShape(&got))
	}
}

func prototextShape(r *coltracepb.ExportTraceServiceRequest) []int {
	var shape []int
	for _, rs := range r.ResourceSpans {
		for _, ss := range rs.ScopeSpans {
			shape = append(shape, len(ss.Spans))
		}
	}
	return shape
}

// TestJSONIsTheOfficialExporters: the OTLP/JSON body is, as JSON, the
// official exporter's: hex ids, 64-bit integers as strings, enums as
// numbers, non-finite doubles by name.
func TestJSONIsTheOfficialExporters(t *testing.T) {
	spans := testSpans(t)
	ours, err := marshalJSON(newRequest(spans))
	if err != nil {
		t.Fatal(err)
	}
	var want, got any
	if err := json.Unmarshal(official(t, otlptracehttp.EncodingJSON, spans), &want); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(ours, &got); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, ours)
	}
	// Ids are hex, which OTLP reads in either case: the official exporter
	// writes upper case, cadre lower case, as W3C trace context does.
	// A link's trace state: see TestProtoIsTheOfficialExporters.
	normalise(got, "")
	normalise(want, "")
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the JSON request differs from the official exporter's (-official +ours):\n%s", diff)
	}
	if !bytes.Contains(ours, []byte(`"traceId":"0102030405060708090a0b0c0d0e0f10"`)) {
		t.Errorf("trace ids are not hex:\n%s", ours)
	}
}

// normalise lower-cases the ids in a decoded OTLP/JSON request and drops
// its links' trace states.
func normalise(v any, key string) {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			if s, ok := e.(string); ok && (k == "traceId" || k == "spanId" || k == "parentSpanId") {
				v[k] = strings.ToLower(s)
				continue
			}
			if k == "traceState" && key == "links" {
				delete(v, k)
				continue
			}
			normalise(e, k)
		}
	case []any:
		for _, e := range v {
			normalise(e, key)
		}
	}
}

// TestEmptyAndZeroScope: a span with no resource, no scope and nothing
// set encodes as the official exporter's.
func TestEmptyAndZeroScope(t *testing.T) {
	spans := []sdktrace.ReadOnlySpan{tracetest.SpanStub{}.Snapshot()}
	if spans[0].InstrumentationScope() != (instrumentation.Scope{}) {
		t.Fatalf("scope = %+v, want the zero scope", spans[0].InstrumentationScope())
	}
	var want, got coltracepb.ExportTraceServiceRequest
	if err := proto.Unmarshal(official(t, otlptracehttp.EncodingProtobuf, spans), &want); err != nil {
		t.Fatal(err)
	}
	if err := proto.Unmarshal(marshalProto(newRequest(spans)), &got); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(&want, &got, protocmp.Transform()); diff != "" {
		t.Errorf("(-official +ours):\n%s", diff)
	}
	if len(newRequest(nil).ResourceSpans) != 0 {
		t.Error("no spans make a request with resources")
	}
}

func TestUnmarshalResponse(t *testing.T) {
	tests := []struct {
		name string
		msg  *coltracepb.ExportTraceServiceResponse
		want partialSuccess
	}{
		{"empty", &coltracepb.ExportTraceServiceResponse{}, partialSuccess{}},
		{"rejected", &coltracepb.ExportTraceServiceResponse{PartialSuccess: &coltracepb.ExportTracePartialSuccess{RejectedSpans: 3, ErrorMessage: "too old"}}, partialSuccess{3, "too old"}},
		{"warning", &coltracepb.ExportTraceServiceResponse{PartialSuccess: &coltracepb.ExportTracePartialSuccess{ErrorMessage: "deprecated field"}}, partialSuccess{0, "deprecated field"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := proto.Marshal(tt.msg)
			if err != nil {
				t.Fatal(err)
			}
			got, err := unmarshalResponse(b)
			if err != nil || got != tt.want {
				t.Errorf("protobuf: %+v, %v; want %+v", got, err, tt.want)
			}
		})
	}
	if _, err := unmarshalResponse([]byte{0x0a, 0x05, 0x08}); err == nil {
		t.Error("a truncated response reads without error")
	}
	for _, tt := range []struct {
		in   string
		want partialSuccess
	}{
		{`{}`, partialSuccess{}},
		{`{"partialSuccess":{"rejectedSpans":"2","errorMessage":"no"}}`, partialSuccess{2, "no"}},
		{`{"partialSuccess":{"rejectedSpans":5}}`, partialSuccess{5, ""}},
	} {
		got, err := unmarshalJSONResponse([]byte(tt.in))
		if err != nil || got != tt.want {
			t.Errorf("JSON %s: %+v, %v; want %+v", tt.in, got, err, tt.want)
		}
	}
}
