package testkit

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"
)

// fake is the part of a fake provider server that does not depend on the
// provider's protocol: the listener, the request log, the scripted Handler
// and the plumbing around each reply.
type fake struct {
	handler Handler
	rec     recorder
	srv     *httptest.Server
	// closing is closed when the test ends, so handlers parked on Reply.Wait
	// return and httptest.Server.Close, which waits for them, does not hang.
	closing chan struct{}
	stop    sync.Once
	// ids numbers request ids, message ids and tool call ids, so they are
	// unique within a server.
	ids atomic.Int64
}

// start serves serve on 127.0.0.1 until the test ends and returns the base
// URL, without a trailing slash.
func (f *fake) start(t testing.TB, h Handler, serve http.HandlerFunc) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("testkit: listen on 127.0.0.1: %v", err)
	}
	f.handler = h
	f.closing = make(chan struct{})
	f.srv = httptest.NewUnstartedServer(serve)
	f.srv.Listener.Close()
	f.srv.Listener = ln
	f.srv.Start()
	t.Cleanup(f.Close)
	return f.srv.URL
}

// Close stops the server before the test ends, as a provider that went
// away: connections to its URL are refused from then on.
func (f *fake) Close() {
	f.stop.Do(func() {
		close(f.closing)
		f.srv.Close()
	})
}

// route is the one endpoint a fake server answers.
type route struct {
	// name is the provider's, for refusals ("Anthropic").
	name string
	// path is served for POST only.
	path string
	// refuse answers a request the server will not pass to its Handler
	// (400 or 404) with an error body in the provider's format.
	refuse func(w http.ResponseWriter, status int, msg string)
}

// serve handles one request to rt: it records the request (its End when
// answer returns), refuses a wrong method or path and a body that is not
// JSON, decodes the body into in, asks the Handler for the reply, holds it
// for Reply.Wait, sets Reply.Header and then lets answer write the reply in
// the provider's format. A request whose context ends, or whose test ends,
// while it waits gets no answer.
func (f *fake) serve(w http.ResponseWriter, r *http.Request, rt route, in any, answer func(Reply)) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		rt.refuse(w, http.StatusBadRequest, "testkit: reading request body: "+err.Error())
		return
	}
	req := Request{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Body: body, Start: time.Now()}
	i := f.rec.add(req)
	defer f.rec.finish(i)

	if r.Method != http.MethodPost || r.URL.Path != rt.path {
		rt.refuse(w, http.StatusNotFound, fmt.Sprintf("testkit: the fake %s server serves only POST %s, not %s %s", rt.name, rt.path, r.Method, r.URL.Path))
		return
	}
	if err := json.Unmarshal(body, in); err != nil {
		rt.refuse(w, http.StatusBadRequest, "testkit: request body is not JSON: "+err.Error())
		return
	}

	reply := f.handler(req)
	if reply.Wait != nil {
		select {
		case <-reply.Wait:
		case <-r.Context().Done():
			return
		case <-f.closing:
			return
		}
	}
	if reply.Stall == StallNoResponse {
		f.hold(r)
		return
	}
	for k, v := range reply.Header {
		w.Header().Set(k, v)
	}
	answer(reply)
}

// hold blocks, saying nothing, until the client hangs up or the test ends:
// the silence of a provider that hangs.
func (f *fake) hold(r *http.Request) {
	select {
	case <-r.Context().Done():
	case <-f.closing:
	}
}

// wantsError reports whether r asks for an HTTP error instead of a reply.
func wantsError(r Reply) bool {
	return r.Status != 0 && r.Status != http.StatusOK
}

// errorMessage is the error text for a Status reply: Reply.ErrorMessage, or
// the status's own text.
func errorMessage(r Reply) string {
	if r.ErrorMessage != "" {
		return r.ErrorMessage
	}
	if t := http.StatusText(r.Status); t != "" {
		return t
	}
	return fmt.Sprintf("testkit: HTTP %d", r.Status)
}

