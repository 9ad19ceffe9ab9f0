package server

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"
)

// CookieName is the cookie the web view keeps the token in: HttpOnly, so
// no script reads it, and SameSite=Strict, so no other site's page sends
// it.
const CookieName = "cadre_token"

// NewToken is a random token for a server that was given none: 256 bits,
// hex.
func NewToken() string {
	b := make([]byte, 32)
	rand.Read(b) // never fails (crypto/rand)
	return hex.EncodeToString(b)
}

// LoopbackHosts are the Host names a loopback server answers to besides
// its own address: a DNS-rebinding page's name is none of them.
var LoopbackHosts = []string{"localhost", "127.0.0.1", "::1"}

// guard is what every request passes before any route: the headers that
// keep the web view out of frames, the Host check (DNS rebinding), the
// refusal of other origins (CSRF), a JSON body for every POST (a form or a
// text/plain body is what a page may send without asking), the body
// limit, and the token.
func (s *Server) guard(public, authed http.Handler) http.Handler {
	want := []byte(s.cfg.Token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", "frame-ancestors 'none'")
		h.Set("X-Frame-Options", "DENY")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		if len(s.cfg.Hosts) > 0 && !slices.Contains(s.cfg.Hosts, hostName(r.Host)) {
			writeError(w, http.StatusMisdirectedRequest, fmt.Errorf("host %q is not this server's: use %s", r.Host, strings.Join(s.cfg.Hosts, " or ")))
			return
		}
		if o := r.Header.Get("Origin"); o != "" && !sameOrigin(o, r.Host) {
			writeError(w, http.StatusForbidden, fmt.Errorf("origin %q is not this server's: cross-origin requests are refused", o))
			return
		}
		if r.Header.Get("Sec-Fetch-Site") == "cross-site" {
			writeError(w, http.StatusForbidden, errors.New("a cross-site request is refused"))
			return
		}
		if r.Body != nil && r.Body != http.NoBody {
			// A body must arrive whole within BodyTimeout; the deadline is
			// lifted at its end, so a reply that streams is not cut.
			rc := http.NewResponseController(w)
			if rc.SetReadDeadline(time.Now().Add(s.cfg.BodyTimeout)) == nil {
				r.Body = &deadlineBody{ReadCloser: r.Body, rc: rc}
			}
			r.Body = http.MaxBytesReader(w, r.Body, maxBody)
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead && r.Method != http.MethodOptions {
			if r.ContentLength != 0 || r.Header.Get("Content-Type") != "" {
				mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
				if err != nil || (mt != "application/json" && !strings.HasSuffix(mt, "+json")) {
					writeError(w, http.StatusUnsupportedMediaType, fmt.Errorf("%s %s: the body must be Content-Type: application/json", r.Method, r.URL.Path))
					return
				}
			}
		}
		if public != nil && r.Method == http.MethodGet && r.URL.Path == agentCardPath {
			public.ServeHTTP(w, r)
			return
		}
		got, how := s.token(r)
		if r.Method == http.MethodGet && !strings.HasPrefix(r.URL.Path, "/api/") && !strings.HasPrefix(r.URL.Path, "/a2a/") {
			// The web view's static files hold nothing of the user's; its
			// data comes from the API. Its first load, from the URL cadre
			// serve printed, moves the token into a cookie that no script
			// and no other site can use.
			if how == "query" && subtle.ConstantTimeCompare([]byte(got), want) == 1 {
				http.SetCookie(w, &http.Cookie{Name: CookieName, Value: got, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
			}
			authed.ServeHTTP(w, r)
			return
		}
		if got == "" || subtle.ConstantTimeCompare([]byte(got), want) != 1 {
			h.Set("WWW-Authenticate", `Bearer realm="cadre"`)
			writeError(w, http.StatusUnauthorized, errors.New("missing or wrong token: send \"Authorization: Bearer <token>\", or open the URL cadre serve printed"))
			return
		}
		authed.ServeHTTP(w, r)
	})
}

const agentCardPath = "/.well-known/agent-card.json"

// DefaultBodyTimeout is Config.BodyTimeout's default: a client that
// trickles a body one byte a minute holds no connection for ever.
const DefaultBodyTimeout = 60 * time.Second

// deadlineBody lifts the connection's read deadline once the body has
// been read to its end.
type deadlineBody struct {
	io.ReadCloser
	rc   *http.ResponseController
	done bool
}

func (b *deadlineBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err != nil && !b.done {
		b.done = true
		// Lifting the deadline of a body that ended: a connection that
		// cannot take it is closed anyway.
		_ = b.rc.SetReadDeadline(time.Time{})
	}
	return n, err
}

// token is the request's token and where it came from: the Authorization
// header, the cookie, or the "token" query parameter (the URL cadre serve
// prints, and EventSource, which cannot set headers).
func (s *Server) token(r *http.Request) (tok, how string) {
	if h := r.Header.Get("Authorization"); h != "" {
		scheme, t, ok := strings.Cut(h, " ")
		if !ok || !strings.EqualFold(scheme, "Bearer") {
			return "", ""
		}
		return strings.TrimSpace(t), "header"
	}
	if c, err := r.Cookie(CookieName); err == nil && c.Value != "" {
		return c.Value, "cookie"
	}
	if t := r.URL.Query().Get("token"); t != "" {
		return t, "query"
	}
	return "", ""
}

// hostName is a Host header's name, without port or brackets.
func hostName(host string) string {
	if h, _, err := net.SplitHostPort(host); err == nil {
		return h
	}
	return strings.Trim(host, "[]")
}

// sameOrigin reports whether origin is http(s)://host, host being the
// request's Host.
func sameOrigin(origin, host string) bool {
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return false
	}
	return strings.EqualFold(u.Host, host)
}
