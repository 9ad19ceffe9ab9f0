//go:build unix

package bench

import (
	"bufio"
	"bytes"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// startTrace execs cadre with CADRE_START_TRACE=1 and returns how long
// passed from just before the exec to the first line of main (the
// runtime's start, the page faults of a binary being mapped, every
// linked package's initialisation), the whole run's wall time, and its
// standard output.
func (p project) startTrace(b *testing.B, args ...string) (toMain, wall time.Duration, out string) {
	cmd := exec.Command(bin, args...)
	cmd.Dir, cmd.Env = p.dir, append(p.vars, "CADRE_START_TRACE=1")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	wall = time.Since(start)
	if err != nil {
		b.Fatalf("cadre %v: %v\n%s", args, err, stderr.String())
	}
	sc := bufio.NewScanner(&stderr)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "cadre: start: main "); ok {
			ns, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				b.Fatalf("unreadable start trace %q", sc.Text())
			}
			return time.Unix(0, ns).Sub(start), wall, stdout.String()
		}
	}
	b.Fatalf("cadre %v printed no start trace (a build older than CADRE_START_TRACE?):\n%s", args, stderr.String())
	return 0, 0, ""
}

// reportStart reports the median and the largest time to main over the
// iterations, and the median wall time: on a shared machine the mean of a
// few milliseconds is one slow exec away from meaning nothing.
func reportStart(b *testing.B, toMain, wall []time.Duration) {
	slices.Sort(toMain)
	slices.Sort(wall)
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	b.ReportMetric(ms(toMain[len(toMain)/2]), "ms-to-main")
	b.ReportMetric(ms(toMain[len(toMain)-1]), "max-ms-to-main")
	b.ReportMetric(ms(wall[len(wall)/2]), "median-wall-ms")
}

// BenchmarkTimeToMain is what every command pays before main runs: exec,
// the runtime's start and every linked package's initialisation, for
// `cadre version` and for a one-turn `cadre -p` (the same, unless a
// command's own work ran first).
func BenchmarkTimeToMain(b *testing.B) {
	b.Run("version", func(b *testing.B) {
		p := newProject(b)
		var toMain, wall []time.Duration
		for b.Loop() {
			m, w, out := p.startTrace(b, "version")
			if !strings.Contains(out, "cadre ") {
				b.Fatalf("cadre version printed %q", out)
			}
			toMain, wall = append(toMain, m), append(wall, w)
		}
		reportStart(b, toMain, wall)
	})
	b.Run("one-turn", func(b *testing.B) {
		srv := oneTurnServer(b)
		p := newProject(b, "ANTHROPIC_BASE_URL="+srv.URL)
		var toMain, wall []time.Duration
		for b.Loop() {
			m, w, out := p.startTrace(b, "-p", "hi", "--output-format", "json", "--model", "claude-sonnet-5-5")
			if !strings.Contains(out, `"is_error":false`) {
				b.Fatalf("output lacks the result:\n%s", out)
			}
			toMain, wall = append(toMain, m), append(wall, w)
		}
		reportStart(b, toMain, wall)
	})
}
