package npm

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// Modules returns the absolute path of testdata/npm/node_modules, after
// checking that Node and every named package are there.
func Modules(t testing.TB, packages ...string) string {
	t.Helper()
	root, err := repoRoot()
	if err != nil {
		t.Fatalf("npm: %v", err)
	}
	dir := filepath.Join(root, "testdata", "npm")
	modules := filepath.Join(dir, "node_modules")
	if _, err := exec.LookPath("node"); err != nil {
		missing(t, "node is not on PATH (install Node.js 20 or newer)")
	}
	for _, p := range packages {
		if _, err := os.Stat(filepath.Join(modules, p, "package.json")); err != nil {
			missing(t, "npm package "+p+" is not installed: run `npm ci --prefix "+dir+"`")
		}
	}
	return modules
}

// Bin returns the path of an installed package's executable (node_modules/.bin/name).
func Bin(t testing.TB, name string, packages ...string) string {
	t.Helper()
	bin := filepath.Join(Modules(t, packages...), ".bin", name)
	if _, err := os.Stat(bin); err != nil {
		missing(t, "npm executable "+name+" is missing from "+filepath.Dir(bin))
	}
	return bin
}

func missing(t testing.TB, why string) {
	t.Helper()
	if os.Getenv("CI") != "" {
		t.Fatalf("npm: %s — CI must install it (.ci/run)", why)
	}
	t.Skipf("SKIPPED, NOT TESTED: %s", why)
}

// repoRoot is the folder of the go.mod above the working directory.
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory")
		}
		dir = parent
	}
}
