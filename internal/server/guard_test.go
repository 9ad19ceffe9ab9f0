package server

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/cadre-dev/cadre"
	"github.com/cadre-dev/cadre/internal/testkit"
)

// TestServerDoor is issue 22's server door, request by request: what a
// DNS-rebinding page, a cross-origin form, a caller without the token or
// one asking for more than the server's mode gets — and, on every answer,
// the headers that keep the web view out of frames. No run starts.
func TestServerDoor(t *testing.T) {
	f := newFixture(t, func(testkit.Request) testkit.Reply { return testkit.Reply{Text: "RAN"} },
		Config{Hosts: append([]string{"127.0.0.1"}, LoopbackHosts...), PermissionMode: cadre.PermissionDefault})
	run := `{"prompt": "hi", "close": true}`
	tests := []struct {
		name   string
		method string
		path   string
		body   string
		header map[string]string
		noAuth bool
		want   int
		says   string
	}{
		{name: "DNS rebinding: a foreign Host", method: "GET", path: "/api/sessions", header: map[string]string{"Host": "evil.example:8420"}, want: http.StatusMisdirectedRequest, says: "is not this server's"},
		{name: "a foreign Origin", method: "POST", path: "/api/runs", body: run, header: map[string]string{"Origin": "http://evil.example", "Content-Type": "application/json"}, want: http.StatusForbidden, says: "cross-origin"},
		{name: "a cross-site fetch", method: "GET", path: "/api/sessions", header: map[string]string{"Sec-Fetch-Site": "cross-site"}, want: http.StatusForbidden, says: "cross-site"},
		{name: "a simple text/plain POST no browser preflights", method: "POST", path: "/api/runs", body: run, header: map[string]string{"Content-Type": "text/plain"}, want: http.StatusUnsupportedMediaType, says: "application/json"},
		{name: "a form POST", method: "POST", path: "/api/runs", body: "prompt=hi", header: map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, want: http.StatusUnsupportedMediaType, says: "application/json"},
		{name: "no token", method: "GET", path: "/api/sessions", noAuth: true, want: http.StatusUnauthorized, says: "token"},
		{name: "a wrong token", method: "GET", path: "/api/sessions", noAuth: true, header: map[string]string{"Authorization": "Bearer nope"}, want: http.StatusUnauthorized, says: "token"},
		{name: "A2A without the token", method: "POST", path: "/a2a/", body: `{"jsonrpc":"2.0","id":1,"method":"SendMessage"}`, noAuth: true, header: map[string]string{"Content-Type": "application/json"}, want: http.StatusUnauthorized, says: "token"},
		{name: "a run raised to bypassPermissions", method: "POST", path: "/api/runs", body: `{"prompt": "hi", "permission_mode": "bypassPermissions"}`, header: map[string]string{"Content-Type": "application/json"}, want: http.StatusForbidden, says: "cannot raise it"},
		{name: "a body past the limit", method: "POST", path: "/api/runs", body: `{"prompt": "` + strings.Repeat("x", maxBody) + `"}`, header: map[string]string{"Content-Type": "application/json"}, want: http.StatusBadRequest, says: "too large"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, err := http.NewRequest(tt.method, f.http.URL+tt.path, strings.NewReader(tt.body))
			if err != nil {
				t.Fatal(err)
			}
			if !tt.noAuth {
				req.Header.Set("Authorization", "Bearer "+f.token)
			}
			for k, v := range tt.header {
				if k == "Host" {
					req.Host = v
				} else {
					req.Header.Set(k, v)
				}
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tt.want || !strings.Contains(string(body), tt.says) {
				t.Errorf("%d %s, want %d saying %q", resp.StatusCode, body, tt.want, tt.says)
			}
			if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "frame-ancestors 'none'") || resp.Header.Get("X-Frame-Options") != "DENY" {
				t.Errorf("frame headers: CSP %q, X-Frame-Options %q", csp, resp.Header.Get("X-Frame-Options"))
			}
		})
	}
	if n := len(f.model.Requests()); n != 0 {
		t.Errorf("%d model requests: a refused request started a run", n)
	}
	// The door is shut, not the house: the same run with the token, JSON
	// and the server's own mode is accepted.
	var ok map[string]any
	if st := f.do("POST", "/api/runs", map[string]any{"prompt": "hi", "close": true}, &ok); st != http.StatusAccepted && st != http.StatusCreated && st != http.StatusOK {
		t.Errorf("a proper run: %d %v", st, ok)
	}
}

// TestWebViewTokenCookie: the URL cadre serve prints moves the token into a
// cookie no script and no other site can use, and the web view's API calls
// then need nothing else; the static page itself holds no data.
func TestWebViewTokenCookie(t *testing.T) {
	f := newFixture(t, func(testkit.Request) testkit.Reply { return testkit.Reply{Text: "RAN"} }, Config{})
	resp, err := http.Get(f.http.URL + "/?token=" + f.token)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	var cookie *http.Cookie
	for _, c := range resp.Cookies() {
		if c.Name == CookieName {
			cookie = c
		}
	}
	if resp.StatusCode != http.StatusOK || cookie == nil || cookie.Value != f.token || !cookie.HttpOnly || cookie.SameSite != http.SameSiteStrictMode {
		t.Fatalf("%d, cookie %+v: want the token in an HttpOnly SameSite=Strict cookie", resp.StatusCode, cookie)
	}
	wrong, err := http.Get(f.http.URL + "/?token=nope")
	if err != nil {
		t.Fatal(err)
	}
	wrong.Body.Close()
	if len(wrong.Cookies()) != 0 {
		t.Errorf("a wrong token set a cookie: %v", wrong.Cookies())
	}
	req, _ := http.NewRequest("GET", f.http.URL+"/api/sessions", nil)
	req.AddCookie(cookie)
	got, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	got.Body.Close()
	if got.StatusCode != http.StatusOK {
		t.Errorf("the API with the cookie alone: %d", got.StatusCode)
	}
}
