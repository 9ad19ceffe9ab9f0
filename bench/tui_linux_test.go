//go:build linux

package bench

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
	"golang.org/x/sys/unix"

	"github.com/cadre-dev/cadre/internal/testkit"
)

// The TUI benchmarks run `cadre` with no -p, as a user opens it, on a
// pseudo-terminal of 140×45 that this file opens itself (Linux: /dev/ptmx),
// and read what it draws. The first interactive screen is the one whose
// input line shows tuiReady.
const tuiReady = "Message cadre"

// tuiProc is cadre running on a pseudo-terminal.
type tuiProc struct {
	cmd   *exec.Cmd
	start time.Time
	pty   *os.File // the terminal's master side
	// ready is closed when the output first holds tuiReady; readyAt is
	// when.
	ready   chan struct{}
	readyAt time.Time
	// drained is closed when the reader has seen the terminal's end.
	drained chan struct{}
	mu      sync.Mutex
	out     bytes.Buffer // what was drawn up to the first screen
}

// startTUI starts cadre's TUI in p and reads its output until it exits.
func (p project) startTUI(b *testing.B, args ...string) *tuiProc {
	master, slave, err := openPTY(140, 45)
	if err != nil {
		b.Fatalf("open a pseudo-terminal: %v", err)
	}
	defer slave.Close()
	t := &tuiProc{pty: master, ready: make(chan struct{}), drained: make(chan struct{})}
	t.cmd = exec.Command(bin, args...)
	t.cmd.Dir, t.cmd.Env = p.dir, append(p.vars, "TERM=xterm-256color")
	t.cmd.Stdin, t.cmd.Stdout, t.cmd.Stderr = slave, slave, slave
	// Its own session with the terminal as the controlling one, as a
	// terminal emulator starts a shell.
	t.cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	t.start = time.Now()
	if err := t.cmd.Start(); err != nil {
		master.Close()
		b.Fatalf("cadre %v: %v", args, err)
	}
	go t.read()
	return t
}

// read drains the terminal, so cadre never blocks writing to it, and marks
// the first screen.
func (t *tuiProc) read() {
	defer close(t.drained)
	buf := make([]byte, 32<<10)
	found := false
	for {
		n, err := t.pty.Read(buf)
		if n > 0 && !found {
			t.mu.Lock()
			t.out.Write(buf[:n])
			found = strings.Contains(ansi.Strip(t.out.String()), tuiReady)
			if found {
				t.readyAt = time.Now()
			}
			t.mu.Unlock()
			if found {
				close(t.ready)
			}
		}
		if err != nil {
			// EIO once cadre and every other holder of the
			// terminal's other side have gone.
			return
		}
	}
}

// waitReady waits for the first interactive screen and returns the time
// from exec to it.
func (t *tuiProc) waitReady(b *testing.B) time.Duration {
	select {
	case <-t.ready:
		return t.readyAt.Sub(t.start)
	case <-time.After(30 * time.Second):
		t.mu.Lock()
		out := ansi.Strip(t.out.String())
		t.mu.Unlock()
		t.kill()
		b.Fatalf("cadre drew no interactive screen (%q) within 30s; it drew:\n%s", tuiReady, out)
		return 0
	}
}

// quit presses Ctrl+C twice, as a user quits, and waits for cadre to exit
// and the terminal to drain.
func (t *tuiProc) quit(b *testing.B) {
	if _, err := t.pty.Write([]byte{0x03}); err != nil {
		b.Fatalf("type Ctrl+C: %v", err)
	}
	if _, err := t.pty.Write([]byte{0x03}); err != nil {
		b.Fatalf("type Ctrl+C: %v", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- t.cmd.Wait() }()
	select {
	case err := <-exited:
		t.pty.Close()
		<-t.drained
		if err != nil {
			b.Fatalf("cadre quit with %v", err)
		}
	case <-time.After(10 * time.Second):
		t.cmd.Process.Kill()
		<-exited
		t.pty.Close()
		<-t.drained
		b.Fatal("cadre did not quit within 10s of Ctrl+C twice")
	}
}

// kill ends cadre at once (a failing benchmark's cleanup).
func (t *tuiProc) kill() {
	t.cmd.Process.Kill()
	t.cmd.Wait()
	t.pty.Close()
	<-t.drained
}

// cpuUse is what a process has used so far, summed over its threads.
type cpuUse struct {
	// cpu is the time its threads ran, from /proc/PID/task/TID/schedstat
	// (nanoseconds; /proc/PID/stat's utime and stime count 10 ms ticks,
	// too coarse for an idle second).
	cpu time.Duration
	// switches are its threads' context switches, voluntary and not, from
	// /proc/PID/task/TID/status: each is a wake-up or a preemption.
	switches int64
}

// readCPUUse reads pid's cpuUse. A thread that exits while it is read is
// left out.
func readCPUUse(pid int) (cpuUse, error) {
	dir := fmt.Sprintf("/proc/%d/task", pid)
	tasks, err := os.ReadDir(dir)
	if err != nil {
		return cpuUse{}, err
	}
	var u cpuUse
	for _, task := range tasks {
		sched, err := os.ReadFile(dir + "/" + task.Name() + "/schedstat")
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return cpuUse{}, err
		}
		status, err := os.ReadFile(dir + "/" + task.Name() + "/status")
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return cpuUse{}, err
		}
		t, err := parseTaskUse(sched, status)
		if err != nil {
			return cpuUse{}, fmt.Errorf("%s/%s: %w", dir, task.Name(), err)
		}
		u.cpu += t.cpu
		u.switches += t.switches
	}
	return u, nil
}

