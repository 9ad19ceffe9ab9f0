package builtin

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"github.com/cadre-dev/cadre/internal/permission"
	"io"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/cadre-dev/cadre/tool"
)

//go:embed webfetch.md
var webFetchDescription string

// WebFetchInput is WebFetch's input, as Claude Code names it.
type WebFetchInput struct {
	URL    string `json:"url" jsonschema:"The URL to fetch content from"`
	Prompt string `json:"prompt" jsonschema:"The prompt to run on the fetched content"`
	Offset int    `json:"offset,omitempty" jsonschema:"Character position in the page text to start reading from. Use it to read on through a page too long for one call, with the value the previous result gave."`
}

// WebFetchMeta is the Meta of a WebFetch result.
type WebFetchMeta struct {
	URL        string `json:"url"`
	Code       int    `json:"code"`
	CodeText   string `json:"codeText"`
	Bytes      int    `json:"bytes"`
	DurationMs int64  `json:"durationMs"`
	Result     string `json:"result"`
}

// WebFetch returns the WebFetch tool. Permission rules name a host as
// WebFetch(domain:example.com): the call's target is "domain:<host>".
func WebFetch(opts Options) tool.Tool {
	o := opts.withDefaults()
	client := o.WebFetchClient
	if client == nil {
		client = &http.Client{Transport: webTransport(o.WebFetchAllowPrivate)}
	}
	t := tool.New(tool.Info{
		Name:        "WebFetch",
		Description: describe("WebFetch", webFetchDescription, o),
		InputSchema: schema("webfetch"),
		Access:      tool.AccessOther,
		// Fetches of one message are independent reads.
		ConcurrencySafe: true,
	}, func(ctx context.Context, env tool.Env, in WebFetchInput) (tool.Result, error) {
		return runWebFetch(ctx, o, client, in)
	})
	t.TargetOf = func(_ tool.Env, in WebFetchInput) string {
		u, err := url.Parse(strings.TrimSpace(in.URL))
		if err != nil || u.Hostname() == "" {
			return ""
		}
		return "domain:" + permission.NormalizeHost(u.Hostname())
	}
	return t
}

// errPrivate is a refused address.
var errPrivate = errors.New("the address is on this machine or a private network")

// webTransport dials only public addresses unless allowPrivate: the check
// is made on the address actually dialled, after DNS, so a name that
// resolves (or re-resolves) to 127.0.0.1 or a metadata service is refused
// too.
func webTransport(allowPrivate bool) *http.Transport {
	d := &net.Dialer{Timeout: 15 * time.Second}
	if !allowPrivate {
		d.Control = func(network, address string, _ syscall.RawConn) error {
			ap, err := netip.ParseAddrPort(address)
			if err != nil {
				return fmt.Errorf("dial %s: %w", address, err)
			}
			if private(ap.Addr()) {
				return fmt.Errorf("dial %s: %w", address, errPrivate)
			}
			return nil
		}
	}
	return &http.Transport{
		Proxy: nil, DialContext: d.DialContext, ForceAttemptHTTP2: true,
		TLSHandshakeTimeout: 15 * time.Second, ResponseHeaderTimeout: 30 * time.Second,
	}
}

// private reports addresses a model's fetch must not reach: loopback,
// private and shared ranges, link-local (cloud metadata services), and
// the unspecified, multicast and broadcast ones.
func private(a netip.Addr) bool {
	a = a.Unmap()
	if a.IsLoopback() || a.IsPrivate() || a.IsLinkLocalUnicast() || a.IsLinkLocalMulticast() ||
		a.IsUnspecified() || a.IsMulticast() || a.IsInterfaceLocalMulticast() {
		return true
	}
	for _, p := range []string{"100.64.0.0/10", "0.0.0.0/8", "192.0.0.0/24", "198.18.0.0/15", "255.255.255.255/32", "64:ff9b::/96"} {
		if netip.MustParsePrefix(p).Contains(a) {
			return true
		}
	}
	return false
}