// writeError answers with status and the provider's error body.
func writeError(w http.ResponseWriter, status int, body any) {
	b, _ := json.Marshal(body)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// writeJSON answers with the JSON body b or, when cut, with its first half
// and then a cut connection, as a reply that dies in transit.
func writeJSON(w http.ResponseWriter, b []byte, cut bool) {
	w.Header().Set("Content-Type", "application/json")
	if !cut {
		_, _ = w.Write(b)
		return
	}
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(b[:len(b)/2])
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
	cutConn(w)
}

// sse writes a server-sent event stream, flushing each event so the client
// sees it at once, and counts the events so a reply can be cut after
// Reply.CutAfter of them.
type sse struct {
	w    http.ResponseWriter
	f    http.Flusher
	sent int
}

// startSSE answers 200 with an event stream.
func startSSE(w http.ResponseWriter) *sse {
	w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	f, _ := w.(http.Flusher)
	return &sse{w: w, f: f}
}

// full reports whether cutAfter events have been sent; never when cutAfter
// is 0, which means no cut.
func (s *sse) full(cutAfter int) bool {
	return cutAfter > 0 && s.sent >= cutAfter
}

// stalls reports whether r falls silent now, StallAfter events in.
func (s *sse) stalls(r Reply) bool {
	return r.Stall == StallMidStream && s.sent >= r.StallAfter
}

// stall makes sure what was written so far (the headers at least) has
// reached the client, then calls hold, which blocks.
func (s *sse) stall(hold func()) {
	if s.f != nil {
		s.f.Flush()
	}
	hold()
}

// event sends data as JSON, under an "event:" line when name is not empty.
func (s *sse) event(name string, data any) {
	b, err := json.Marshal(data)
	if err != nil {
		panic(fmt.Sprintf("testkit: marshal SSE event %q: %v", name, err))
	}
	s.raw(name, string(b))
}

// raw sends data as it is, for the few events whose data is not JSON.
func (s *sse) raw(name, data string) {
	var msg string
	if name != "" {
		msg = "event: " + name + "\n"
	}
	msg += "data: " + data + "\n\n"
	_, _ = io.WriteString(s.w, msg)
	if s.f != nil {
		s.f.Flush()
	}
	s.sent++
}

// cut ends the stream abruptly.
func (s *sse) cut() { cutConn(s.w) }

// cutConn closes the connection under the response, without the terminating
// chunk of the chunked encoding, so the client sees the body end
// unexpectedly.
func cutConn(w http.ResponseWriter) {
	hj, ok := w.(http.Hijacker)
	if !ok {
		panic("testkit: response writer cannot be hijacked to cut the stream")
	}
	conn, _, err := hj.Hijack()
	if err != nil {
		panic(fmt.Sprintf("testkit: hijack to cut the stream: %v", err))
	}
	_ = conn.Close()
}

// split cuts s into up to three pieces on rune boundaries, so that a client
// has to join deltas to get the whole; with deltaSize > 0, into pieces of
// at most deltaSize bytes (a rune wider than that is a piece of its own).
func split(s string, deltaSize int) []string {
	n := utf8.RuneCountInString(s)
	if n == 0 {
		return nil
	}
	if deltaSize > 0 {
		parts := make([]string, 0, len(s)/deltaSize+1)
		for len(s) > 0 {
			end := min(deltaSize, len(s))
			for end < len(s) && !utf8.RuneStart(s[end]) {
				end--
			}
			if end == 0 {
				_, end = utf8.DecodeRuneInString(s)
			}
			parts = append(parts, s[:end])
			s = s[end:]
		}
		return parts
	}
	size := (n + 2) / 3
	var parts []string
	for len(s) > 0 {
		end, count := 0, 0
		for end < len(s) && count < size {
			_, w := utf8.DecodeRuneInString(s[end:])
			end += w
			count++
		}
		parts = append(parts, s[:end])
		s = s[end:]
	}
	return parts
}

// Canned returns a client that answers every request with what one POST
// of reqBody to url got: status, headers and the whole body, recorded once
// and replayed from memory. Benchmarks use it to measure the client alone,
// without the fake server's cost or the scheduling of a live connection.
func Canned(t testing.TB, url, reqBody string) *http.Client {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(reqBody))
	if err != nil {
		t.Fatalf("testkit: record %s: %v", url, err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatalf("testkit: record %s: %v", url, err)
	}
	return &http.Client{Transport: canned{status: resp.StatusCode, header: resp.Header, body: body}}
}

type canned struct {
	status int
	header http.Header
	body   []byte
}

func (c canned) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body != nil {
		_, _ = io.Copy(io.Discard, req.Body)
		req.Body.Close()
	}
	return &http.Response{
		Status: http.StatusText(c.status), StatusCode: c.status, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: c.header.Clone(), Body: io.NopCloser(bytes.NewReader(c.body)), ContentLength: -1, Request: req,
	}, nil
}
