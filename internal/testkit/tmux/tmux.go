package tmux

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Default size of a Session's terminal: the size the TUI's acceptance
// tests are specified for.
const (
	DefaultWidth  = 140
	DefaultHeight = 45
)

// pollInterval is how often WaitFor reads the screen. Short, so a test
// notices a change soon after it is drawn; each poll is one tmux exec.
const pollInterval = 20 * time.Millisecond

// Options says how to start the program.
type Options struct {
	// Width and Height of the terminal in cells; 0 means DefaultWidth and
	// DefaultHeight.
	Width, Height int
	// Dir is the program's working directory; empty means the test's.
	Dir string
	// Env is the program's whole environment ("KEY=value"); nil means the
	// test's own. TMUX and TMUX_PANE are always left out, and tmux adds
	// TERM (tmux-256color) as a terminal would.
	Env []string
}

// Session is one program running in its own detached tmux server.
type Session struct {
	t      testing.TB
	tmux   string // the tmux executable
	socket string // the -L name, unique to this session
	// socketPath is the socket file, which tmux leaves behind when its
	// server is killed.
	socketPath string
	env        []string
	target     string
	height     int
	// statusFile receives the program's exit status from the wrapper.
	statusFile string
}

// wrapper runs the program as the pane's child and records its exit status
// (tmux may also mark a pane dead before it has drawn the last output of a
// program that exits within microseconds of writing it; a test that reads
// such a screen lets the program wait for a key before it exits)
// in a file: tmux 3.3 loses a pane's exit status when the terminal's end
// reaches it before the process's (#{pane_dead_status} stays empty). The
// shell catches the signals of the terminal's keys (Ctrl+C, Ctrl+\) so
// that it outlives the program and records how it ended; the program,
// started afresh, gets the default handlers. A hang-up (the server killed)
// ends the shell, and the kernel passes it on to the program, as when a
// terminal window closes.
const wrapper = `status_file=$1; shift
trap : INT QUIT
"$@"
status=$?
printf '%d\n' "$status" >"$status_file.tmp" && mv "$status_file.tmp" "$status_file"
exit "$status"`

// Start starts argv in a new detached tmux session and registers a cleanup
// that kills the session's server (and so the program) when the test ends.
// It fails the test if the session does not come up at the asked size.
func Start(t testing.TB, opts Options, argv ...string) *Session {
	t.Helper()
	if len(argv) == 0 {
		t.Fatal("tmux.Start: no command given")
	}
	path := Require(t)
	if opts.Width == 0 {
		opts.Width = DefaultWidth
	}
	if opts.Height == 0 {
		opts.Height = DefaultHeight
	}
	if opts.Width < 0 || opts.Height < 0 {
		t.Fatalf("tmux.Start: size %dx%d is negative", opts.Width, opts.Height)
	}
	env := opts.Env
	if env == nil {
		env = os.Environ()
	}
	dir := t.TempDir()
	s := &Session{t: t, tmux: path, socket: uniqueSocket(), env: withoutTmux(env), target: "main",
		height: opts.Height, statusFile: filepath.Join(dir, "status")}

	// The configuration is read as the server starts, so it holds from
	// the first moment: the pane stays after the program exits, so that
	// its last screen can be read (remain-on-exit), and it has the whole
	// window (no status line).
	conf := filepath.Join(dir, "tmux.conf")
	const settings = "set -g remain-on-exit on\n" +
		"set -g status off\n" +
		"set -g default-terminal tmux-256color\n" +
		"set -g history-limit 10000\n"
	if err := os.WriteFile(conf, []byte(settings), 0o600); err != nil {
		t.Fatalf("tmux.Start: %v", err)
	}
	args := []string{"-f", conf, "new-session", "-d", "-s", s.target,
		"-x", strconv.Itoa(opts.Width), "-y", strconv.Itoa(opts.Height)}
	if opts.Dir != "" {
		args = append(args, "-c", opts.Dir)
	}
	args = append(args, "--", "/bin/sh", "-c", wrapper, "tmux-wrapper", s.statusFile)
	args = append(args, argv...)
	if _, err := s.run(args...); err != nil {
		t.Fatalf("tmux.Start %q: %v", argv, err)
	}
	t.Cleanup(s.kill)

	info, err := s.display("#{pane_width}x#{pane_height} #{socket_path}")
	if err != nil {
		t.Fatalf("tmux.Start %q: %v", argv, err)
	}
	size, socketPath, _ := strings.Cut(info, " ")
	s.socketPath = socketPath
	if want := fmt.Sprintf("%dx%d", opts.Width, opts.Height); size != want {
		t.Fatalf("tmux.Start %q: the pane is %s, want %s", argv, size, want)
	}
	return s
}

