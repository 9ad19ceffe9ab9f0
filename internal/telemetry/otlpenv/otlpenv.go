package otlpenv

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/cadre-dev/cadre/internal/telemetry/otlp"
)

// FlushTimeout bounds Shutdown: the spans not sent by then are dropped.
const FlushTimeout = 3 * time.Second

// Tracing is the tracer provider the environment asked for.
type Tracing struct {
	// Provider is nil when the environment did not ask for traces.
	Provider trace.TracerProvider
	// Endpoint and Protocol say where spans go, for a debug line.
	Endpoint, Protocol string

	sdk *sdktrace.TracerProvider
	exp *otlp.Exporter
}

// Requested reports whether the environment asks for traces, and why not
// when it does not. getenv reads the environment.
func Requested(getenv func(string) string) (bool, string) {
	if strings.EqualFold(strings.TrimSpace(getenv("OTEL_SDK_DISABLED")), "true") {
		return false, "OTEL_SDK_DISABLED=true"
	}
	exporters := list(getenv("OTEL_TRACES_EXPORTER"))
	switch {
	case slices.Contains(exporters, "none"):
		return false, "OTEL_TRACES_EXPORTER=none"
	case slices.Contains(exporters, "otlp"):
		return true, ""
	case len(exporters) > 0:
		return false, "OTEL_TRACES_EXPORTER names no exporter cadre has (otlp)"
	case getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != "" || getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "":
		return true, ""
	}
	return false, "no OTLP endpoint is set"
}

// Open sets up tracing as the process's environment asks, for the service
// (service.name, unless OTEL_SERVICE_NAME or OTEL_RESOURCE_ATTRIBUTES say
// otherwise) at version. When traces are not asked for it returns a
// Tracing with a nil Provider and does nothing else. warn receives what
// goes wrong later — a batch that could not be sent — one line at a time.
//
// A configuration that cannot work (an unknown protocol, an exporter
// cadre lacks) is an error naming the variable; the caller decides
// whether the run goes on without traces.
func Open(ctx context.Context, service, version string, warn func(string)) (*Tracing, error) {
	ok, _ := Requested(os.Getenv)
	for _, e := range list(os.Getenv("OTEL_TRACES_EXPORTER")) {
		if e == "none" || e == "otlp" {
			continue
		}
		msg := fmt.Sprintf("OTEL_TRACES_EXPORTER=%s: cadre exports traces over OTLP only (otlp or none)", os.Getenv("OTEL_TRACES_EXPORTER"))
		if !ok {
			return &Tracing{}, errors.New(msg)
		}
		warn(msg + "; " + e + " ignored")
	}
	if !ok {
		return &Tracing{}, nil
	}
	protoVar := "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"
	protocol := strings.TrimSpace(os.Getenv(protoVar))
	if protocol == "" {
		protoVar = "OTEL_EXPORTER_OTLP_PROTOCOL"
		protocol = strings.TrimSpace(os.Getenv(protoVar))
	}
	if protocol == "" {
		protocol = "http/protobuf"
	}
	// The endpoint, headers, timeout, compression and certificates come
	// from the environment too.
	switch otlp.Protocol(protocol) {
	case otlp.HTTPProtobuf, otlp.HTTPJSON, otlp.GRPC:
	default:
		return &Tracing{}, fmt.Errorf("%s=%s: not a protocol cadre can export with (http/protobuf, http/json or grpc)", protoVar, protocol)
	}
	cfg, err := otlp.FromEnv(otlp.Protocol(protocol), os.Getenv)
	if err != nil {
		return &Tracing{}, fmt.Errorf("OTLP %s trace exporter: %w", protocol, err)
	}
	exp, err := otlp.New(cfg, version)
	if err != nil {
		return &Tracing{}, fmt.Errorf("OTLP %s trace exporter: %w", protocol, err)
	}
	// service.name and service.version default to cadre's; the
	// environment's resource (OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES)
	// wins over them.
	env, err := resource.New(ctx, resource.WithFromEnv(), resource.WithTelemetrySDK())
	if err != nil {
		// A malformed OTEL_RESOURCE_ATTRIBUTES still yields the rest.
		warn(fmt.Sprintf("tracing: resource attributes: %v", err))
	}
	res, err := resource.Merge(resource.NewSchemaless(
		attribute.String("service.name", service), attribute.String("service.version", version),
	), env)
	if err != nil {
		return &Tracing{}, fmt.Errorf("tracing resource: %w", err)
	}
	// Export failures would otherwise go to the standard logger, with a
	// timestamp and no "cadre:" prefix; a collector that stays down fails
	// every batch the same way, which is said once.
	otel.SetErrorHandler(&onceHandler{warn: warn, seen: map[string]bool{}})
	sdk := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	return &Tracing{Provider: sdk, Protocol: protocol, Endpoint: endpoint(), sdk: sdk, exp: exp}, nil
}

// Shutdown sends the spans not sent yet and stops the exporter, giving up
// after FlushTimeout: a collector that is down costs the command that
// long at most.
func (t *Tracing) Shutdown() error {
	if t == nil || t.sdk == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), FlushTimeout)
	defer cancel()
	err := t.sdk.Shutdown(ctx)
	if ctx.Err() != nil {
		// The batcher gave up waiting, but its export may still be
		// retrying; stopping the exporter with the spent context cancels
		// it, so nothing of it outlives this call for long.
		_ = t.exp.Shutdown(ctx) // its error is the spent context's, said below
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("tracing: spans not sent within %s to %s; dropped", FlushTimeout, t.Endpoint)
	}
	if err != nil {
		return fmt.Errorf("tracing: %w", err)
	}
	return nil
}

// onceHandler passes each distinct OpenTelemetry error to warn once.
type onceHandler struct {
	warn func(string)
	mu   sync.Mutex
	seen map[string]bool
}

// maxWarnings bounds what a long session says about tracing: errors whose
// text changes every time (a count, a time) would otherwise never stop.
const maxWarnings = 20

func (h *onceHandler) Handle(err error) {
	msg := "tracing: " + err.Error()
	h.mu.Lock()
	if h.seen[msg] || len(h.seen) > maxWarnings {
		h.mu.Unlock()
		return
	}
	h.seen[msg] = true
	if len(h.seen) > maxWarnings {
		msg = "tracing: more errors; no more are shown"
	}
	h.mu.Unlock()
	h.warn(msg)
}

// endpoint is the endpoint the exporter reads, for messages.
func endpoint() string {
	if e := os.Getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"); e != "" {
		return e
	}
	if e := os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT"); e != "" {
		return e
	}
	return "the default OTLP endpoint"
}

// list splits a comma-separated variable into lower-case names.
func list(v string) []string {
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.ToLower(strings.TrimSpace(s)); s != "" {
			out = append(out, s)
		}
	}
	return out
}
