package builtin

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"

	"github.com/cadre-dev/cadre/tool"
)

const page = `<!doctype html><html><head><title>Stock API</title><script>alert("x")</script><style>p{}</style></head>
<body><nav><a href="/">Home</a></nav>
<h1>Stock API</h1>
<p>Call <code>Reserve</code> before <strong>shipping</strong>; see <a href="/docs/limits">the limits</a>.</p>
<ul><li>one</li><li>two</li></ul>
<pre>go test ./...</pre>
<form><input name="q"></form>
</body></html>`

func fetch(t *testing.T, o Options, in WebFetchInput) tool.Result {
	t.Helper()
	raw, _ := json.Marshal(in)
	res, err := WebFetch(o).Call(context.Background(), tool.Env{}, raw)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func fetched(r tool.Result) string { return r.Content[0].Text }

func TestWebFetchConvertsHTML(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, page)
	}))
	defer srv.Close()
	res := fetch(t, Options{WebFetchAllowPrivate: true}, WebFetchInput{URL: srv.URL + "/api", Prompt: "what to call first?"})
	got := fetched(res)
	for _, want := range []string{"Title: Stock API", "# Stock API", "Call `Reserve` before **shipping**; see [the limits](" + srv.URL + "/docs/limits).", "- one", "- two", "```\ngo test ./...\n```", "Your prompt: what to call first?"} {
		if !strings.Contains(got, want) {
			t.Errorf("result lacks %q:\n%s", want, got)
		}
	}
	for _, not := range []string{"alert", "p{}", "Home"} {
		if strings.Contains(got, not) {
			t.Errorf("result holds %q (script, style or navigation):\n%s", not, got)
		}
	}
	if m := res.Meta.(WebFetchMeta); m.Code != 200 || m.URL != srv.URL+"/api" {
		t.Errorf("meta %+v", m)
	}
}

// The httptest server listens on 127.0.0.1: by default that is exactly
// what a model's fetch must not reach (SSRF).
func TestWebFetchRefusesPrivateAddresses(t *testing.T) {
	hit := false
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hit = true }))
	defer srv.Close()
	for _, u := range []string{srv.URL, strings.Replace(srv.URL, "127.0.0.1", "localhost", 1)} {
		res := fetch(t, Options{}, WebFetchInput{URL: u, Prompt: "x"})
		if !res.IsError || !strings.Contains(fetched(res), "private network") {
			t.Errorf("%s: %q, want a refusal", u, fetched(res))
		}
	}
	if hit {
		t.Error("the request reached the loopback server")
	}
	for _, a := range []string{"169.254.169.254", "10.0.0.1", "192.168.1.1", "::1", "fd00::1", "100.64.0.1", "0.0.0.0"} {
		if !private(netip.MustParseAddr(a)) {
			t.Errorf("%s is not refused", a)
		}
	}
	if private(netip.MustParseAddr("93.184.216.34")) {
		t.Error("a public address is refused")
	}
}

func TestWebFetchRedirects(t *testing.T) {
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "OTHER HOST") }))
	defer other.Close()
	// "localhost" and "127.0.0.1" are two hosts to a permission rule.
	otherURL := strings.Replace(other.URL, "127.0.0.1", "localhost", 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/same":
			http.Redirect(w, r, "/final", http.StatusFound)
		case "/away":
			http.Redirect(w, r, otherURL+"/x", http.StatusFound)
		default:
			w.Header().Set("Content-Type", "text/plain")
			fmt.Fprint(w, "FINAL PAGE")
		}
	}))
	defer srv.Close()
	o := Options{WebFetchAllowPrivate: true}
	if got := fetched(fetch(t, o, WebFetchInput{URL: srv.URL + "/same", Prompt: "x"})); !strings.Contains(got, "FINAL PAGE") {
		t.Errorf("a redirect on the same host was not followed: %q", got)
	}
	got := fetched(fetch(t, o, WebFetchInput{URL: srv.URL + "/away", Prompt: "x"}))
	if strings.Contains(got, "OTHER HOST") || !strings.Contains(got, "REDIRECT") || !strings.Contains(got, otherURL+"/x") {
		t.Errorf("a redirect to another host: %q, want it named and not followed", got)
	}
}

func TestWebFetchCapsAndPages(t *testing.T) {
	long := strings.Repeat("abcdefghij", 100) // 1000 characters
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/bin":
			w.Header().Set("Content-Type", "application/octet-stream")
			w.Write([]byte{0, 1, 2})
		default:
			w.Header().Set("Content-Type", "text/plain")
			fmt.Fprint(w, long)
		}
	}))
	defer srv.Close()
	o := Options{WebFetchAllowPrivate: true, WebFetchMaxChars: 300}
	got := fetched(fetch(t, o, WebFetchInput{URL: srv.URL, Prompt: "x"}))
	if !strings.Contains(got, "Characters 0 to 300 of 1000") || !strings.Contains(got, "offset 300 to read on") {
		t.Errorf("first part: %q", got)
	}
	got = fetched(fetch(t, o, WebFetchInput{URL: srv.URL, Prompt: "x", Offset: 900}))
	if !strings.Contains(got, "Characters 900 to 1000 of 1000") || strings.Contains(got, "read on") {
		t.Errorf("last part: %q", got)
	}
	o.WebFetchMaxBytes = 100
	if got := fetched(fetch(t, o, WebFetchInput{URL: srv.URL, Prompt: "x"})); !strings.Contains(got, "larger than 100 bytes") {
		t.Errorf("size cap: %q", got)
	}
	if res := fetch(t, o, WebFetchInput{URL: srv.URL + "/bin", Prompt: "x"}); !res.IsError {
		t.Errorf("binary content was returned: %q", fetched(res))
	}
	if res := fetch(t, o, WebFetchInput{URL: "file:///etc/passwd", Prompt: "x"}); !res.IsError {
		t.Errorf("a file URL was fetched: %q", fetched(res))
	}
}

func TestWebFetchTargetIsTheDomain(t *testing.T) {
	tt := WebFetch(Options{}).(tool.Targeted)
	got, err := tt.Target(tool.Env{}, json.RawMessage(`{"url":"https://Docs.Example.com:8443/a?b","prompt":"x"}`))
	if err != nil || got != "domain:docs.example.com" {
		t.Errorf("target %q, %v", got, err)
	}
}