// Require returns the path of the tmux executable. When tmux is missing it
// fails the test under CI and skips it, loudly, elsewhere.
func Require(t testing.TB) string {
	t.Helper()
	path, err := exec.LookPath("tmux")
	if err != nil {
		why := "tmux is not on PATH (Debian: apt-get install tmux)"
		if os.Getenv("CI") != "" {
			t.Fatalf("tmux: %s — CI must install it (.ci/run)", why)
		}
		t.Skipf("SKIPPED, NOT TESTED: %s", why)
	}
	return path
}

// Type sends text as typed, character by character, with no key names
// interpreted ("Enter" is five letters, not a key).
func (s *Session) Type(text string) {
	s.t.Helper()
	// tmux reads an argument ending in ';' as a command separator, so
	// semicolons go as hex key codes and the rest as literal text.
	for i, part := range strings.Split(text, ";") {
		if i > 0 {
			s.send("-H", "3b")
		}
		if part != "" {
			s.send("-l", "--", part)
		}
	}
}

// SendKeys sends named keys in tmux's spelling: "Enter", "Escape", "Tab",
// "BSpace", "Up", "C-b", "C-c", "M-Enter", "F1", or a single character.
func (s *Session) SendKeys(keys ...string) {
	s.t.Helper()
	for _, k := range keys {
		if k == "" || strings.HasSuffix(k, ";") {
			s.t.Fatalf("tmux.SendKeys: %q is not a key name (use Type for text)", k)
		}
	}
	s.send(append([]string{"--"}, keys...)...)
}

// Wheel turns the mouse wheel one notch, up or down, over column x and
// row y (from 0), as a terminal reports it to a program that asked for
// the mouse in SGR mode: the bytes go to the program as one write.
func (s *Session) Wheel(up bool, x, y int) {
	s.t.Helper()
	button := 65
	if up {
		button = 64
	}
	seq := fmt.Sprintf("\x1b[<%d;%d;%dM", button, x+1, y+1)
	args := []string{"-H"}
	for _, b := range []byte(seq) {
		args = append(args, fmt.Sprintf("%02x", b))
	}
	s.send(args...)
}

func (s *Session) send(args ...string) {
	s.t.Helper()
	if _, err := s.run(append([]string{"send-keys", "-t", s.target}, args...)...); err != nil {
		s.t.Fatalf("tmux send-keys %q: %v", args, err)
	}
}

// Capture returns the screen as plain text: one line per row, trailing
// blanks trimmed, no colours or attributes.
func (s *Session) Capture() string {
	s.t.Helper()
	return s.capture(false)
}

// CaptureStyled returns the screen with its colours and attributes as
// escape sequences (capture-pane -e).
func (s *Session) CaptureStyled() string {
	s.t.Helper()
	return s.capture(true)
}

func (s *Session) capture(styled bool) string {
	s.t.Helper()
	sn, err := s.snapshot(styled)
	if err != nil {
		s.t.Fatalf("tmux capture-pane (styled %v): %v", styled, err)
	}
	return sn.screen
}

// snap is the screen and whether the program has exited, read together.
type snap struct {
	screen string
	exited bool
	// status is the exit status once exited, 128+N when signal N killed
	// the program (as a shell reports it), -1 when it is unknown.
	status int
}

