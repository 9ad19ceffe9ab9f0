package otlp

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"
)

// Protocol is an OTLP transport, as OTEL_EXPORTER_OTLP_PROTOCOL names it.
type Protocol string

const (
	HTTPProtobuf Protocol = "http/protobuf"
	HTTPJSON     Protocol = "http/json"
	GRPC         Protocol = "grpc"
)

// Config is where and how spans are sent.
type Config struct {
	Protocol Protocol
	// URL is the HTTP request's URL: the traces endpoint for HTTP, the
	// collector's TraceService/Export method for gRPC.
	URL string
	// Insecure: gRPC without TLS (HTTP/2 with prior knowledge).
	Insecure bool
	// Headers are sent with every export.
	Headers map[string]string
	// Timeout bounds one export attempt.
	Timeout time.Duration
	// Gzip compresses request bodies.
	Gzip bool
	// TLS is nil for the system's defaults.
	TLS *tls.Config
}

// DefaultTimeout is the OTLP specification's default for an export.
const DefaultTimeout = 10 * time.Second

// grpcMethod is the path of the collector's one trace method.
const grpcMethod = "/opentelemetry.proto.collector.trace.v1.TraceService/Export"

// FromEnv reads the OTEL_EXPORTER_OTLP_* variables, each traces-specific
// one (OTEL_EXPORTER_OTLP_TRACES_*) winning over its general one, as the
// OpenTelemetry specification defines them for protocol p. A value that
// cannot be used is an error naming its variable.
func FromEnv(p Protocol, getenv func(string) string) (Config, error) {
	c := Config{Protocol: p, Timeout: DefaultTimeout}
	if err := c.endpoint(getenv); err != nil {
		return Config{}, err
	}
	if name, v := lookup(getenv, "HEADERS"); v != "" {
		h, err := parseHeaders(v)
		if err != nil {
			return Config{}, fmt.Errorf("%s: %w", name, err)
		}
		c.Headers = h
	}
	if name, v := lookup(getenv, "TIMEOUT"); v != "" {
		ms, err := strconv.ParseInt(v, 10, 64)
		if err != nil || ms < 0 {
			return Config{}, fmt.Errorf("%s=%s: not a number of milliseconds", name, v)
		}
		c.Timeout = time.Duration(ms) * time.Millisecond
	}
	if name, v := lookup(getenv, "COMPRESSION"); v != "" {
		switch strings.ToLower(v) {
		case "gzip":
			c.Gzip = true
		case "none":
		default:
			return Config{}, fmt.Errorf("%s=%s: not a compression OTLP has (gzip or none)", name, v)
		}
	}
	tc, err := tlsFromEnv(getenv)
	if err != nil {
		return Config{}, err
	}
	c.TLS = tc
	return c, nil
}

// lookup is the traces-specific variable when it is set, else the general
// one, with its name.
func lookup(getenv func(string) string, suffix string) (name, value string) {
	name = "OTEL_EXPORTER_OTLP_TRACES_" + suffix
	if v := strings.TrimSpace(getenv(name)); v != "" {
		return name, v
	}
	name = "OTEL_EXPORTER_OTLP_" + suffix
	return name, strings.TrimSpace(getenv(name))
}

// endpoint sets URL and Insecure. Over HTTP, the traces endpoint is used as
// it is and the general one gets /v1/traces appended to its path; the
// default is http://localhost:4318. Over gRPC both name the collector
// (http://host:port is plain text, https://host:port TLS; a bare host:port
// is TLS unless OTEL_EXPORTER_OTLP_INSECURE is true) and any path is
// ignored; the default is http://localhost:4317.
func (c *Config) endpoint(getenv func(string) string) error {
	name := "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"
	raw := strings.TrimSpace(getenv(name))
	specific := raw != ""
	if !specific {
		name = "OTEL_EXPORTER_OTLP_ENDPOINT"
		raw = strings.TrimSpace(getenv(name))
	}
	if c.Protocol == GRPC {
		if raw == "" {
			raw = "http://localhost:4317"
		}
		if !strings.Contains(raw, "://") {
			insName, ins := lookup(getenv, "INSECURE")
			insecure, err := parseBool(ins)
			if err != nil {
				return fmt.Errorf("%s=%s: %w", insName, ins, err)
			}
			if insecure {
				raw = "http://" + raw
			} else {
				raw = "https://" + raw
			}
		}
		u, err := url.Parse(raw)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("%s=%s: not a collector address (host:port, http://host:port or https://host:port)", name, raw)
		}
		c.Insecure = u.Scheme == "http"
		c.URL = (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: grpcMethod}).String()
		return nil
	}
	if raw == "" {
		c.URL = "http://localhost:4318/v1/traces"
		return nil
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%s=%s: not an http:// or https:// URL", name, raw)
	}
	if !specific {
		u.Path = strings.TrimSuffix(u.Path, "/") + "/v1/traces"
		u.RawPath = ""
	}
	c.URL = u.String()
	return nil
}

func parseBool(v string) (bool, error) {
	if v == "" {
		return false, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, errors.New("not true or false")
	}
	return b, nil
}

// parseHeaders reads key=value pairs separated by commas, their values
// percent-encoded as the W3C baggage format has them.
func parseHeaders(v string) (map[string]string, error) {
	h := map[string]string{}
	for entry := range strings.SplitSeq(v, ",") {
		if strings.TrimSpace(entry) == "" {
			continue
		}
		k, val, ok := strings.Cut(entry, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			return nil, fmt.Errorf("%q is not key=value", entry)
		}
		dk, err1 := url.PathUnescape(k)
		dv, err2 := url.PathUnescape(strings.TrimSpace(val))
		if err := errors.Join(err1, err2); err != nil {
			return nil, fmt.Errorf("%q: %w", entry, err)
		}
		h[dk] = dv
	}
	return h, nil
}

// tlsFromEnv reads the collector's CA certificate and the client's
// certificate and key; nil when none is set.
func tlsFromEnv(getenv func(string) string) (*tls.Config, error) {
	caName, ca := lookup(getenv, "CERTIFICATE")
	certName, cert := lookup(getenv, "CLIENT_CERTIFICATE")
	keyName, key := lookup(getenv, "CLIENT_KEY")
	if ca == "" && cert == "" && key == "" {
		return nil, nil
	}
	tc := &tls.Config{MinVersion: tls.VersionTLS12}
	if ca != "" {
		pem, err := os.ReadFile(ca)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", caName, err)
		}
		tc.RootCAs = x509.NewCertPool()
		if !tc.RootCAs.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("%s=%s: no PEM certificate in the file", caName, ca)
		}
	}
	switch {
	case cert != "" && key != "":
		pair, err := tls.LoadX509KeyPair(cert, key)
		if err != nil {
			return nil, fmt.Errorf("%s, %s: %w", certName, keyName, err)
		}
		tc.Certificates = []tls.Certificate{pair}
	case cert != "":
		return nil, fmt.Errorf("%s is set without %s", certName, keyName)
	case key != "":
		return nil, fmt.Errorf("%s is set without %s", keyName, certName)
	}
	return tc, nil
}
