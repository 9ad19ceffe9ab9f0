package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Network is what a sandboxed process may do on the network.
type Network string

const (
	// NetworkAllow leaves the network alone.
	NetworkAllow Network = "allow"
	// NetworkDeny refuses every TCP connect and bind (Landlock); UDP and
	// raw sockets are not covered by the kernel's rules at ABI 7.
	NetworkDeny Network = "deny"
)

// ErrUnavailable is returned by Wrap where this OS or kernel has no
// sandbox; Probe says why.
var ErrUnavailable = errors.New("sandbox unavailable")

// Policy is the walls of one command. Paths are absolute; ones that do not
// exist are skipped when the walls go up.
type Policy struct {
	// Writable are the trees the command may change: the workspace, the
	// added directories, the session's temp dir, a worktree child's
	// checkout. Everything else is read-only.
	Writable []string `json:"writable"`
	// ReadOnly are files and trees inside Writable that stay read-only
	// (.git, .cadre, .claude, $CADRE_HOME, …). A Writable path inside one
	// of them is writable again (a worktree child's checkout under .git).
	ReadOnly []string `json:"readOnly,omitempty"`
	// ReadDeny are files and trees the command cannot read: a tree is
	// replaced by an empty, read-only directory, a file by an empty one.
	ReadDeny []string `json:"readDeny,omitempty"`
	// Network is NetworkAllow ("" too) or NetworkDeny.
	Network Network `json:"network,omitempty"`
}

// Validate checks that every path is absolute and the network known.
func (p Policy) Validate() error {
	for _, l := range []struct {
		name  string
		paths []string
	}{{"writable", p.Writable}, {"readOnly", p.ReadOnly}, {"readDeny", p.ReadDeny}} {
		for _, d := range l.paths {
			if !filepath.IsAbs(d) {
				return fmt.Errorf("sandbox policy: %s path %q is not absolute", l.name, d)
			}
		}
	}
	switch p.Network {
	case "", NetworkAllow, NetworkDeny:
	default:
		return fmt.Errorf("sandbox policy: network %q: want allow or deny", p.Network)
	}
	return nil
}

// within reports whether path is dir or below it.
func within(dir, path string) bool {
	if dir == path {
		return true
	}
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../")
}

// under returns the deepest of dirs that holds path, or "".
func under(dirs []string, path string) string {
	best := ""
	for _, d := range dirs {
		if within(d, path) && len(d) > len(best) {
			best = d
		}
	}
	return best
}

// WriteVerdict says why the policy refuses writing path (absolute, links
// resolved by the caller where it can), or "" when it allows it.
func (p Policy) WriteVerdict(path string) string {
	w, ro := under(p.Writable, path), under(p.ReadOnly, path)
	switch {
	case w == "":
		return "outside the workspace"
	case ro != "" && len(ro) >= len(w):
		return "a protected path, read-only in the sandbox"
	}
	return ""
}

// ReadDenied reports whether the policy hides path.
func (p Policy) ReadDenied(path string) bool { return under(p.ReadDeny, path) != "" }

// refusalMarks are the error texts a refused write or read produces:
// Landlock gives EACCES (or EXDEV/EPERM for a rename), a read-only mount
// EROFS, a hidden file is missing.
var refusalMarks = []string{": Permission denied", ": Read-only file system", ": Operation not permitted", ": Invalid cross-device link", ": No such file or directory"}

// Explain reads a sandboxed command's output for refusals the policy
// accounts for and says, one line each, what the sandbox refused, so a
// model asks for the directory instead of retrying. cwd resolves relative
// paths. A line is explained only when a path it names is one the policy
// refuses, so an ordinary EACCES or a missing file elsewhere is left alone.
func (p Policy) Explain(output, cwd string) []string {
	var out []string
	seen := map[string]bool{}
	add := func(s string) {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	for line := range strings.Lines(output) {
		line = strings.TrimRight(line, "\r\n")
		for _, mark := range refusalMarks {
			i := strings.Index(line, mark)
			if i < 0 {
				continue
			}
			missing := mark == ": No such file or directory"
			for _, cand := range candidates(line[:i]) {
				abs := cand
				if !filepath.IsAbs(abs) {
					abs = filepath.Join(cwd, abs)
				}
				abs = filepath.Clean(abs)
				if p.ReadDenied(abs) {
					add(fmt.Sprintf("the sandbox refused reading %s (a read-denied path, hidden from sandboxed commands)", abs))
					break
				}
				if missing {
					continue
				}
				if _, err := os.Lstat(filepath.Dir(abs)); err != nil {
					continue // not a path this command could have written
				}
				if why := p.WriteVerdict(resolve(abs)); why != "" {
					add(fmt.Sprintf("the sandbox refused writing %s (%s)", abs, why))
					break
				}
			}
			break
		}
	}
	if p.Network == NetworkDeny && len(out) == 0 && networkRefused(output) {
		out = append(out, "the sandbox refused a network connection (the sandbox's network is deny)")
	}
	return out
}

// candidates are the paths a diagnostic's text before its error may name:
// quoted names first, then the last ": "-field and each of its suffixes
// after a space ("sh: 1: cannot create /x" names "/x").
func candidates(s string) []string {
	var out []string
	for _, q := range [][2]string{{"'", "'"}, {"‘", "’"}, {`"`, `"`}, {"`", "'"}} {
		rest := s
		for {
			i := strings.Index(rest, q[0])
			if i < 0 {
				break
			}
			rest = rest[i+len(q[0]):]
			j := strings.Index(rest, q[1])
			if j < 0 {
				break
			}
			if rest[:j] != "" {
				out = append(out, rest[:j])
			}
			rest = rest[j+len(q[1]):]
		}
	}
	field := s
	if i := strings.LastIndex(s, ": "); i >= 0 {
		field = s[i+2:]
	}
	field = strings.TrimSpace(field)
	for field != "" {
		out = append(out, field)
		i := strings.IndexByte(field, ' ')
		if i < 0 {
			break
		}
		field = field[i+1:]
	}
	return slices.DeleteFunc(out, func(c string) bool { return strings.ContainsAny(c, "\x00\n") })
}

// resolve follows the links of path's nearest existing ancestor, as the
// kernel did when it refused.
func resolve(path string) string {
	dir, rest := path, ""
	for {
		if r, err := filepath.EvalSymlinks(dir); err == nil {
			return filepath.Join(r, rest)
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return path
		}
		rest = filepath.Join(filepath.Base(dir), rest)
		dir = parent
	}
}

func networkRefused(output string) bool {
	lower := strings.ToLower(output)
	for _, s := range []string{"permission denied", "couldn't connect", "connection refused", "network is unreachable", "failed to connect"} {
		if strings.Contains(lower, s) && (strings.Contains(lower, "connect") || strings.Contains(lower, "socket")) {
			return true
		}
	}
	return false
}