// parseTaskUse reads one thread's schedstat line (its first field is the
// time on a CPU in ns) and the context-switch lines of its status file.
func parseTaskUse(schedstat, status []byte) (cpuUse, error) {
	f := strings.Fields(string(schedstat))
	if len(f) == 0 {
		return cpuUse{}, errors.New("empty schedstat")
	}
	ns, err := strconv.ParseInt(f[0], 10, 64)
	if err != nil {
		return cpuUse{}, fmt.Errorf("schedstat: %w", err)
	}
	u := cpuUse{cpu: time.Duration(ns)}
	seen := 0
	for line := range strings.Lines(string(status)) {
		name, v, ok := strings.Cut(line, ":")
		if !ok || (name != "voluntary_ctxt_switches" && name != "nonvoluntary_ctxt_switches") {
			continue
		}
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil {
			return cpuUse{}, fmt.Errorf("%s: %w", name, err)
		}
		u.switches += n
		seen++
	}
	if seen != 2 {
		return cpuUse{}, errors.New("status lacks the context-switch counts")
	}
	return u, nil
}

// tuiProject is a project whose model is the fake Anthropic server; the
// TUI asks it nothing until a message is sent.
func tuiProject(b *testing.B) (project, []string) {
	srv := testkit.NewAnthropic(b, func(testkit.Request) testkit.Reply {
		return testkit.Reply{Text: "hello", Usage: usage()}
	})
	return newProject(b, "ANTHROPIC_BASE_URL="+srv.URL), []string{"--model", "claude-sonnet-5-5"}
}

// BenchmarkTUIStartup is the time from exec to the TUI's first interactive
// screen (the input line drawn), then a quit with Ctrl+C twice.
func BenchmarkTUIStartup(b *testing.B) {
	p, args := tuiProject(b)
	var total, worst time.Duration
	n := 0
	for b.Loop() {
		t := p.startTUI(b, args...)
		d := t.waitReady(b)
		t.quit(b)
		total += d
		worst = max(worst, d)
		n++
	}
	b.ReportMetric(float64(total.Microseconds())/1e3/float64(n), "ms-to-screen")
	b.ReportMetric(float64(worst.Microseconds())/1e3, "max-ms-to-screen")
}

// tuiIdleFor is how long BenchmarkTUIIdle leaves the TUI alone.
const tuiIdleFor = 3 * time.Second

// BenchmarkTUIIdle is what the TUI costs while nobody types and nothing
// runs, over tuiIdleFor after its first screen: the CPU time of all its
// threads and their context switches (wake-ups), per second.
func BenchmarkTUIIdle(b *testing.B) {
	p, args := tuiProject(b)
	var idle, startup cpuUse
	n := 0
	for b.Loop() {
		t := p.startTUI(b, args...)
		t.waitReady(b)
		pid := t.cmd.Process.Pid
		before, err := readCPUUse(pid)
		if err != nil {
			t.kill()
			b.Fatal(err)
		}
		// Idling is what is measured: there is nothing to wait for.
		time.Sleep(tuiIdleFor)
		after, err := readCPUUse(pid)
		if err != nil {
			t.kill()
			b.Fatal(err)
		}
		t.quit(b)
		idle.cpu += after.cpu - before.cpu
		idle.switches += after.switches - before.switches
		startup.cpu += before.cpu
		n++
	}
	secs := tuiIdleFor.Seconds() * float64(n)
	b.ReportMetric(float64(idle.cpu.Microseconds())/1e3/secs, "idle-CPU-ms/s")
	b.ReportMetric(float64(idle.switches)/secs, "idle-wakeups/s")
	b.ReportMetric(float64(startup.cpu.Microseconds())/1e3/float64(n), "CPU-ms-to-screen")
}

func TestParseTaskUse(t *testing.T) {
	status := "Name:\tcadre\nvoluntary_ctxt_switches:\t12\nnonvoluntary_ctxt_switches:\t3\n"
	for _, c := range []struct {
		sched, status string
		want          cpuUse
		err           bool
	}{
		{"2500000 100 7\n", status, cpuUse{cpu: 2500 * time.Microsecond, switches: 15}, false},
		{"", status, cpuUse{}, true},
		{"x 1 2\n", status, cpuUse{}, true},
		{"1 1 1\n", "Name:\tcadre\nvoluntary_ctxt_switches:\t12\n", cpuUse{}, true},
	} {
		got, err := parseTaskUse([]byte(c.sched), []byte(c.status))
		if (err != nil) != c.err || got != c.want {
			t.Errorf("parseTaskUse(%q, …) = %+v, %v; want %+v (error %v)", c.sched, got, err, c.want, c.err)
		}
	}
}

// openPTY opens a pseudo-terminal pair of the given size: the master for
// this process, the slave for the program.
func openPTY(cols, rows int) (master, slave *os.File, err error) {
	master, err = os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, nil, err
	}
	fail := func(err error) (*os.File, *os.File, error) {
		master.Close()
		return nil, nil, err
	}
	fd := int(master.Fd())
	if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0); err != nil {
		return fail(fmt.Errorf("unlockpt: %w", err))
	}
	n, err := unix.IoctlGetInt(fd, unix.TIOCGPTN)
	if err != nil {
		return fail(fmt.Errorf("ptsname: %w", err))
	}
	slave, err = os.OpenFile("/dev/pts/"+strconv.Itoa(n), os.O_RDWR|syscall.O_NOCTTY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return fail(err)
	}
	if err := unix.IoctlSetWinsize(int(slave.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Row: uint16(rows), Col: uint16(cols)}); err != nil {
		slave.Close()
		return fail(fmt.Errorf("set the window size: %w", err))
	}
	return master, slave, nil
}