func runWebFetch(ctx context.Context, o Options, client *http.Client, in WebFetchInput) (tool.Result, error) {
	start := time.Now()
	u, err := url.Parse(strings.TrimSpace(in.URL))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" {
		return tool.Errorf("url %q is not a full http or https URL.", in.URL), nil
	}
	if u.User != nil {
		return tool.Errorf("url %q holds a user name or password; WebFetch does not send credentials.", in.URL), nil
	}
	if in.Offset < 0 {
		return tool.Errorf("offset must not be negative, got %d.", in.Offset), nil
	}
	ctx, cancel := context.WithTimeout(ctx, o.WebFetchTimeout)
	defer cancel()
	var movedTo *url.URL
	c := *client
	c.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if len(via) >= 10 {
			return errors.New("more than 10 redirects")
		}
		if !sameSite(req.URL, via[0].URL) {
			movedTo = req.URL
			return http.ErrUseLastResponse
		}
		return nil
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return tool.Errorf("url %q: %v", in.URL, err), nil
	}
	req.Header.Set("Accept", "text/markdown, text/html;q=0.9, text/plain;q=0.8, */*;q=0.1")
	req.Header.Set("User-Agent", "cadre-webfetch/1")
	resp, err := c.Do(req)
	if err != nil {
		if errors.Is(err, errPrivate) {
			return tool.Errorf("WebFetch refused %s: %v. Fetching addresses on this machine or a private network is not allowed.", u.Host, errPrivate), nil
		}
		if ctx.Err() != nil && errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return tool.Errorf("fetching %s took longer than %s; try again later or another page.", u, o.WebFetchTimeout), nil
		}
		return tool.Errorf("fetching %s failed: %v", u, err), nil
	}
	defer resp.Body.Close()
	if movedTo != nil {
		return tool.Text(fmt.Sprintf("REDIRECT: %s redirects to another host: %s\nIt was not followed. To read it, call WebFetch again with url %q (the new host may need the user's approval).", u, movedTo, movedTo.String())), nil
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, int64(o.WebFetchMaxBytes)+1))
	if err != nil {
		return tool.Errorf("reading %s failed: %v", u, err), nil
	}
	cut := len(body) > o.WebFetchMaxBytes
	if cut {
		body = body[:o.WebFetchMaxBytes]
	}
	final := resp.Request.URL
	mediaType, params, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if cs := strings.ToLower(params["charset"]); cs != "" && cs != "utf-8" && cs != "us-ascii" && cs != "utf8" {
		// Only UTF-8 is decoded; other charsets read as best they can.
		body = []byte(strings.ToValidUTF8(string(body), "\uFFFD"))
	}
	var title, text string
	switch {
	case mediaType == "text/html" || mediaType == "application/xhtml+xml" || (mediaType == "" && looksHTML(body)):
		title, text, err = htmlToMarkdown(strings.NewReader(string(body)), final)
		if err != nil {
			return tool.Errorf("%s: %v", u, err), nil
		}
	case strings.HasPrefix(mediaType, "text/") || mediaType == "application/json" || strings.HasSuffix(mediaType, "+json") ||
		mediaType == "application/xml" || strings.HasSuffix(mediaType, "+xml") || mediaType == "":
		if !utf8.Valid(body) {
			return tool.Errorf("%s sent %s content that is not text.", u, orUnknown(mediaType)), nil
		}
		text = string(body)
	default:
		return tool.Errorf("%s is %s, not a page WebFetch can read as text.", u, mediaType), nil
	}
	runes := []rune(text)
	if in.Offset > len(runes) {
		return tool.Errorf("offset %d is past the end of the page's text (%d characters).", in.Offset, len(runes)), nil
	}
	end := min(len(runes), in.Offset+o.WebFetchMaxChars)
	part := string(runes[in.Offset:end])
	var b strings.Builder
	fmt.Fprintf(&b, "URL: %s\nStatus: %s\n", final, resp.Status)
	if title != "" {
		fmt.Fprintf(&b, "Title: %s\n", title)
	}
	if p := strings.TrimSpace(in.Prompt); p != "" {
		fmt.Fprintf(&b, "Your prompt: %s\n(Answer it from the page's text below.)\n", p)
	}
	if in.Offset > 0 || end < len(runes) {
		fmt.Fprintf(&b, "Characters %d to %d of %d.\n", in.Offset, end, len(runes))
	}
	b.WriteString("\n" + part + "\n")
	if end < len(runes) {
		fmt.Fprintf(&b, "\n[The page goes on: call WebFetch with offset %d to read on.]\n", end)
	}
	if cut {
		fmt.Fprintf(&b, "\n[The page was larger than %d bytes: only its start was read.]\n", o.WebFetchMaxBytes)
	}
	res := tool.Text(b.String())
	res.IsError = resp.StatusCode >= 400
	res.Meta = WebFetchMeta{URL: final.String(), Code: resp.StatusCode, CodeText: http.StatusText(resp.StatusCode),
		Bytes: len(body), DurationMs: time.Since(start).Milliseconds(), Result: part}
	return res, nil
}

// sameSite reports whether a redirect stays on the host the call was
// permitted for (a "www." added or removed included).
func sameSite(to, from *url.URL) bool {
	a, b := strings.TrimPrefix(strings.ToLower(to.Hostname()), "www."), strings.TrimPrefix(strings.ToLower(from.Hostname()), "www.")
	return a == b && to.Port() == from.Port()
}

func looksHTML(b []byte) bool {
	head := strings.ToLower(strings.TrimSpace(string(b[:min(len(b), 512)])))
	return strings.HasPrefix(head, "<!doctype html") || strings.HasPrefix(head, "<html")
}

func orUnknown(s string) string {
	if s == "" {
		return "untyped"
	}
	return s
}
