package cadre_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cadre-dev/cadre"
	"github.com/cadre-dev/cadre/internal/testkit"
	"github.com/cadre-dev/cadre/llm"
)

// openWith opens a runtime on f's directories with env as its whole
// environment besides CADRE_HOME.
func (f *fixture) openWith(t *testing.T, env map[string]string) (*cadre.Runtime, error) {
	t.Helper()
	rt, err := cadre.New(context.Background(), cadre.Options{
		Cwd: f.dir,
		LLM: &llm.ModelFunc{ID: "test:model", Func: f.model},
		Getenv: func(k string) string {
			if k == "CADRE_HOME" {
				return f.home
			}
			return env[k]
		},
	})
	if err == nil {
		t.Cleanup(func() { rt.Close() })
	}
	return rt, err
}

func (f *fixture) writeUserSettings(t *testing.T, text string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(f.home, "settings.json"), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestStoreURLSelectsPostgres: with CADRE_STORE_URL (or the user's
// store.url) the session index is in PostgreSQL: a second runtime lists the
// first one's session, and no SQLite file is created under CADRE_HOME.
func TestStoreURLSelectsPostgres(t *testing.T) {
	for _, how := range []string{"CADRE_STORE_URL", "store.url"} {
		t.Run(how, func(t *testing.T) {
			url := pg.URL(t)
			f := newFixture(t)
			env := map[string]string{}
			if how == "CADRE_STORE_URL" {
				env["CADRE_STORE_URL"] = url
			} else {
				f.writeUserSettings(t, `{"store": {"url": "`+url+`"}}`)
			}
			rt, err := f.openWith(t, env)
			if err != nil {
				t.Fatal(err)
			}
			evs := collect(t, rt, cadre.Request{Prompt: "what is the secret word?"})

			// Another process on the same CADRE_HOME: with no SQLite
			// file there, what it lists comes from PostgreSQL.
			rt2, err := f.openWith(t, env)
			if err != nil {
				t.Fatal(err)
			}
			infos, err := rt2.Sessions(context.Background(), "", 10)
			if err != nil || len(infos) != 1 || infos[0].ID != evs[0].SessionID || infos[0].Status != "completed" {
				t.Fatalf("sessions seen through the second runtime: %+v, %v", infos, err)
			}
			if m, _ := filepath.Glob(filepath.Join(f.home, "cadre.db*")); len(m) > 0 {
				t.Errorf("PostgreSQL mode created %v", m)
			}
		})
	}
}

// TestStoreURLPrecedenceAndErrors: CADRE_STORE_URL wins over the settings;
// an unusable URL stops the runtime from starting with an error naming
// where it came from, and without creating the SQLite file.
func TestStoreURLPrecedenceAndErrors(t *testing.T) {
	for _, tc := range []struct {
		name, env, settings string
		want                []string
	}{
		{"bad env", "mysql://u:hunter2@db/cadre", `{"store": {"url": "postgres://u@127.0.0.1:1/x"}}`, []string{"CADRE_STORE_URL", "want postgres://"}},
		{"bad settings", "", `{"store": {"url": "sqlite:///tmp/x.db"}}`, []string{"settings store.url", "want postgres://"}},
		{"nobody there", "", `{"store": {"url": "postgres://u:hunter2@127.0.0.1:1/cadre?sslmode=disable"}}`, []string{"settings store.url", "127.0.0.1:1", "connection refused"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			f.writeUserSettings(t, tc.settings)
			_, err := f.openWith(t, map[string]string{"CADRE_STORE_URL": tc.env})
			if err == nil {
				t.Fatal("the runtime started")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("err = %v, want it to say %q", err, w)
				}
			}
			if strings.Contains(err.Error(), "hunter2") {
				t.Errorf("err = %v shows the password", err)
			}
			if _, serr := os.Stat(filepath.Join(f.home, "cadre.db")); serr == nil {
				t.Error("a failed PostgreSQL start created cadre.db")
			}
		})
	}
}

// TestPostgresTranscriptsAcrossHomes: in PostgreSQL mode transcripts live
// in the store, so a runtime with another CADRE_HOME (another machine)
// reads a session's transcript (Session, WatchSession) and resumes it with
// its history; no transcript file is written under either home.
func TestPostgresTranscriptsAcrossHomes(t *testing.T) {
	env := map[string]string{"CADRE_STORE_URL": pg.URL(t)}
	first, second := newFixture(t), newFixture(t)
	rt, err := first.openWith(t, env)
	if err != nil {
		t.Fatal(err)
	}
	id := collect(t, rt, cadre.Request{Prompt: "what is the secret word?"})[0].SessionID

	rt2, err := second.openWith(t, env)
	if err != nil {
		t.Fatal(err)
	}
	info, entries, err := rt2.Session(t.Context(), id)
	if err != nil || len(entries) < 2 || entries[0].Message == nil || entries[0].Message.Text() != "what is the secret word?" {
		t.Fatalf("Session from another home: %+v, %d entries, %v; want the first run's transcript", info, len(entries), err)
	}
	if !strings.HasPrefix(info.TranscriptPath, "postgres:transcripts/") {
		t.Errorf("TranscriptPath = %q, want a location in PostgreSQL", info.TranscriptPath)
	}

	// WatchSession replays the transcript, then follows the live bus.
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var watched []string
	for ev, err := range rt2.WatchSession(ctx, id) {
		if err != nil {
			t.Fatal(err)
		}
		watched = append(watched, ev.UUID)
		if len(watched) == len(entries) {
			break
		}
	}
	for i, e := range entries {
		if watched[i] != e.UUID {
			t.Fatalf("WatchSession replayed %v, want the transcript's entries %v in order", watched, entries)
		}
	}

	collect(t, rt2, cadre.Request{Prompt: "say the secret word again", Resume: id})
	second.mu.Lock()
	last := second.requests[len(second.requests)-1]
	second.mu.Unlock()
	if len(last.Messages) <= 1 || last.Messages[0].Text() != "what is the secret word?" {
		t.Errorf("the resumed run's request has %d messages, starting %q: want the first run's history", len(last.Messages), last.Messages[0].Text())
	}
	for _, home := range []string{first.home, second.home} {
		if m, _ := filepath.Glob(filepath.Join(home, "sessions", "*")); len(m) > 0 {
			t.Errorf("PostgreSQL mode wrote transcript files %v", m)
		}
	}
}

// TestDispatchOptionChecked: a front end's dispatch default that is
// neither sticky nor any stops the runtime at start, saying what it wants.
func TestDispatchOptionChecked(t *testing.T) {
	f := newFixture(t)
	rt, err := cadre.New(context.Background(), cadre.Options{
		Cwd: f.dir, LLM: &llm.ModelFunc{ID: "test:model", Func: f.model}, Dispatch: "everywhere",
		Getenv: testkit.Home(f.home),
	})
	if err == nil {
		rt.Close()
		t.Fatal("the runtime started")
	}
	if !strings.Contains(err.Error(), `Options.Dispatch "everywhere": want "sticky" or "any"`) {
		t.Fatalf("err = %v", err)
	}
}