// snapshot reads the screen and whether the program has exited. tmux marks
// the pane dead when it has read the terminal's last output, after the
// wrapper recorded the status, so a dead pane's screen is the program's
// last.
func (s *Session) snapshot(styled bool) (snap, error) {
	args := []string{"display-message", "-p", "-t", s.target, "#{pane_dead}", ";", "capture-pane", "-p", "-t", s.target}
	if styled {
		args = append(args, "-e")
	}
	out, err := s.run(args...)
	if err != nil {
		return snap{}, err
	}
	dead, screen, _ := strings.Cut(out, "\n")
	if dead != "1" {
		return snap{screen: screen}, nil
	}
	sn := snap{exited: true, status: -1}
	if b, err := os.ReadFile(s.statusFile); err == nil {
		if n, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
			sn.status = n
		}
	}
	// When tmux gets the exit it scrolls the screen up one row to write
	// "Pane is dead (…)" below (remain-on-exit). The last screen is the
	// program's rows without that line, read back into the history so
	// that its top row, often an error message, is in it.
	args = []string{"capture-pane", "-p", "-t", s.target, "-S", "-"}
	if styled {
		args = append(args, "-e")
	}
	all, err := s.run(args...)
	if err != nil {
		return snap{}, err
	}
	rows := strings.Split(strings.TrimSuffix(all, "\n"), "\n")
	if n := len(rows); n > 0 && strings.HasPrefix(rows[n-1], "Pane is dead (") {
		rows = rows[:n-1]
	}
	if len(rows) > s.height {
		rows = rows[len(rows)-s.height:]
	}
	sn.screen = strings.Join(rows, "\n") + "\n"
	return sn, nil
}

// WaitFor waits until the screen shows text and returns that screen. When
// d runs out first, or the program exits without having drawn it, it fails
// the test and prints the last screen.
func (s *Session) WaitFor(text string, d time.Duration) string {
	s.t.Helper()
	return s.WaitUntil(fmt.Sprintf("the screen to show %q", text), d, func(screen string) bool {
		return strings.Contains(screen, text)
	})
}

// WaitUntil waits until ok accepts the screen and returns that screen; what
// names the awaited state in the failure, which prints the last screen.
func (s *Session) WaitUntil(what string, d time.Duration, ok func(screen string) bool) string {
	s.t.Helper()
	screen, err := s.waitUntil(what, d, ok)
	if err != nil {
		s.t.Fatal(err)
	}
	return screen
}

// waitUntil polls the screen until ok accepts it, d runs out or the
// program has exited without ok accepting its last screen.
func (s *Session) waitUntil(what string, d time.Duration, ok func(screen string) bool) (string, error) {
	deadline := time.Now().Add(d)
	tick := time.NewTicker(pollInterval)
	defer tick.Stop()
	for {
		sn, err := s.snapshot(false)
		if err != nil {
			return "", fmt.Errorf("waiting for %s: %w", what, err)
		}
		if ok(sn.screen) {
			return sn.screen, nil
		}
		if sn.exited {
			return sn.screen, fmt.Errorf("waiting for %s: the program exited (status %d) first; its last screen:\n%s", what, sn.status, frame(sn.screen))
		}
		if time.Now().After(deadline) {
			return sn.screen, fmt.Errorf("waiting for %s: not there after %v; the last screen:\n%s", what, d, frame(sn.screen))
		}
		<-tick.C
	}
}

// WaitExit waits until the program has exited and returns its exit status
// (128+N when signal N killed it), failing the test, with the last screen,
// when d runs out first.
func (s *Session) WaitExit(d time.Duration) int {
	s.t.Helper()
	deadline := time.Now().Add(d)
	tick := time.NewTicker(pollInterval)
	defer tick.Stop()
	for {
		sn, err := s.snapshot(false)
		if err != nil {
			s.t.Fatalf("tmux: %v", err)
		}
		if sn.exited {
			return sn.status
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("the program did not exit within %v; the last screen:\n%s", d, frame(sn.screen))
		}
		<-tick.C
	}
}

