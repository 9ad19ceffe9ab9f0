package otlp

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestFromEnv(t *testing.T) {
	tests := []struct {
		name     string
		protocol Protocol
		env      map[string]string
		url      string
		insecure bool
		headers  map[string]string
		timeout  time.Duration
		gzip     bool
	}{
		{name: "HTTP default", protocol: HTTPProtobuf, url: "http://localhost:4318/v1/traces", timeout: DefaultTimeout},
		{name: "general endpoint gets the signal's path", protocol: HTTPJSON,
			env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "https://collector.example:4318/otlp/"},
			url: "https://collector.example:4318/otlp/v1/traces", timeout: DefaultTimeout},
		{name: "traces endpoint used as it is, and wins", protocol: HTTPProtobuf,
			env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://a:1", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://b:2/custom"},
			url: "http://b:2/custom", timeout: DefaultTimeout},
		{name: "gRPC default is plain text", protocol: GRPC, url: "http://localhost:4317" + grpcMethod, insecure: true, timeout: DefaultTimeout},
		{name: "gRPC http scheme", protocol: GRPC, env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4317/ignored"},
			url: "http://127.0.0.1:4317" + grpcMethod, insecure: true, timeout: DefaultTimeout},
		{name: "gRPC bare host is TLS", protocol: GRPC, env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "collector:4317"},
			url: "https://collector:4317" + grpcMethod, timeout: DefaultTimeout},
		{name: "gRPC bare host, insecure", protocol: GRPC,
			env: map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "collector:4317", "OTEL_EXPORTER_OTLP_INSECURE": "true"},
			url: "http://collector:4317" + grpcMethod, insecure: true, timeout: DefaultTimeout},
		{name: "headers, timeout, compression", protocol: HTTPProtobuf,
			env: map[string]string{
				"OTEL_EXPORTER_OTLP_HEADERS":        "ignored=1",
				"OTEL_EXPORTER_OTLP_TRACES_HEADERS": " api-key = s3cr%3Dt ,x-team=cadre,,",
				"OTEL_EXPORTER_OTLP_TIMEOUT":        "2500",
				"OTEL_EXPORTER_OTLP_COMPRESSION":    "GZIP",
			},
			url: "http://localhost:4318/v1/traces", headers: map[string]string{"api-key": "s3cr=t", "x-team": "cadre"},
			timeout: 2500 * time.Millisecond, gzip: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := FromEnv(tt.protocol, func(k string) string { return tt.env[k] })
			if err != nil {
				t.Fatal(err)
			}
			got := []any{c.URL, c.Insecure, c.Headers, c.Timeout, c.Gzip}
			want := []any{tt.url, tt.insecure, tt.headers, tt.timeout, tt.gzip}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestFromEnvErrors(t *testing.T) {
	dir := t.TempDir()
	notPEM := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(notPEM, []byte("not a certificate"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		protocol Protocol
		env      map[string]string
		want     string
	}{
		{HTTPProtobuf, map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "ftp://x"}, "OTEL_EXPORTER_OTLP_ENDPOINT=ftp://x"},
		{HTTPProtobuf, map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "localhost:4318"}, "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"},
		{GRPC, map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "x:1", "OTEL_EXPORTER_OTLP_INSECURE": "yes please"}, "OTEL_EXPORTER_OTLP_INSECURE"},
		{HTTPProtobuf, map[string]string{"OTEL_EXPORTER_OTLP_HEADERS": "novalue"}, `OTEL_EXPORTER_OTLP_HEADERS: "novalue" is not key=value`},
		{HTTPProtobuf, map[string]string{"OTEL_EXPORTER_OTLP_TRACES_HEADERS": "k=%zz"}, "OTEL_EXPORTER_OTLP_TRACES_HEADERS"},
		{HTTPProtobuf, map[string]string{"OTEL_EXPORTER_OTLP_TIMEOUT": "10s"}, "OTEL_EXPORTER_OTLP_TIMEOUT=10s"},
		{HTTPProtobuf, map[string]string{"OTEL_EXPORTER_OTLP_TRACES_COMPRESSION": "zstd"}, "OTEL_EXPORTER_OTLP_TRACES_COMPRESSION=zstd"},
		{HTTPProtobuf, map[string]string{"OTEL_EXPORTER_OTLP_CERTIFICATE": filepath.Join(dir, "missing.pem")}, "OTEL_EXPORTER_OTLP_CERTIFICATE"},
		{HTTPProtobuf, map[string]string{"OTEL_EXPORTER_OTLP_CERTIFICATE": notPEM}, "no PEM certificate"},
		{HTTPProtobuf, map[string]string{"OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE": notPEM}, "OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE is set without OTEL_EXPORTER_OTLP_CLIENT_KEY"},
	}
	for _, tt := range tests {
		_, err := FromEnv(tt.protocol, func(k string) string { return tt.env[k] })
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("FromEnv(%s, %v) error = %v, want one with %q", tt.protocol, tt.env, err, tt.want)
		}
	}
}
