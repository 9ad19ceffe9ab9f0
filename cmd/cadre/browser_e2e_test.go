package main

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/cadre-dev/cadre/internal/testkit/chromium"
)

// chromiumExe finds headless chromium for a browser test: a machine
// without it skips the test, saying so loudly; under CI=true it fails.
func chromiumExe(t *testing.T) string {
	t.Helper()
	exe, err := chromium.Find()
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI=true: %v", err)
		}
		t.Skipf("SKIPPED, NOT TESTED: the browser test needs chromium: %v", err)
	}
	return exe
}

// startRun starts a run of the served cadre with prompt and returns its id.
func (s *served) startRun(t *testing.T, prompt string) string {
	t.Helper()
	var run struct{ ID string }
	if st := s.post(t, "/api/runs", map[string]any{"prompt": prompt}, &run); st != http.StatusCreated || run.ID == "" {
		t.Fatalf("start a run: %d %+v", st, run)
	}
	return run.ID
}

// openSession opens the web view's page of a session in b.
func openSession(t *testing.T, ctx context.Context, b *chromium.Browser, s *served, id string) *chromium.Page {
	t.Helper()
	page, err := b.Open(ctx, s.url+"/?token="+s.token+"#/session/"+id)
	if err != nil {
		t.Fatal(err)
	}
	return page
}

// startBrowser starts chromium with a w×h window, closed when the test
// ends.
func startBrowser(t *testing.T, ctx context.Context, exe string, w, h int) *chromium.Browser {
	t.Helper()
	b, err := chromium.Start(ctx, exe, t.TempDir(), w, h)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close(context.Background()) })
	return b
}

// shot keeps a screenshot of the page among the test's artifacts (go test
// -artifacts keeps them; docs/images has copies).
func shot(t *testing.T, ctx context.Context, p *chromium.Page, name string) {
	t.Helper()
	png, err := p.Screenshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.ArtifactDir(), name+".png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	if dom, err := p.DOM(ctx); err == nil {
		os.WriteFile(filepath.Join(t.ArtifactDir(), name+".html"), []byte(dom), 0o644)
	}
	t.Logf("screenshot %s (%d bytes)", path, len(png))
}
