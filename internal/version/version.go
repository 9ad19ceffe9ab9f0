package version

import (
	"fmt"
	"runtime/debug"
	"strings"
	"sync"
)

// release is the version a release build sets with
//
//	-ldflags "-X github.com/cadre-dev/cadre/internal/version.release=v1.2.3"
//
// (.goreleaser.yaml). It is written by the linker, never at run time.
var release string

// Devel is the version of a build that records none: `go build` or
// `go run` in a checkout without a tag, or in a linked worktree, where the
// go command stamps nothing.
const Devel = "devel"

// Info is what a binary knows of its origin.
type Info struct {
	// Version is the release's version, else the module version the go
	// command recorded (a tag, or a pseudo-version naming the commit),
	// else Devel.
	Version string
	// Revision is the commit built, Time its time and Modified whether
	// the tree had changes not committed; empty when the go command
	// recorded no version control information.
	Revision string
	Time     string
	Modified bool
	// Go is the Go release that built the binary; Platform its GOOS/GOARCH.
	Go       string
	Platform string
}

// Get returns this binary's Info. The build info is read once.
func Get() Info { return get() }

var get = sync.OnceValue(func() Info {
	bi, _ := debug.ReadBuildInfo()
	return From(release, bi)
})

// From makes the Info of a binary whose linker set release (or "") and
// whose build info is bi (nil when it has none).
func From(release string, bi *debug.BuildInfo) Info {
	var in Info
	if bi != nil {
		in.Version = bi.Main.Version
		in.Go = bi.GoVersion
		var goos, goarch string
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				in.Revision = s.Value
			case "vcs.time":
				in.Time = s.Value
			case "vcs.modified":
				in.Modified = s.Value == "true"
			case "GOOS":
				goos = s.Value
			case "GOARCH":
				goarch = s.Value
			}
		}
		if goos != "" && goarch != "" {
			in.Platform = goos + "/" + goarch
		}
	}
	if release != "" {
		in.Version = release
	}
	if in.Version == "" || in.Version == "(devel)" {
		in.Version = Devel
	}
	return in
}

// String is the version line: "cadre v1.2.3 (commit 0123456789ab,
// 2026-11-28T10:00:00Z, modified; go1.26.8 linux/amd64)", with the parts
// the binary does not know left out.
func (in Info) String() string {
	var vcs []string
	if in.Revision != "" {
		vcs = append(vcs, "commit "+short(in.Revision))
	}
	if in.Time != "" {
		vcs = append(vcs, in.Time)
	}
	if in.Modified {
		vcs = append(vcs, "modified")
	}
	var parts []string
	if len(vcs) > 0 {
		parts = append(parts, strings.Join(vcs, ", "))
	}
	if build := strings.TrimSpace(in.Go + " " + in.Platform); build != "" {
		parts = append(parts, build)
	}
	if len(parts) == 0 {
		return "cadre " + in.Version
	}
	return fmt.Sprintf("cadre %s (%s)", in.Version, strings.Join(parts, "; "))
}

// short is a commit hash cut to the 12 characters that name it in
// practice, as the go command's pseudo-versions do.
func short(rev string) string {
	if len(rev) > 12 {
		return rev[:12]
	}
	return rev
}
