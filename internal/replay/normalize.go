package replay

import (
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
)

// Normalizer removes from a tool result what legitimately differs between
// a recorded run and a faithful replay of it, so that only real
// differences remain. The rules (docs/replay.md lists them for users):
//
//   - the replay's workspace (the scratch copy) is written as the recorded
//     workspace, so absolute paths compare equal;
//   - ids in UUID form (session, agent, task ids; cadre's are UUIDv7) become
//     <id>;
//   - timestamps (RFC 3339 and "2006-01-02 15:04:05", with optional
//     fractions and zone) become <time>;
//   - durations become <duration>: "duration_ms: N" (the Agent result's
//     footer), "durationMs"/"duration_ms" JSON fields, and numbers with a
//     unit of ns, µs, us or ms, or a fractional number of seconds ("1.25s").
//
// Both sides of a comparison go through the same rules.
type Normalizer struct {
	// paths maps a replay path prefix to the recorded one, longest first.
	paths [][2]string
}

// NewNormalizer maps the replay's workspace (and its symlink-resolved
// form) to the recorded one.
func NewNormalizer(replayDir, recordedDir string) *Normalizer {
	n := &Normalizer{}
	if replayDir == "" || recordedDir == "" || replayDir == recordedDir {
		return n
	}
	add := func(from string) {
		for _, p := range n.paths {
			if p[0] == from {
				return
			}
		}
		n.paths = append(n.paths, [2]string{from, recordedDir})
	}
	add(replayDir)
	if real, err := filepath.EvalSymlinks(replayDir); err == nil {
		add(real)
	}
	sort.Slice(n.paths, func(i, j int) bool { return len(n.paths[i][0]) > len(n.paths[j][0]) })
	return n
}

// rules are the patterns of the common rules, compiled on first use (not
// when the program starts: most commands never replay).
var rules = sync.OnceValue(func() [4]*regexp.Regexp {
	return [4]*regexp.Regexp{
		regexp.MustCompile(`(?i)\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b`),
		regexp.MustCompile(`\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:?\d{2})?`),
		regexp.MustCompile(`(duration_ms: |"duration_?[mM]s":\s*)\d+`),
		regexp.MustCompile(`\b(\d+(\.\d+)?(ns|µs|us|ms)|\d+\.\d+s)\b`),
	}
})

// Recorded normalises a recorded text.
func (n *Normalizer) Recorded(s string) string { return n.common(s) }

// Replayed normalises a text the replay produced: its workspace paths are
// first written as the recorded workspace's.
func (n *Normalizer) Replayed(s string) string {
	for _, p := range n.paths {
		s = strings.ReplaceAll(s, p[0], p[1])
	}
	return n.common(s)
}

func (n *Normalizer) common(s string) string {
	re := rules()
	s = re[0].ReplaceAllString(s, "<id>")
	s = re[1].ReplaceAllString(s, "<time>")
	s = re[2].ReplaceAllString(s, "${1}<duration>")
	s = re[3].ReplaceAllString(s, "<duration>")
	return s
}
