package sandbox

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
)

// Modes of a Runner, as sandbox.mode names them.
const (
	ModeAuto     = "auto"
	ModeRequired = "required"
	ModeOff      = "off"
)

// ProtectedNames are the entries of every writable tree that stay
// read-only inside the sandbox: what decides what cadre, git or another
// agent tool will run next.
var ProtectedNames = []string{".git", ".cadre", ".claude", ".opencode", ".mcp.json"}

// DefaultReadDeny are the paths, under the home directory, hidden from
// every sandboxed command: credentials.
var DefaultReadDeny = []string{".ssh", ".aws", ".gnupg", ".kube", ".docker/config.json", ".netrc", ".git-credentials", ".config/gh", ".config/gcloud", ".azure", ".npmrc", ".pypirc"}

// Runner is the runtime's one way to start a process for the model inside
// the walls: Bash, a project's MCP servers, opted-in hooks all go through
// Command. Its fields are set before use and then only read.
type Runner struct {
	// Mode is ModeAuto ("" too), ModeRequired or ModeOff.
	Mode string
	// Status is what the machine supports (Probe).
	Status Status
	// Writable are the trees every command may write: the workspace, the
	// added directories, the temp dir, sandbox.allowWrite.
	Writable []string
	// Protected are more paths kept read-only wherever they fall inside a
	// writable tree: $CADRE_HOME, ~/.cadre, ~/.claude.
	Protected []string
	// ReadDeny are hidden from every command.
	ReadDeny []string
	// Network is the commands' network.
	Network Network
	// TempDir: the commands get a temp dir of their own, made at the
	// first command (and removed by Close), writable and their TMPDIR;
	// the system's /tmp stays read-only.
	TempDir bool
	// Excluded reports whether a shell command runs outside the sandbox
	// (sandbox.excludedCommands); nil excludes none.
	Excluded func(command string) bool
	// Warn hears, once, that auto mode runs commands unsandboxed.
	Warn func(msg string)
	// HideEnv are variables removed from every command's environment,
	// sandboxed or not: the provider keys (provider.KeyVariables).
	HideEnv []string

	warned sync.Once
	tmp    struct {
		once sync.Once
		dir  string
		err  error
	}
}

// ErrRequired is Command's error when sandbox.mode is required and the
// machine cannot sandbox.
var ErrRequired = errors.New("sandbox.mode is required, but this machine cannot sandbox commands")

// Active reports whether commands run sandboxed at all.
func (r *Runner) Active() bool {
	return r != nil && r.Mode != ModeOff && r.Status.Available()
}

// Sandboxes reports whether the shell command will run inside the walls;
// command "" asks about a process that is not a shell command.
func (r *Runner) Sandboxes(command string) bool {
	return r.Active() && (command == "" || r.Excluded == nil || !r.Excluded(command))
}

// Command prepares cmd, not yet started, to run for the model from cwd:
// inside the walls, or as it is when the sandbox is off, the command is
// excluded, or (auto mode) the machine cannot sandbox. Either way its
// environment loses HideEnv. It returns the
// policy the command runs under, nil when none.
func (r *Runner) Command(cmd *exec.Cmd, cwd, command string) (*Policy, error) {
	if r != nil && len(r.HideEnv) > 0 {
		// First, so that no way out of the walls below keeps them.
		cmd.Env = WithoutVars(cmd.Env, r.HideEnv)
	}
	if r == nil || r.Mode == ModeOff {
		return nil, nil
	}
	if !r.Status.Available() {
		if r.Mode == ModeRequired {
			return nil, fmt.Errorf("%w: %s", ErrRequired, r.Status.Reason)
		}
		r.warned.Do(func() {
			if r.Warn != nil {
				r.Warn("the sandbox is unavailable, so commands run unsandboxed under the permission rules alone: " + r.Status.Reason + " (sandbox.mode: required refuses instead; see `cadre sandbox status`)")
			}
		})
		return nil, nil
	}
	if command != "" && r.Excluded != nil && r.Excluded(command) {
		return nil, nil
	}
	p := r.Policy(cwd)
	if r.TempDir {
		r.tmp.once.Do(func() { r.tmp.dir, r.tmp.err = os.MkdirTemp("", "cadre-sandbox-") })
		if r.tmp.err != nil {
			return nil, fmt.Errorf("sandbox: make the commands' temp dir: %w", r.tmp.err)
		}
		p.Writable = append(p.Writable, r.tmp.dir)
		if cmd.Env == nil {
			cmd.Env = os.Environ()
		}
		cmd.Env = append(cmd.Env, "TMPDIR="+r.tmp.dir)
	}
	if err := Wrap(cmd, p, r.Status.Launcher); err != nil {
		return nil, err
	}
	return &p, nil
}

// Policy is the walls of a command started from cwd: cwd is writable too
// (a worktree child's checkout), the protected names of every writable
// tree read-only, the hidden paths that exist hidden.
func (r *Runner) Policy(cwd string) Policy {
	p := Policy{Network: r.Network}
	add := func(list *[]string, d string) {
		if d == "" || !filepath.IsAbs(d) {
			return
		}
		d = filepath.Clean(d)
		if !slices.Contains(*list, d) {
			*list = append(*list, d)
		}
	}
	for _, d := range r.Writable {
		add(&p.Writable, d)
	}
	add(&p.Writable, cwd)
	// Links resolved: the kernel judges where a path leads.
	for _, d := range slices.Clone(p.Writable) {
		if real, err := filepath.EvalSymlinks(d); err == nil {
			add(&p.Writable, real)
		}
	}
	for _, w := range p.Writable {
		for _, name := range ProtectedNames {
			if q := filepath.Join(w, name); exists(q) {
				add(&p.ReadOnly, q)
			}
		}
	}
	for _, d := range r.Protected {
		if under(p.Writable, d) != "" && exists(d) {
			add(&p.ReadOnly, d)
		}
	}
	for _, d := range r.ReadDeny {
		if exists(d) {
			add(&p.ReadDeny, d)
		}
	}
	return p
}

func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

// Close removes the commands' temp dir.
func (r *Runner) Close() error {
	if r == nil {
		return nil
	}
	r.tmp.once.Do(func() {}) // no temp dir is made after Close
	if r.tmp.dir == "" {
		return nil
	}
	return os.RemoveAll(r.tmp.dir)
}
