package otlp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
)

// sendHTTP is one OTLP/HTTP export: a POST of the body, whose 2xx answer
// may carry a partial success; 429, 502, 503 and 504 are worth retrying,
// as is a connection that failed, and any other status is final.
func (e *Exporter) sendHTTP(ctx context.Context, body []byte) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.cfg.URL, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("traces export: %w", err)
	}
	for k, v := range e.cfg.Headers {
		req.Header.Set(k, v)
	}
	req.Header.Set("User-Agent", e.userAgent)
	if e.cfg.Protocol == HTTPJSON {
		req.Header.Set("Content-Type", "application/json")
	} else {
		req.Header.Set("Content-Type", "application/x-protobuf")
	}
	if e.cfg.Gzip {
		req.Header.Set("Content-Encoding", "gzip")
	}
	resp, err := e.client.Do(req)
	if err != nil {
		return connError(ctx, err)
	}
	defer resp.Body.Close()
	data, err := readBody(resp.Body)
	if err != nil {
		return fmt.Errorf("traces export: %w", err)
	}
	switch code := resp.StatusCode; {
	case code >= 200 && code <= 299:
		return e.httpPartialSuccess(resp.Header.Get("Content-Type"), data)
	case code == http.StatusTooManyRequests, code == http.StatusBadGateway,
		code == http.StatusServiceUnavailable, code == http.StatusGatewayTimeout:
		return &retryable{err: statusError(e.cfg.URL, resp.Status, data), after: retryAfter(resp.Header)}
	default:
		return statusError(e.cfg.URL, resp.Status, data)
	}
}

func (e *Exporter) httpPartialSuccess(contentType string, data []byte) error {
	if len(data) == 0 {
		return nil
	}
	var (
		p   partialSuccess
		err error
	)
	switch strings.TrimSpace(strings.Split(contentType, ";")[0]) {
	case "application/x-protobuf":
		p, err = unmarshalResponse(data)
	case "application/json":
		p, err = unmarshalJSONResponse(data)
	default:
		return nil // not an OTLP answer, but a success
	}
	if err != nil {
		return fmt.Errorf("traces export: the collector's response: %w", err)
	}
	if err := p.err(); err != nil {
		return fmt.Errorf("traces export: %w", err)
	}
	return nil
}

func statusError(url, status string, body []byte) error {
	msg := strings.TrimSpace(string(body))
	if msg == "" {
		msg = "(empty)"
	}
	if len(msg) > 500 {
		msg = strings.ToValidUTF8(msg[:500], "") + "…"
	}
	return errors.New("traces export: " + url + ": " + status + ": " + msg)
}
