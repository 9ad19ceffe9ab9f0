package sandbox_test

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cadre-dev/cadre/internal/sandbox"
	"github.com/cadre-dev/cadre/internal/sandbox/sandboxtest"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// launcher is this test binary: it links the package, so its init serves
// as the launcher.
func launcher(t testing.TB) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	sandboxtest.Require(t, exe)
	return exe
}

// run runs script under sh inside p, from dir.
func run(t testing.TB, p sandbox.Policy, dir, script string) (string, error) {
	t.Helper()
	cmd := exec.Command("/bin/sh", "-c", script)
	cmd.Dir = dir
	if err := sandbox.Wrap(cmd, p, launcher(t)); err != nil {
		t.Fatal(err)
	}
	out, err := cmd.CombinedOutput()
	return string(out), err
}

type fixture struct {
	ws, outside, home string
	p                 sandbox.Policy
}

func newFixture(t *testing.T) fixture {
	t.Helper()
	root := t.TempDir()
	f := fixture{ws: filepath.Join(root, "ws"), outside: filepath.Join(root, "outside"), home: filepath.Join(root, "home")}
	for _, d := range []string{f.ws, filepath.Join(f.ws, ".git", "hooks"), filepath.Join(f.ws, ".cadre"), f.outside, filepath.Join(f.home, ".ssh")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for name, content := range map[string]string{
		filepath.Join(f.ws, ".git", "config"):   "[core]\n",
		filepath.Join(f.home, ".ssh", "id_rsa"): "SECRET KEY\n",
		filepath.Join(f.outside, "keep"):        "keep\n",
		filepath.Join(f.home, ".netrc"):         "SECRET NETRC\n",
	} {
		if err := os.WriteFile(name, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	f.p = sandbox.Policy{
		Writable: []string{f.ws},
		ReadOnly: []string{filepath.Join(f.ws, ".git"), filepath.Join(f.ws, ".cadre")},
		ReadDeny: []string{filepath.Join(f.home, ".ssh"), filepath.Join(f.home, ".netrc")},
	}
	return f
}

// The walls hold for root too: CAP_DAC_OVERRIDE does not pass Landlock or
// a read-only mount (these tests run as root on CI).
func TestWalls(t *testing.T) {
	f := newFixture(t)
	tests := []struct {
		name, script string
		wantFail     bool
		check        func(t *testing.T)
	}{
		{"write inside", "echo y > inside && mkdir -p sub/deeper && echo z > sub/deeper/f && mv sub/deeper/f moved", false, func(t *testing.T) {
			mustContent(t, filepath.Join(f.ws, "inside"), "y\n")
			mustContent(t, filepath.Join(f.ws, "moved"), "z\n")
		}},
		{"write outside", "echo x > " + filepath.Join(f.outside, "escape"), true, func(t *testing.T) {
			mustNotExist(t, filepath.Join(f.outside, "escape"))
		}},
		{"delete outside", "rm -f " + filepath.Join(f.outside, "keep"), true, func(t *testing.T) {
			mustContent(t, filepath.Join(f.outside, "keep"), "keep\n")
		}},
		{"git config", "echo '[core] fsmonitor = evil' >> .git/config", true, func(t *testing.T) {
			mustContent(t, filepath.Join(f.ws, ".git", "config"), "[core]\n")
		}},
		{"git hook", "echo 'echo pwned' > .git/hooks/pre-commit", true, func(t *testing.T) {
			mustNotExist(t, filepath.Join(f.ws, ".git", "hooks", "pre-commit"))
		}},
		{"move into git", "echo evil > evil && mv evil .git/hooks/post-checkout", true, func(t *testing.T) {
			mustNotExist(t, filepath.Join(f.ws, ".git", "hooks", "post-checkout"))
		}},
		{"remove git config", "rm -f .git/config", true, func(t *testing.T) {
			mustContent(t, filepath.Join(f.ws, ".git", "config"), "[core]\n")
		}},
		{"cadre settings", "echo '{}' > .cadre/settings.json", true, func(t *testing.T) {
			mustNotExist(t, filepath.Join(f.ws, ".cadre", "settings.json"))
		}},
		{"read denied dir", "cat " + filepath.Join(f.home, ".ssh", "id_rsa"), true, nil},
		{"read denied file", "cat " + filepath.Join(f.home, ".netrc") + "; test -s " + filepath.Join(f.home, ".netrc"), true, nil},
		{"read elsewhere", "cat " + filepath.Join(f.outside, "keep"), false, nil},
		{"mknod", "mknod disk b 8 0", true, func(t *testing.T) { mustNotExist(t, filepath.Join(f.ws, "disk")) }},
		{"mknod in /dev/shm", "mknod /dev/shm/cadre-test-disk b 8 0", true, func(t *testing.T) { mustNotExist(t, "/dev/shm/cadre-test-disk") }},
		{"devices", "echo x > /dev/null && head -c1 /dev/urandom > /dev/null", false, nil},
		{"signal outside", fmt.Sprintf("kill -0 %d", os.Getpid()), true, nil},
		{"umount the wall", "umount " + filepath.Join(f.ws, ".git") + " && echo '[x]' > .git/config", true, func(t *testing.T) {
			mustContent(t, filepath.Join(f.ws, ".git", "config"), "[core]\n")
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := run(t, f.p, f.ws, tt.script)
			if tt.wantFail && err == nil {
				t.Fatalf("%q succeeded inside the sandbox:\n%s", tt.script, out)
			}
			if !tt.wantFail && err != nil {
				t.Fatalf("%q failed inside the sandbox: %v\n%s", tt.script, err, out)
			}
			if strings.Contains(out, "SECRET") {
				t.Fatalf("a denied path was read:\n%s", out)
			}
			if strings.Contains(out, sandbox.LaunchPrefix) {
				t.Fatalf("the launcher failed:\n%s", out)
			}
			if tt.check != nil {
				tt.check(t)
			}
		})
	}
	// Nothing the launcher mounted leaked into this namespace.
	mustContent(t, filepath.Join(f.home, ".ssh", "id_rsa"), "SECRET KEY\n")
}

// A worktree child's checkout lies under the workspace's .git: it is
// writable again, its own .git file is not.
func TestWritableInsideReadOnly(t *testing.T) {
	f := newFixture(t)
	wt := filepath.Join(f.ws, ".git", "cadre-worktrees", "child")
	if err := os.MkdirAll(wt, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(wt, ".git"), []byte("gitdir: x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p := f.p
	p.Writable = append(p.Writable, wt)
	p.ReadOnly = append(p.ReadOnly, filepath.Join(wt, ".git"))
	if out, err := run(t, p, wt, "echo ok > file"); err != nil {
		t.Fatalf("the child's checkout is not writable: %v\n%s", err, out)
	}
	mustContent(t, filepath.Join(wt, "file"), "ok\n")
	if out, err := run(t, p, wt, "echo 'gitdir: /evil' > .git"); err == nil {
		t.Fatalf("the checkout's .git file was writable:\n%s", out)
	}
	if out, err := run(t, p, wt, "echo x > ../../config"); err == nil {
		t.Fatalf("the workspace's .git was writable from the child:\n%s", out)
	}
	mustContent(t, filepath.Join(f.ws, ".git", "config"), "[core]\n")
}

func TestNetworkDeny(t *testing.T) {
	f := newFixture(t)
	port, accepted := sandboxtest.Listen(t)
	script := fmt.Sprintf("exec 3<>/dev/tcp/127.0.0.1/%d && echo connected", port)
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("SKIPPED, NOT TESTED: bash (for /dev/tcp) is missing")
	}
	connect := func(p sandbox.Policy) (string, error) {
		cmd := exec.Command(bash, "-c", script)
		cmd.Dir = f.ws
		if err := sandbox.Wrap(cmd, p, launcher(t)); err != nil {
			t.Fatal(err)
		}
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if out, err := connect(f.p); err != nil {
		t.Fatalf("network allow: cannot connect: %v\n%s", err, out)
	}
	<-accepted
	deny := f.p
	deny.Network = sandbox.NetworkDeny
	out, err := connect(deny)
	if err == nil || strings.Contains(out, "connected") {
		t.Fatalf("network deny: connected:\n%s", out)
	}
	if got := deny.Explain(out, f.ws); len(got) == 0 || !strings.Contains(got[0], "network") {
		t.Errorf("Explain(%q) = %q, want a network refusal", out, got)
	}
	select {
	case <-accepted:
		t.Fatal("the listener saw a connection under network deny")
	default:
	}
}

func TestLauncherErrors(t *testing.T) {
	exe := launcher(t)
	cmd := exec.Command(exe, sandbox.LauncherArg, "{", "--", "/bin/true")
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 126 || !strings.HasPrefix(string(out), sandbox.LaunchPrefix+"bad policy") {
		t.Fatalf("a bad policy: %v %q", err, out)
	}
	// A launcher from another release refuses a policy of another version
	// before it runs anything: the command would otherwise run inside
	// walls nobody asked for.
	marker := filepath.Join(t.TempDir(), "ran")
	cmd = exec.Command(exe, sandbox.LauncherArg, `{"v":2,"writable":["/tmp"],"path":"/bin/touch"}`, "--", "touch", marker)
	out, err = cmd.CombinedOutput()
	if !errors.As(err, &ee) || ee.ExitCode() != 126 || !strings.Contains(string(out), "reads policy version 1, and was handed version 2") {
		t.Fatalf("a policy of another version: %v %q", err, out)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("the launcher ran the command of a policy of another version")
	}
	cmd = exec.Command("cadre-no-such-program")
	if err := sandbox.Wrap(cmd, sandbox.Policy{Writable: []string{"/tmp"}}, exe); err == nil {
		t.Fatal("Wrap of a command that cannot be found succeeded")
	}
	if err := sandbox.Wrap(exec.Command("/bin/true"), sandbox.Policy{Writable: []string{"rel"}}, exe); err == nil {
		t.Fatal("a relative writable path was accepted")
	}
}

func mustContent(t *testing.T, path, want string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != want {
		t.Fatalf("%s = %q, want %q", path, b, want)
	}
}

func mustNotExist(t *testing.T, path string) {
	t.Helper()
	if _, err := os.Lstat(path); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("%s exists (err %v)", path, err)
	}
}
