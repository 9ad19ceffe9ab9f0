//go:build unix

package bench

import (
	"bufio"
	"bytes"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// BenchmarkServeFirstAnswer is how soon `cadre serve` answers: from just
// before the exec to the end of the first API answer (GET /api/sessions
// with the bearer token), the request sent as soon as the server says
// where it listens. The runtime, its store and the A2A agents open before
// it listens, so this is what a client that starts the server waits.
// ms-to-answer is the median over the iterations, max-ms-to-answer the
// slowest; peak-RSS-KB the largest VmHWM when the answer arrived. Each
// server is then stopped with SIGTERM and must exit cleanly.
func BenchmarkServeFirstAnswer(b *testing.B) {
	srv := oneTurnServer(b)
	p := newProject(b, "ANTHROPIC_BASE_URL="+srv.URL)
	var took []time.Duration
	var peak int64
	for b.Loop() {
		d, rss := p.serveOnce(b)
		took = append(took, d)
		peak = max(peak, rss)
	}
	slices.Sort(took)
	b.ReportMetric(float64(took[len(took)/2])/float64(time.Millisecond), "ms-to-answer")
	b.ReportMetric(float64(took[len(took)-1])/float64(time.Millisecond), "max-ms-to-answer")
	b.ReportMetric(float64(peak), "peak-RSS-KB")
}

func (p project) serveOnce(b *testing.B) (time.Duration, int64) {
	const token = "bench-token"
	cmd := exec.Command(bin, "serve", "--addr", "127.0.0.1:0", "--token", token, "--model", "claude-sonnet-5-5")
	cmd.Dir, cmd.Env = p.dir, p.vars
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	var errb bytes.Buffer
	cmd.Stderr = &errb
	start := time.Now()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	waited := false
	defer func() {
		if !waited {
			cmd.Process.Kill()
			cmd.Wait()
		}
	}()
	sc := bufio.NewScanner(out)
	url := ""
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "cadre serve: listening on "); ok {
			url = strings.TrimSuffix(strings.Fields(rest)[0], "/")
			break
		}
	}
	if url == "" {
		cmd.Wait()
		waited = true
		b.Fatalf("cadre serve said nowhere it listens: %s", errb.String())
	}
	// The rest of standard output must be read, or a write blocks.
	drained := make(chan struct{})
	go func() { io.Copy(io.Discard, out); close(drained) }()
	req, _ := http.NewRequest("GET", url+"/api/sessions", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	took := time.Since(start)
	if err != nil || resp.StatusCode != http.StatusOK {
		b.Fatalf("GET /api/sessions: %d %v: %s", resp.StatusCode, err, body)
	}
	rss := vmHWM(cmd.Process.Pid)
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		b.Fatal(err)
	}
	<-drained
	err = cmd.Wait()
	waited = true
	if err != nil {
		b.Fatalf("cadre serve after SIGTERM: %v: %s", err, errb.String())
	}
	http.DefaultClient.CloseIdleConnections()
	return took, rss
}

// vmHWM is a running process's peak resident set in KiB, from
// /proc/<pid>/status (0 without /proc).
func vmHWM(pid int) int64 {
	status, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "status"))
	if err != nil {
		return 0
	}
	for line := range strings.Lines(string(status)) {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb
		}
	}
	return 0
}
