package otlp

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// gRPC's unary call over HTTP/2 (grpc/doc/PROTOCOL-HTTP2.md): a POST to
// the method's path whose body is one length-prefixed message, answered
// by one message and a grpc-status in the trailers (or, when the call
// failed before any message, in the headers: "trailers only").

// grpcRetryable reports whether the OTLP specification calls a gRPC status
// code retryable.
func grpcRetryable(code int) bool {
	switch code {
	case 1, // CANCELLED
		4,  // DEADLINE_EXCEEDED
		8,  // RESOURCE_EXHAUSTED (the collector throttles)
		10, // ABORTED
		11, // OUT_OF_RANGE
		14, // UNAVAILABLE
		15: // DATA_LOSS
		return true
	}
	return false
}

// grpcCodeName is a status code's name, for messages.
func grpcCodeName(code int) string {
	names := [...]string{
		"OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED", "NOT_FOUND", "ALREADY_EXISTS",
		"PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION", "ABORTED", "OUT_OF_RANGE",
		"UNIMPLEMENTED", "INTERNAL", "UNAVAILABLE", "DATA_LOSS", "UNAUTHENTICATED",
	}
	if code >= 0 && code < len(names) {
		return names[code]
	}
	return "code " + strconv.Itoa(code)
}

func (e *Exporter) sendGRPC(ctx context.Context, body []byte) error {
	frame := make([]byte, 5, 5+len(body))
	if e.cfg.Gzip {
		frame[0] = 1 // compressed, with grpc-encoding's codec
	}
	binary.BigEndian.PutUint32(frame[1:], uint32(len(body)))
	frame = append(frame, body...)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.cfg.URL, bytes.NewReader(frame))
	if err != nil {
		return fmt.Errorf("traces export: %w", err)
	}
	for k, v := range e.cfg.Headers {
		req.Header.Set(k, v)
	}
	req.Header.Set("Content-Type", "application/grpc")
	req.Header.Set("TE", "trailers")
	req.Header.Set("User-Agent", e.userAgent)
	if e.cfg.Gzip {
		req.Header.Set("Grpc-Encoding", "gzip")
	}
	if d, ok := ctx.Deadline(); ok {
		ms := max(1, time.Until(d).Milliseconds())
		req.Header.Set("Grpc-Timeout", strconv.FormatInt(ms, 10)+"m")
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
	if resp.StatusCode != http.StatusOK {
		// Not a gRPC server's answer: a proxy's, or a server that does
		// not speak gRPC. The status maps to a code as gRPC's own
		// clients map it; the ones that map to UNAVAILABLE are worth
		// retrying.
		err := statusError(e.cfg.URL, resp.Status, data)
		switch resp.StatusCode {
		case http.StatusTooManyRequests, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
			return &retryable{err: err}
		}
		return err
	}
	st := resp.Trailer.Get("Grpc-Status")
	msg := resp.Trailer.Get("Grpc-Message")
	if st == "" { // trailers only
		st, msg = resp.Header.Get("Grpc-Status"), resp.Header.Get("Grpc-Message")
	}
	code, err := strconv.Atoi(st)
	if err != nil || code < 0 {
		return fmt.Errorf("traces export: %s: the answer has no gRPC status (grpc-status %q)", e.cfg.URL, st)
	}
	if code != 0 {
		if m, err := url.PathUnescape(msg); err == nil {
			msg = m
		}
		err := fmt.Errorf("traces export: %s: %s: %s", e.cfg.URL, grpcCodeName(code), msg)
		// RESOURCE_EXHAUSTED is retryable only when the server says
		// when to retry; cadre reads no RetryInfo detail, so it waits
		// its own backoff, as the official exporter does without one.
		if grpcRetryable(code) {
			return &retryable{err: err}
		}
		return err
	}
	return grpcPartialSuccess(resp.Header.Get("Grpc-Encoding"), data)
}

// grpcPartialSuccess reads the response message, if any, for rejected
// spans.
func grpcPartialSuccess(encoding string, data []byte) error {
	if len(data) < 5 {
		return nil
	}
	n := binary.BigEndian.Uint32(data[1:5])
	if uint64(n) > uint64(len(data)-5) {
		return fmt.Errorf("traces export: the collector's response: %w", errTruncated)
	}
	msg := data[5 : 5+n]
	if data[0] == 1 {
		if !strings.EqualFold(encoding, "gzip") {
			return fmt.Errorf("traces export: the collector's response is compressed with %q, not gzip", encoding)
		}
		zr, err := gzip.NewReader(bytes.NewReader(msg))
		if err != nil {
			return fmt.Errorf("traces export: the collector's response: %w", err)
		}
		if msg, err = io.ReadAll(io.LimitReader(zr, maxResponse)); err != nil {
			return fmt.Errorf("traces export: the collector's response: %w", err)
		}
	}
	p, err := unmarshalResponse(msg)
	if err != nil {
		return fmt.Errorf("traces export: the collector's response: %w", err)
	}
	if err := p.err(); err != nil {
		return fmt.Errorf("traces export: %w", err)
	}
	return nil
}
