// Package otlp is cadre's OTLP trace exporter: an sdktrace.SpanExporter
// that sends spans to a collector over OTLP/HTTP (protobuf or JSON) or
// OTLP/gRPC, configured by the standard OTEL_EXPORTER_OTLP_* variables.
//
// It exists for what it does not link. The official exporters
// (otlptracehttp, otlptracegrpc) build their requests from the generated
// OTLP packages, whose collector package carries gRPC's and grpc-gateway's
// service stubs, so either exporter links google.golang.org/grpc, the
// protobuf runtime and genproto: about 75 packages whose initialisation
// every cadre command paid, `-p` runs included, in start-up time and in
// private memory (docs/performance.md). This package encodes the few OTLP
// messages a trace export needs by hand (proto.go, json.go) and speaks
// gRPC's unary call over net/http's own HTTP/2 (grpc.go), so a cadre that
// traces nothing initialises none of that.
//
// What it sends is checked against the official exporter's bytes, and
// the gRPC path against the official gRPC server, in this package's
// tests: both are test-only dependencies.
package otlp
