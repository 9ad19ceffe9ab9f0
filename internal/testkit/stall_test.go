package testkit

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// stallServer is either fake server, for tests that run against both.
type stallServer struct {
	name string
	// start serves h and returns the streaming endpoint and a request body
	// that asks for a stream.
	start func(t *testing.T, h Handler) (url, body string)
}

var stallServers = []stallServer{
	{"anthropic", func(t *testing.T, h Handler) (string, string) {
		return NewAnthropic(t, h).URL + "/v1/messages", `{"model":"m","stream":true,"max_tokens":10,"messages":[]}`
	}},
	{"openai", func(t *testing.T, h Handler) (string, string) {
		return NewOpenAI(t, h).URL + "/chat/completions", `{"model":"m","stream":true,"messages":[]}`
	}},
}

// readEvents reads n server-sent events (their data lines) from r.
func readEvents(r *bufio.Reader, n int) ([]string, error) {
	var data []string
	for len(data) < n {
		line, err := r.ReadString('\n')
		if err != nil {
			return data, err
		}
		if d, ok := strings.CutPrefix(strings.TrimRight(line, "\n"), "data: "); ok {
			data = append(data, d)
		}
	}
	return data, nil
}

// A stalled stream sends what it was told to, then nothing, and ends only
// when the client hangs up: the read after the stall point fails with the
// client's cancellation, not with an event or the end of the stream.
func TestStallMidStream(t *testing.T) {
	for _, srv := range stallServers {
		for _, after := range []int{0, 1, 3} {
			t.Run(fmt.Sprintf("%s/after%d", srv.name, after), func(t *testing.T) {
				url, body := srv.start(t, func(Request) Reply {
					return Reply{Text: "a text long enough to stream", Stall: StallMidStream, StallAfter: after}
				})
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				req, _ := http.NewRequestWithContext(ctx, "POST", url, strings.NewReader(body))
				client := &http.Client{Transport: &http.Transport{}}
				defer client.CloseIdleConnections()
				resp, err := client.Do(req)
				if err != nil {
					t.Fatalf("the headers did not arrive before the stall: %v", err)
				}
				defer resp.Body.Close()
				if resp.StatusCode != 200 {
					t.Fatalf("status %d, want 200", resp.StatusCode)
				}
				br := bufio.NewReader(resp.Body)
				got, err := readEvents(br, after)
				if err != nil || len(got) != after {
					t.Fatalf("read %d events (%v), want %d before the stall", len(got), err, after)
				}
				cancel()
				rest, err := io.ReadAll(br)
				if !errors.Is(err, context.Canceled) {
					t.Errorf("read after the stall ended with %v, want the client's cancellation", err)
				}
				if strings.Contains(string(rest), "data:") {
					t.Errorf("the stream went on after the stall: %q", rest)
				}
			})
		}
	}
}

// StallNoResponse answers nothing at all: not even the status line comes
// before the client gives up.
func TestStallNoResponse(t *testing.T) {
	for _, srv := range stallServers {
		t.Run(srv.name, func(t *testing.T) {
			arrived := make(chan struct{}, 1)
			url, body := srv.start(t, func(Request) Reply {
				arrived <- struct{}{}
				return Reply{Text: "never sent", Stall: StallNoResponse}
			})
			ctx, cancel := context.WithCancel(context.Background())
			req, _ := http.NewRequestWithContext(ctx, "POST", url, strings.NewReader(body))
			client := &http.Client{Transport: &http.Transport{}}
			defer client.CloseIdleConnections()
			done := make(chan error, 1)
			go func() {
				resp, err := client.Do(req)
				if err == nil {
					resp.Body.Close()
				}
				done <- err
			}()
			select {
			case <-arrived:
			case <-time.After(10 * time.Second):
				t.Fatal("the request never reached the handler")
			}
			cancel()
			select {
			case err := <-done:
				if !errors.Is(err, context.Canceled) {
					t.Errorf("request ended with %v, want the client's cancellation (no response at all)", err)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("the request did not end when the client hung up")
			}
		})
	}
}

func TestDeltaSize(t *testing.T) {
	text := strings.Repeat("abcdé€", 50) // multi-byte runes straddle the cut points
	for _, size := range []int{1, 2, 5, 7, 1000} {
		parts := split(text, size)
		if strings.Join(parts, "") != text {
			t.Fatalf("size %d: parts do not join to the text", size)
		}
		for _, p := range parts {
			if !utf8.ValidString(p) {
				t.Fatalf("size %d: part %q cuts a rune", size, p)
			}
			if r, w := utf8.DecodeRuneInString(p); len(p) > size && len(p) != w {
				t.Fatalf("size %d: part %q (%q) is longer than the size", size, p, r)
			}
		}
		if size >= 3 && len(parts) < len(text)/size {
			t.Errorf("size %d: %d parts, want at least %d", size, len(parts), len(text)/size)
		}
	}
	if got := split("abcdef", 0); len(got) != 3 {
		t.Errorf("no DeltaSize: %d parts, want the usual three", len(got))
	}
}
