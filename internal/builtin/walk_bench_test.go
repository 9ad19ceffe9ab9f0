//go:build unix

package builtin

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/cadre-dev/cadre/tool"
)

// benchTree builds a repository of about 10,000 files: 40 packages of 25
// directories with 8 files each, a node_modules of 1,500 files and a build
// output of 500, both named in .gitignore, and a .git directory.
func benchTree(b *testing.B) string {
	b.Helper()
	dir := b.TempDir()
	write := func(rel, content string) {
		full := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	write(".gitignore", "node_modules/\n/build/\n*.log\n")
	write(".git/HEAD", "ref: refs/heads/main\n")
	body := "package p\n\nfunc f() int {\n\treturn 42 // answer\n}\n"
	for p := range 40 {
		for d := range 25 {
			for f := range 8 {
				ext := ".go"
				if f == 7 {
					ext = ".log"
				}
				write(fmt.Sprintf("pkg%02d/dir%02d/file%d%s", p, d, f, ext), body)
			}
		}
	}
	for i := range 1500 {
		write(fmt.Sprintf("node_modules/m%03d/index%d.js", i/10, i%10), "module.exports = 42\n")
	}
	for i := range 500 {
		write(fmt.Sprintf("build/out%03d.go", i), body)
	}
	return dir
}

func benchCall(b *testing.B, tl tool.Tool, dir string, input map[string]any) {
	raw, err := json.Marshal(input)
	if err != nil {
		b.Fatal(err)
	}
	env := tool.Env{Cwd: dir}
	// CPU time as well as wall time: on a machine shared with other
	// builds the wall time says more about them than about the walk.
	before := cpuTime(b)
	n := 0
	for b.Loop() {
		res, err := tl.Call(b.Context(), env, raw)
		if err != nil || res.IsError {
			b.Fatalf("%v %v", err, text(res))
		}
		n++
	}
	b.ReportMetric(float64(cpuTime(b)-before)/float64(n), "cpu-ns/op")
}

// cpuTime is the process's user and system time so far.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// go test -run '^$' -bench Walk ./internal/builtin
func BenchmarkWalkGlob(b *testing.B) {
	benchCall(b, Glob(Options{}), benchTree(b), map[string]any{"pattern": "**/*.go"})
}

func BenchmarkWalkGrep(b *testing.B) {
	benchCall(b, Grep(Options{}), benchTree(b), map[string]any{"pattern": "answer", "output_mode": "count"})
}

func BenchmarkWalkLS(b *testing.B) {
	benchCall(b, LS(Options{}), benchTree(b), map[string]any{"path": "."})
}
