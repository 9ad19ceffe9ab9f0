package tmux

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// wait bounds every wait in these tests; they end as soon as the screen
// shows what they wait for.
const wait = 10 * time.Second

func TestTypedTextReachesTheProgramAndItsOutputTheScreen(t *testing.T) {
	s := Start(t, Options{}, "cat")
	s.Type("hello; world")
	s.SendKeys("Enter")
	// The terminal echoes the line, then cat writes it back: twice.
	s.WaitUntil("the line echoed and written back", wait, func(screen string) bool {
		return strings.Count(screen, "hello; world") == 2
	})
}

func TestSizeDirAndEnvironment(t *testing.T) {
	dir := t.TempDir()
	s := Start(t, Options{Width: 100, Height: 30, Dir: dir, Env: []string{"PATH=" + os.Getenv("PATH"), "GREETING=bonjour", "TMUX=/elsewhere,1,0"}},
		"sh", "-c", `printf 'cwd=%s\n' "$(pwd)"; printf 'greeting=%s tmux=%s term=%s\n' "$GREETING" "$TMUX" "$TERM"; printf 'size=%s\n' "$(stty size)"; exec cat`)
	screen := s.WaitFor("size=", wait)
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"cwd=" + real,
		"greeting=bonjour",
		// tmux sets TMUX for its own pane; the caller's TMUX is dropped
		// so that tmux does not think it is nested.
		"term=tmux-256color",
		"size=30 100",
	} {
		if !strings.Contains(screen, want) {
			t.Errorf("screen lacks %q:\n%s", want, screen)
		}
	}
	if strings.Contains(screen, "/elsewhere") {
		t.Errorf("the caller's TMUX leaked into the program:\n%s", screen)
	}
	rows := strings.Split(strings.TrimRight(screen, "\n"), "\n")
	if len(rows) > 30 {
		t.Errorf("capture has %d rows, want at most 30", len(rows))
	}
}

func TestTheWholeWidthIsThePane(t *testing.T) {
	s := Start(t, Options{}, "sh", "-c", `i=0; while [ $i -lt 140 ]; do printf x; i=$((i+1)); done; printf '\nend\n'; exec cat`)
	screen := s.WaitFor("end", wait)
	if !strings.Contains(screen, strings.Repeat("x", 140)+"\n") {
		t.Errorf("a 140-character line does not fit one row:\n%s", screen)
	}
}

func TestNamedKeys(t *testing.T) {
	s := Start(t, Options{}, "cat")
	s.Type("abcX")
	s.SendKeys("BSpace", "Enter")
	s.WaitUntil("the line without the erased X", wait, func(screen string) bool {
		return strings.Count(screen, "abc") == 2 && !strings.Contains(screen, "X")
	})
	s.SendKeys("C-c")
	if status := s.WaitExit(wait); status != 130 {
		t.Errorf("cat interrupted by C-c: status %d, want 130 (killed by SIGINT)", status)
	}
}

func TestExitStatusAndTheLastScreenRemain(t *testing.T) {
	s := Start(t, Options{}, "sh", "-c", "echo last words; exit 3")
	if status := s.WaitExit(wait); status != 3 {
		t.Errorf("exit status %d, want 3", status)
	}
	if screen := s.Capture(); !strings.Contains(screen, "last words") {
		t.Errorf("the last screen is gone:\n%s", screen)
	}
}

func TestStyledCaptureKeepsColours(t *testing.T) {
	s := Start(t, Options{}, "sh", "-c", `printf '\033[31mred\033[0m\n'; exec cat`)
	s.WaitFor("red", wait)
	if plain := s.Capture(); strings.Contains(plain, "\033[") {
		t.Errorf("plain capture has escapes: %q", plain)
	}
	if styled := s.CaptureStyled(); !strings.Contains(styled, "\033[31mred") {
		t.Errorf("styled capture lacks the colour: %q", styled)
	}
}

func TestWaitFailures(t *testing.T) {
	t.Run("timeout prints the last screen", func(t *testing.T) {
		s := Start(t, Options{}, "sh", "-c", "echo on screen; exec cat")
		s.WaitFor("on screen", wait)
		start := time.Now()
		_, err := s.waitUntil(`"never"`, 200*time.Millisecond, func(screen string) bool { return strings.Contains(screen, "never") })
		if err == nil {
			t.Fatal("waiting for text that never comes succeeded")
		}
		if time.Since(start) < 200*time.Millisecond {
			t.Errorf("gave up after %v, before the deadline", time.Since(start))
		}
		for _, want := range []string{`"never"`, "not there after 200ms", "│on screen"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("error lacks %q:\n%v", want, err)
			}
		}
	})
	t.Run("an exited program fails at once", func(t *testing.T) {
		// The program exits only once its line is on screen: tmux can
		// mark a pane dead before it has drawn the output of a program
		// that exits at once, which left this test's screen empty.
		s := Start(t, Options{}, "sh", "-c", "echo bye; read line; exit 7")
		s.WaitFor("bye", wait)
		s.SendKeys("Enter")
		s.WaitExit(wait)
		start := time.Now()
		_, err := s.waitUntil(`"never"`, time.Hour, func(screen string) bool { return strings.Contains(screen, "never") })
		if err == nil || !strings.Contains(err.Error(), "exited (status 7)") || !strings.Contains(err.Error(), "│bye") {
			t.Fatalf("err = %v, want one saying the program exited with 7, with its screen", err)
		}
		if time.Since(start) > wait {
			t.Errorf("took %v to notice", time.Since(start))
		}
	})
}

func TestTheEndOfTheTestKillsTheProgram(t *testing.T) {
	var pid int
	var socketPath string
	t.Run("inner", func(t *testing.T) {
		s := Start(t, Options{}, "cat")
		pid = s.PID()
		socketPath = s.socketPath
		if !alive(pid) {
			t.Fatalf("cat (pid %d) is not running", pid)
		}
	})
	if alive(pid) {
		t.Errorf("cat (pid %d) outlived its test", pid)
	}
	if socketPath != "" {
		if _, err := os.Stat(socketPath); err == nil {
			t.Errorf("the server's socket %s outlived its test", socketPath)
		}
	}
}

func TestEachSessionHasItsOwnServer(t *testing.T) {
	a := Start(t, Options{}, "sh", "-c", "echo AAA; exec cat")
	b := Start(t, Options{}, "sh", "-c", "echo BBB; exec cat")
	if a.socket == b.socket {
		t.Fatalf("two sessions share the socket %q", a.socket)
	}
	a.WaitFor("AAA", wait)
	if screen := b.WaitFor("BBB", wait); strings.Contains(screen, "AAA") {
		t.Errorf("b shows a's screen:\n%s", screen)
	}
}

func TestStartRejectsNoCommand(t *testing.T) {
	ft := &fatalRecorder{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		Start(ft, Options{})
	}()
	<-done
	if !strings.Contains(ft.msg, "no command") {
		t.Errorf("Start with no command: %q, want a failure saying so", ft.msg)
	}
}

// fatalRecorder records a Fatal and ends the goroutine that called it, as
// testing.T does, without failing the real test.
type fatalRecorder struct {
	testing.TB
	msg string
}

func (f *fatalRecorder) Helper() {}
func (f *fatalRecorder) Fatal(args ...any) {
	f.msg = fmt.Sprint(args...)
	runtime.Goexit()
}
