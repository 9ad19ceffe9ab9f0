// Package otlpenv sets up OpenTelemetry tracing from the standard OTEL_*
// environment variables: the SDK's tracer provider with a batching OTLP
// exporter (cadre's own, internal/telemetry/otlp), over HTTP (protobuf or
// JSON) or gRPC.
//
// Only the cadre command imports it. It starts nothing unless the
// environment asks for traces — an OTLP endpoint is set, or
// OTEL_TRACES_EXPORTER names otlp — and OTEL_SDK_DISABLED and
// OTEL_TRACES_EXPORTER=none turn it off. Otherwise Open returns a nil
// provider: no SDK, no exporter, no goroutine.
//
// Shutdown sends what is left within a bound (FlushTimeout), so a
// collector that is down or does not answer never holds the command up.
package otlpenv
