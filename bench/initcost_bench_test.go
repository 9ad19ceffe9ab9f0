package bench

import (
	"bufio"
	"bytes"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// BenchmarkPackageInit is package initialisation, which every command
// pays before main runs: `GODEBUG=inittrace=1 cadre version`, summed over
// the packages. init-ms is the total clock time of the init functions,
// slowest-init-ms the largest single package's (its path is logged), and
// init-allocs the allocations. A dependency that builds tables at init
// shows here first: go-runewidth v0.0.27, pulled in by the TUI's libraries,
// took 22 ms of every start, 4× all the rest.
func BenchmarkPackageInit(b *testing.B) {
	p := newProject(b)
	var total, slowest, allocs float64
	var slowestPkg string
	n := 0
	for b.Loop() {
		cmd := exec.Command(bin, "version")
		cmd.Dir, cmd.Env = p.dir, append(p.vars, "GODEBUG=inittrace=1")
		var errb bytes.Buffer
		cmd.Stderr = &errb
		if err := cmd.Run(); err != nil {
			b.Fatalf("cadre version: %v\n%s", err, errb.String())
		}
		// "init example.com/pkg @0.5 ms, 0.12 ms clock, 512 bytes, 4 allocs"
		sc := bufio.NewScanner(&errb)
		for sc.Scan() {
			f := strings.Fields(sc.Text())
			if len(f) < 11 || f[0] != "init" || f[6] != "clock," {
				continue
			}
			ms, err1 := strconv.ParseFloat(f[4], 64)
			al, err2 := strconv.ParseFloat(f[9], 64)
			if err1 != nil || err2 != nil {
				b.Fatalf("unreadable inittrace line %q", sc.Text())
			}
			total += ms
			allocs += al
			if ms > slowest {
				slowest, slowestPkg = ms, f[1]
			}
		}
		n++
	}
	if total == 0 {
		b.Fatal("no inittrace lines: was GODEBUG=inittrace=1 honoured?")
	}
	b.ReportMetric(total/float64(n), "init-ms")
	b.ReportMetric(slowest, "slowest-init-ms")
	b.ReportMetric(allocs/float64(n), "init-allocs")
	b.Logf("slowest package init: %s (%.2f ms)", slowestPkg, slowest)
}
