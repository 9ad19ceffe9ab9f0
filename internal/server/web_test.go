package server

import (
	"io"
	"io/fs"
	"regexp"
	"strings"
	"testing"
)

// The web view is served from the binary, each file with its type.
func TestWebViewIsServed(t *testing.T) {
	f := newFixture(t, readThenAnswer, Config{})
	for path, typ := range map[string]string{"/": "text/html", "/app.js": "text/javascript", "/md.js": "text/javascript", "/style.css": "text/css"} {
		resp, err := f.http.Client().Get(f.http.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), typ) || len(b) == 0 {
			t.Errorf("GET %s: %d %s, %d bytes", path, resp.StatusCode, resp.Header.Get("Content-Type"), len(b))
		}
	}
}

// Nothing of the web view comes from elsewhere: no CDN, no font or
// script from the network, and no HTML parsed from data (text is set as
// text).
func TestWebViewLoadsNothingFromTheNetwork(t *testing.T) {
	remote := regexp.MustCompile(`(?i)(src|href)\s*=\s*["']?(https?:)?//|url\(\s*["']?(https?:)?//|@import|import\s*\(|\bimport\s+.*\bfrom\b`)
	err := fs.WalkDir(webFiles, "web", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := webFiles.ReadFile(path)
		if err != nil {
			return err
		}
		if m := remote.Find(b); m != nil {
			t.Errorf("%s loads from the network: %q", path, m)
		}
		if strings.Contains(string(b), "innerHTML") || strings.Contains(string(b), "insertAdjacentHTML") {
			t.Errorf("%s parses HTML from strings", path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
