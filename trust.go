package cadre

import (
	"os"
	"time"

	"github.com/cadre-dev/cadre/internal/app"
	"github.com/cadre-dev/cadre/internal/trust"
)

// TrustItem is one thing a project's own files ask for that widens what
// cadre does there or runs a command: an allow rule, a hook command, an
// MCP server's command line, a provider override, an agent file's
// permissionMode. Source is the file, Key what it sets, Value the value
// in full.
type TrustItem struct {
	Source, Key, Value string
}

func (i TrustItem) String() string { return trust.Item(i).String() }

// WorkspaceTrust is the user's trust in a project (docs/security.md). An
// untrusted project's files may only narrow what runs; Asks is what they
// would widen, which trusting applies.
type WorkspaceTrust struct {
	// Root is the project directory, links resolved: what trust is keyed by.
	Root string
	// Trusted: the project's files apply in full. A project that asks for
	// nothing is trusted as it is.
	Trusted bool
	// Explicit: Options.TrustWorkspace trusted it for this process only.
	Explicit bool
	// Changed: the user trusted it when it asked for something else, so
	// trust must be asked again.
	Changed bool
	// Asks are what trusting it would enable, in file order.
	Asks []TrustItem
}

// Warning is the one line an untrusted run prints; "" when trusted.
func (w WorkspaceTrust) Warning() string {
	if w.Trusted {
		return ""
	}
	return trust.Warning(w.items(), w.Changed)
}

func (w WorkspaceTrust) items() []trust.Item {
	out := make([]trust.Item, len(w.Asks))
	for i, a := range w.Asks {
		out[i] = trust.Item(a)
	}
	return out
}

// AssessWorkspace says what the project in opts.Cwd asks for and whether
// the user trusts it, without opening a runtime: what a front end shows
// before it asks (the TUI, `cadre trust`). Options.TrustWorkspace makes it
// trusted, Explicit.
func AssessWorkspace(opts Options) (WorkspaceTrust, error) {
	w, _, err := assessWorkspace(opts)
	return w, err
}

// TrustWorkspace records that the user trusts the project in opts.Cwd
// asking for exactly w.Asks (from AssessWorkspace): a later change of what
// it asks for makes it untrusted again.
func TrustWorkspace(opts Options, w WorkspaceTrust) error {
	_, home, err := assessWorkspace(opts)
	if err != nil {
		return err
	}
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	return trust.NewStore(home).Grant(w.Root, w.items(), now())
}

// RevokeWorkspaceTrust forgets the user's trust in the project in
// opts.Cwd; ok is false when there was none.
func RevokeWorkspaceTrust(opts Options) (ok bool, err error) {
	w, home, err := assessWorkspace(opts)
	if err != nil {
		return false, err
	}
	return trust.NewStore(home).Revoke(w.Root)
}

// assessWorkspace reads the project's files as an untrusted project's
// are read (app.AssessWorkspace) and returns what it found with CADRE_HOME.
func assessWorkspace(opts Options) (WorkspaceTrust, string, error) {
	getenv := opts.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	as, err := app.AssessWorkspace(opts.Cwd, getenv, opts.TrustWorkspace)
	if err != nil {
		return WorkspaceTrust{}, "", err
	}
	w := WorkspaceTrust{Root: as.Root, Explicit: opts.TrustWorkspace, Trusted: as.Trusted, Changed: as.Changed}
	for _, a := range as.Asks {
		w.Asks = append(w.Asks, TrustItem(a))
	}
	return w, as.Home, nil
}
