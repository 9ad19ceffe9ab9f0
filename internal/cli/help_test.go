package cli

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// getenvCall finds a variable read by name: os.Getenv("X"),
// os.LookupEnv("X"), or a Getenv function passed in, getenv("X").
var getenvCall = regexp.MustCompile(`(?i:getenv|lookupenv)\("([A-Z][A-Z0-9_]*)"\)`)

// notUsers' are variables read for another program or only by tests: PATH
// and GIT_CONFIG_COUNT are handed on to the programs cadre starts, CI
// makes a test fail rather than skip.
var notUsers = map[string]bool{"PATH": true, "CI": true, "GIT_CONFIG_COUNT": true}

// TestHelpNamesEveryVariable: the environment section of cadre --help
// names every variable the program reads, so the list cannot fall behind
// the code.
func TestHelpNamesEveryVariable(t *testing.T) {
	root := filepath.Join("..", "..")
	found := map[string]string{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case "testkit", "sandboxtest", "bench", "testdata", "node_modules", "examples":
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range getenvCall.FindAllStringSubmatch(string(b), -1) {
			found[m[1]] = path
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(found) < 10 {
		t.Fatalf("found only %v: the search is broken", found)
	}
	for name, path := range found {
		if notUsers[name] {
			continue
		}
		if strings.HasPrefix(name, "OTEL_") && strings.Contains(environment, "OTEL_*") {
			continue
		}
		if !strings.Contains(environment, name) {
			t.Errorf("%s reads %s, which cadre --help does not list", path, name)
		}
	}
}
