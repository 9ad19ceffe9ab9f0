// Package fuzzcheck holds the properties that every fuzz target of a
// parser of outside input checks beyond "no panic": error texts quote at
// most a bounded excerpt of the input, and parsing is bounded in time.
// It also seeds targets from the string literals of a package's tests, so
// that what the unit tests already feed a parser is where fuzzing starts.
package fuzzcheck

import (
	"bytes"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// MaxEcho is the longest run of input bytes an error or warning may
// repeat. Messages quote values to say what was wrong, clipped well below
// this; a longer run means a value (or a file) is echoed whole, which
// leaks what a file holds into logs and model context.
const MaxEcho = 128

// Echo returns the first run of more than MaxEcho bytes of input that
// text repeats, or "" when there is none.
func Echo(input, text string) string {
	w := MaxEcho + 1
	if len(input) < w || len(text) < w {
		return ""
	}
	windows := make(map[string]struct{}, len(text)-w+1)
	for i := 0; i+w <= len(text); i++ {
		windows[text[i:i+w]] = struct{}{}
	}
	for i := 0; i+w <= len(input); i++ {
		if _, ok := windows[input[i:i+w]]; ok {
			return input[i : i+w]
		}
	}
	return ""
}

// NoEcho fails t when text (an error or warning, named by what) repeats
// more than MaxEcho bytes of input.
func NoEcho(t testing.TB, what, input, text string) {
	t.Helper()
	if run := Echo(input, text); run != "" {
		t.Errorf("%s repeats %d+ bytes of the input (%q…), want an excerpt of at most %d:\n%s",
			what, len(run), run[:32], MaxEcho, text)
	}
}

// Lines counts the lines of data as YAML does, the line after a final
// break included: CRLF, a lone CR, LF, NEL and the Unicode line and
// paragraph separators each end one. Problems name lines by that count.
func Lines(data []byte) int {
	n := 1
	for i := 0; i < len(data); i++ {
		switch {
		case data[i] == '\r' && i+1 < len(data) && data[i+1] == '\n':
			i++
			n++
		case data[i] == '\r' || data[i] == '\n':
			n++
		case bytes.HasPrefix(data[i:], []byte("\u0085")), bytes.HasPrefix(data[i:], []byte("\u2028")), bytes.HasPrefix(data[i:], []byte("\u2029")):
			n++
		}
	}
	return n
}

// Budget is how long one parse of a fuzz input may take. Inputs are small
// (kilobytes); a parse that needs seconds is super-linear somewhere. It
// is generous because the race detector and a busy machine slow
// everything down several times.
const Budget = 3 * time.Second

// Timed runs parse and fails t when it takes longer than Budget.
func Timed(t testing.TB, size int, parse func()) {
	t.Helper()
	start := time.Now()
	parse()
	if d := time.Since(start); d > Budget {
		t.Errorf("parsing %d bytes took %v, want under %v", size, d, Budget)
	}
}

// Literals returns the string literals of the *_test.go files in the
// current directory (the package under test) that keep accepts, in file
// order, without repeats.
func Literals(t testing.TB, keep func(string) bool) []string {
	t.Helper()
	files, err := filepath.Glob("*_test.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	seen := map[string]bool{}
	var out []string
	for _, name := range files {
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatalf("seed literals: %v", err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			s, err := strconv.Unquote(lit.Value)
			if err == nil && !seen[s] && keep(s) {
				seen[s] = true
				out = append(out, s)
			}
			return true
		})
	}
	return out
}
