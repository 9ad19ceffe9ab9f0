package cli

import (
	"context"
	"log/slog"

	"github.com/cadre-dev/cadre"
	"github.com/cadre-dev/cadre/internal/telemetry/otlpenv"
	"go.opentelemetry.io/otel/trace"
)

// openTracing sets up OpenTelemetry tracing as the OTEL_* variables ask
// (docs/tracing.md) and returns the provider for cadre.Options (nil when
// they ask for none) and the flush to defer, which sends what is left
// within otlpenv.FlushTimeout. A configuration that cannot work is
// reported and the run goes on untraced: telemetry never stops the work.
func openTracing(ctx context.Context, log *slog.Logger) (trace.TracerProvider, func()) {
	t, err := otlpenv.Open(ctx, "cadre", cadre.Version(), func(msg string) { log.Warn(msg) })
	if err != nil {
		log.Warn(err.Error() + "; tracing is off")
		return nil, func() {}
	}
	if t.Provider == nil {
		return nil, func() {}
	}
	log.Debug("tracing on", "endpoint", t.Endpoint, "protocol", t.Protocol)
	return t.Provider, func() {
		if err := t.Shutdown(); err != nil {
			log.Warn(err.Error())
		}
	}
}