// PID returns the program's process id. It fails the test when the program
// has exited.
func (s *Session) PID() int {
	s.t.Helper()
	// The program is the wrapper's only child, which the wrapper may
	// not have started yet.
	deadline := time.Now().Add(10 * time.Second)
	for {
		pids, err := s.pids()
		if err != nil {
			s.t.Fatalf("tmux: %v", err)
		}
		if len(pids) > 1 {
			return pids[1]
		}
		if len(pids) == 0 {
			s.t.Fatal("tmux: the program has exited; it has no process id")
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("tmux: the wrapper (pid %d) started no program within 10s", pids[0])
		}
		time.Sleep(pollInterval)
	}
}

// pids returns the wrapper's process id and its children's, or nothing
// once the pane is dead.
func (s *Session) pids() ([]int, error) {
	out, err := s.display("#{pane_dead} #{pane_pid}")
	if err != nil {
		return nil, err
	}
	dead, pidText, _ := strings.Cut(out, " ")
	if dead != "0" {
		return nil, nil
	}
	pid, err := strconv.Atoi(pidText)
	if err != nil {
		return nil, fmt.Errorf("pane_pid %q: %w", pidText, err)
	}
	pids := []int{pid}
	children, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", pid, pid))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	for _, f := range strings.Fields(string(children)) {
		if n, err := strconv.Atoi(f); err == nil {
			pids = append(pids, n)
		}
	}
	return pids, nil
}

func (s *Session) display(format string) (string, error) {
	out, err := s.run("display-message", "-p", "-t", s.target, format)
	return strings.TrimSpace(out), err
}

// kill ends the server and makes sure the program went with it: its
// terminal closes, so it gets SIGHUP, and one that ignores that is killed
// after a grace period, so no test leaves a process behind.
func (s *Session) kill() {
	pids, _ := s.pids()
	if s.t.Failed() {
		if sn, err := s.snapshot(false); err == nil {
			s.t.Logf("tmux: the screen at the end of the failed test:\n%s", frame(sn.screen))
		}
	}
	_, _ = s.run("kill-server") // a server that already ended is the goal
	if s.socketPath != "" {
		os.Remove(s.socketPath)
	}
	deadline := time.Now().Add(5 * time.Second)
	for _, pid := range pids {
		for alive(pid) {
			if time.Now().After(deadline) {
				_ = syscall.Kill(pid, syscall.SIGKILL) // the error below says what matters
				s.t.Errorf("tmux: process %d ignored SIGHUP for 5s after its terminal closed and was killed", pid)
				break
			}
			time.Sleep(pollInterval)
		}
	}
}

// alive reports whether pid is a process that has not yet exited (a
// zombie has exited; only its parent, the dead tmux server, could reap it).
func alive(pid int) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return false
		}
		// No /proc (not Linux): ask the kernel instead.
		return syscall.Kill(pid, 0) == nil
	}
	// The state follows the command name, which is in parentheses and
	// may itself hold spaces or parentheses.
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 || i+2 >= len(stat) {
		return true
	}
	return stat[i+2] != 'Z' && stat[i+2] != 'X'
}

// run runs one tmux command against this session's server.
func (s *Session) run(args ...string) (string, error) {
	cmd := exec.Command(s.tmux, append([]string{"-L", s.socket}, args...)...)
	cmd.Env = s.env
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("tmux %s: %w: %s", args[0], err, strings.TrimSpace(errb.String()))
	}
	return out.String(), nil
}

// uniqueSocket names a server socket no other test, process or user
// session uses.
func uniqueSocket() string {
	b := make([]byte, 6)
	rand.Read(b)
	return fmt.Sprintf("cadre-test-%d-%s", os.Getpid(), hex.EncodeToString(b))
}

// withoutTmux drops the variables that would tell tmux it runs inside
// another tmux session.
func withoutTmux(env []string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		if strings.HasPrefix(kv, "TMUX=") || strings.HasPrefix(kv, "TMUX_PANE=") {
			continue
		}
		out = append(out, kv)
	}
	return out
}

// frame draws a border around a screen so that its blank lines and edges
// show in a test log.
func frame(screen string) string {
	lines := strings.Split(strings.TrimRight(screen, "\n"), "\n")
	var b strings.Builder
	b.WriteString("┌────\n")
	for _, l := range lines {
		b.WriteString("│")
		b.WriteString(l)
		b.WriteString("\n")
	}
	b.WriteString("└────")
	return b.String()
}
