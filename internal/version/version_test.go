package version

import (
	"runtime/debug"
	"testing"
)

func TestFrom(t *testing.T) {
	stamped := &debug.BuildInfo{
		GoVersion: "go1.26.8",
		Main:      debug.Module{Path: "github.com/cadre-dev/cadre", Version: "v0.2.1-0.20261128100000-0123456789ab+dirty"},
		Settings: []debug.BuildSetting{
			{Key: "GOOS", Value: "linux"}, {Key: "GOARCH", Value: "arm64"},
			{Key: "vcs.revision", Value: "0123456789abcdef0123456789abcdef01234567"},
			{Key: "vcs.time", Value: "2026-11-28T10:00:00Z"},
			{Key: "vcs.modified", Value: "true"},
		},
	}
	unstamped := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "github.com/cadre-dev/cadre", Version: "(devel)"}}
	for _, tc := range []struct {
		name    string
		release string
		bi      *debug.BuildInfo
		version string
		line    string
	}{
		{"stamped by the go command", "", stamped, "v0.2.1-0.20261128100000-0123456789ab+dirty",
			"cadre v0.2.1-0.20261128100000-0123456789ab+dirty (commit 0123456789ab, 2026-11-28T10:00:00Z, modified; go1.26.8 linux/arm64)"},
		{"a release's -X wins", "v1.0.0", stamped, "v1.0.0",
			"cadre v1.0.0 (commit 0123456789ab, 2026-11-28T10:00:00Z, modified; go1.26.8 linux/arm64)"},
		{"no version control information", "", unstamped, "devel", "cadre devel (go1.26.8)"},
		{"no build info at all", "", nil, "devel", "cadre devel"},
		{"a release without build info", "1.0.0", nil, "1.0.0", "cadre 1.0.0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := From(tc.release, tc.bi)
			if in.Version != tc.version {
				t.Errorf("Version %q, want %q", in.Version, tc.version)
			}
			if got := in.String(); got != tc.line {
				t.Errorf("String\n got %q\nwant %q", got, tc.line)
			}
		})
	}
}

// The test binary has build info: Get reads it.
func TestGetReadsThisBinary(t *testing.T) {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		t.Skip("SKIPPED, NOT TESTED: the test binary has no build info")
	}
	if got := Get(); got.Go != bi.GoVersion || got.Version == "" {
		t.Errorf("Get() = %+v, build info says Go %s", got, bi.GoVersion)
	}
}
