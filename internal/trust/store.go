package trust

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// FileName is the trust store's file under $CADRE_HOME.
const FileName = "trust.json"

// State is what the store says of a project root and a digest.
type State int

const (
	// Untrusted: the user never trusted this root (or revoked it).
	Untrusted State = iota
	// Changed: the user trusted this root when it asked for something
	// else; trust must be asked again.
	Changed
	// Trusted: the user trusted this root asking for exactly this.
	Trusted
)

// Record is the user's trust in one project root.
type Record struct {
	Digest string    `json:"digest"`
	At     time.Time `json:"at"`
	// Items are what the project asked for when it was trusted, kept so
	// that `cadre trust` can say what changed.
	Items []Item `json:"items,omitempty"`
}

type file struct {
	Version  int               `json:"version"`
	Projects map[string]Record `json:"projects"`
}

// Store is the trust file in a CADRE_HOME.
type Store struct {
	// Path is the file, $CADRE_HOME/trust.json.
	Path string
}

// NewStore is the store in home.
func NewStore(home string) Store { return Store{Path: filepath.Join(home, FileName)} }

// Root is how a project directory is keyed: absolute, links resolved, so
// that a link to a trusted project is that project and a trusted name
// that later points elsewhere is not.
func Root(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("trust: project %s: %w", dir, err)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", fmt.Errorf("trust: project %s: %w", dir, err)
	}
	return real, nil
}

func (s Store) read() (file, error) {
	f := file{Version: 1, Projects: map[string]Record{}}
	data, err := os.ReadFile(s.Path)
	if errors.Is(err, fs.ErrNotExist) {
		return f, nil
	}
	if err != nil {
		return f, fmt.Errorf("trust: read %s: %w", s.Path, err)
	}
	if err := json.Unmarshal(data, &f); err != nil {
		return f, fmt.Errorf("trust: %s is not a trust file (%v): move it away to start afresh", s.Path, err)
	}
	if f.Projects == nil {
		f.Projects = map[string]Record{}
	}
	return f, nil
}

// write replaces the file whole: a crash leaves the old file or the new,
// never half of one.
func (s Store) write(f file) error {
	data, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(s.Path), 0o700); err != nil {
		return fmt.Errorf("trust: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(s.Path), ".trust-*.json")
	if err != nil {
		return fmt.Errorf("trust: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(append(data, '\n')); err != nil {
		tmp.Close()
		return fmt.Errorf("trust: write %s: %w", tmp.Name(), err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("trust: write %s: %w", tmp.Name(), err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("trust: write %s: %w", tmp.Name(), err)
	}
	if err := os.Rename(tmp.Name(), s.Path); err != nil {
		return fmt.Errorf("trust: %w", err)
	}
	return nil
}

// Lookup returns the record of root (see Root), if any.
func (s Store) Lookup(root string) (Record, bool, error) {
	f, err := s.read()
	if err != nil {
		return Record{}, false, err
	}
	r, ok := f.Projects[root]
	return r, ok, nil
}

// State says whether root is trusted asking for items.
func (s Store) State(root string, items []Item) (State, error) {
	r, ok, err := s.Lookup(root)
	switch {
	case err != nil:
		return Untrusted, err
	case !ok:
		return Untrusted, nil
	case r.Digest != Digest(items):
		return Changed, nil
	}
	return Trusted, nil
}

// Grant records that the user trusts root asking for items.
func (s Store) Grant(root string, items []Item, now time.Time) error {
	f, err := s.read()
	if err != nil {
		return err
	}
	f.Projects[root] = Record{Digest: Digest(items), At: now.UTC(), Items: items}
	return s.write(f)
}

// Revoke forgets the user's trust in root; ok is false when there was
// none.
func (s Store) Revoke(root string) (ok bool, err error) {
	f, err := s.read()
	if err != nil {
		return false, err
	}
	if _, ok = f.Projects[root]; !ok {
		return false, nil
	}
	delete(f.Projects, root)
	return true, s.write(f)
}
