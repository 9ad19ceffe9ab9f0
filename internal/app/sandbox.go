package app

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/cadre-dev/cadre/internal/config"
	"github.com/cadre-dev/cadre/internal/permission"
	"github.com/cadre-dev/cadre/internal/sandbox"
)

// newSandbox makes the runtime's sandbox Runner from the settings: the
// walls of every process started for the model. home is the user's home
// directory; cfg the loaded settings.
func newSandbox(cwd, home string, cfg *config.Loaded, rules permission.Rules) *sandbox.Runner {
	s := cfg.Settings.Sandbox
	exe, err := os.Executable()
	if err != nil {
		exe = "" // Probe says there is no launcher
	}
	r := &sandbox.Runner{Mode: s.Mode, Status: sandbox.Probe(sandbox.FindLauncher(exe))}
	if r.Mode == "" {
		r.Mode = sandbox.ModeAuto
	}
	if s.Network.Mode == "deny" {
		r.Network = sandbox.NetworkDeny
	}
	expand := func(p string) string {
		switch {
		case p == "~":
			return home
		case strings.HasPrefix(p, "~/"):
			return filepath.Join(home, p[2:])
		case !filepath.IsAbs(p):
			return filepath.Join(cwd, p)
		}
		return filepath.Clean(p)
	}
	r.Writable = append(r.Writable, cwd)
	for _, d := range cfg.Settings.Permissions.AdditionalDirectories {
		r.Writable = append(r.Writable, expand(d))
	}
	for _, d := range s.AllowWrite {
		r.Writable = append(r.Writable, expand(d))
	}
	r.Protected = []string{cfg.Home}
	if home != "" {
		r.Protected = append(r.Protected, filepath.Join(home, ".cadre"), filepath.Join(home, ".claude"))
		for _, d := range sandbox.DefaultReadDeny {
			r.ReadDeny = append(r.ReadDeny, filepath.Join(home, d))
		}
	}
	for _, d := range s.DenyRead {
		r.ReadDeny = append(r.ReadDeny, expand(d))
	}
	// A Read deny rule that names one file or tree is hidden too; a
	// pattern is left to the permission layer, which reads it per call.
	for _, rule := range rules.Deny {
		if rule.Tool != "Read" {
			continue
		}
		if p, ok := literalPath(rule.Specifier, cwd, home); ok {
			r.ReadDeny = append(r.ReadDeny, p)
		}
	}
	if excluded := s.ExcludedCommands; len(excluded) > 0 {
		r.Excluded = func(command string) bool {
			for _, spec := range excluded {
				if permission.CommandNamed(spec, command) {
					return true
				}
			}
			return false
		}
	}
	r.TempDir = true
	return r
}

// literalPath turns a Read rule's specifier that names one path, without
// wildcards, into that path: "//x" absolute, "~/x" home, "/x" and "./x"
// the project's.
func literalPath(spec, cwd, home string) (string, bool) {
	if spec == "" || strings.ContainsAny(spec, "*?[{") {
		return "", false
	}
	switch {
	case strings.HasPrefix(spec, "//"):
		return filepath.Clean(spec[1:]), true
	case strings.HasPrefix(spec, "~/") && home != "":
		return filepath.Join(home, spec[2:]), true
	case strings.HasPrefix(spec, "/"), strings.HasPrefix(spec, "./"):
		return filepath.Join(cwd, spec), true
	}
	return "", false
}

// SandboxReport says what this machine's sandbox supports and what it
// enforces for this runtime's commands, for `cadre sandbox status`.
func (a *App) SandboxReport() string {
	sb := a.Sandbox
	var b strings.Builder
	b.WriteString(sb.Status.String())
	fmt.Fprintf(&b, "mode: %s", sb.Mode)
	switch {
	case sb.Mode == sandbox.ModeOff:
		b.WriteString(" (commands run unsandboxed)\n")
		return b.String()
	case !sb.Status.Available() && sb.Mode == sandbox.ModeRequired:
		b.WriteString(" (commands are refused: the sandbox is unavailable)\n")
		return b.String()
	case !sb.Status.Available():
		b.WriteString(" (commands run unsandboxed: the sandbox is unavailable)\n")
		return b.String()
	}
	b.WriteString(" (commands run sandboxed)\n")
	p := sb.Policy(a.Cwd)
	list := func(name string, paths []string) {
		fmt.Fprintf(&b, "%s:\n", name)
		if len(paths) == 0 {
			b.WriteString("  (none)\n")
		}
		for _, d := range paths {
			fmt.Fprintf(&b, "  %s\n", d)
		}
	}
	list("writable (and a temp dir of its own as TMPDIR)", p.Writable)
	list("read-only inside them", p.ReadOnly)
	list("hidden", p.ReadDeny)
	network := "allow"
	if p.Network == sandbox.NetworkDeny {
		network = "deny (TCP connect and bind refused; UDP not enforced)"
	}
	fmt.Fprintf(&b, "network: %s\n", network)
	fmt.Fprintf(&b, "autoAllowBashIfSandboxed: %v\n", a.Policy.Sandboxed != nil)
	fmt.Fprintf(&b, "hooks inside: %v\n", a.Cfg.Settings.Sandbox.Hooks)
	if ex := a.Cfg.Settings.Sandbox.ExcludedCommands; len(ex) > 0 {
		fmt.Fprintf(&b, "excluded commands: %s\n", strings.Join(ex, ", "))
	}
	return b.String()
}
