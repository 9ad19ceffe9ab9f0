package golden

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// recorder stands in for the test a Check runs under, so that failures can
// be examined instead of failing this test. Fatalf stops the calling
// goroutine, as testing's does.
type recorder struct {
	testing.TB
	errors, fatals []string
}

func (r *recorder) Helper() {}
func (r *recorder) Errorf(format string, args ...any) {
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}
func (r *recorder) Fatalf(format string, args ...any) {
	r.fatals = append(r.fatals, fmt.Sprintf(format, args...))
	panic(r)
}

// check runs Check under a recorder, with -update set to upd.
func check(t *testing.T, upd bool, path string, got []byte) *recorder {
	t.Helper()
	old := *update
	*update = upd
	t.Cleanup(func() { *update = old })
	r := &recorder{TB: t}
	func() {
		defer func() {
			if p := recover(); p != nil && p != r {
				panic(p)
			}
		}()
		Check(r, path, got)
	}()
	return r
}

func TestCheck(t *testing.T) {
	dir := t.TempDir()
	same := filepath.Join(dir, "same.golden")
	if err := os.WriteFile(same, []byte("one\ntwo\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name       string
		update     bool
		path       string
		got        string
		wantError  string // in the one Errorf, or "" for none
		wantFatal  string // in the one Fatalf, or "" for none
		wantOnDisk string // the file afterwards, when not ""
	}{
		{name: "equal", path: same, got: "one\ntwo\n"},
		{name: "a changed line is shown as a diff", path: same, got: "one\nthree\n",
			wantError: "-want +got", wantOnDisk: "one\ntwo\n"},
		{name: "a missing final newline counts", path: same, got: "one\ntwo",
			wantError: "same.golden differs"},
		{name: "a missing file says how to create it", path: filepath.Join(dir, "none.golden"), got: "x",
			wantFatal: "run the test with -update to create it"},
		{name: "update writes and passes", update: true, path: filepath.Join(dir, "new", "made.golden"), got: "fresh\n",
			wantOnDisk: "fresh\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := check(t, tt.update, tt.path, []byte(tt.got))
			expect(t, "Errorf", r.errors, tt.wantError)
			expect(t, "Fatalf", r.fatals, tt.wantFatal)
			if tt.wantOnDisk != "" {
				data, err := os.ReadFile(tt.path)
				if err != nil || string(data) != tt.wantOnDisk {
					t.Errorf("%s holds %q (%v), want %q", tt.path, data, err, tt.wantOnDisk)
				}
			}
		})
	}
}

// TestCheckDiffNamesLines: the report shows the differing lines, not two
// whole files.
func TestCheckDiffNamesLines(t *testing.T) {
	path := filepath.Join(t.TempDir(), "long.golden")
	lines := make([]string, 40)
	for i := range lines {
		lines[i] = fmt.Sprintf("line %02d", i)
	}
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	lines[20] = "line twenty"
	r := check(t, false, path, []byte(strings.Join(lines, "\n")))
	if len(r.errors) != 1 {
		t.Fatalf("errors = %q, want one", r.errors)
	}
	msg := r.errors[0]
	// go-cmp varies its spacing on purpose, so lines are compared by fields.
	var changed []string
	for line := range strings.Lines(msg) {
		if f := strings.Fields(line); len(f) > 0 && (f[0] == "-" || f[0] == "+") {
			changed = append(changed, strings.Join(f, " "))
		}
	}
	if want := []string{"- line 20", "+ line twenty"}; !slices.Equal(changed, want) {
		t.Errorf("changed lines = %q, want %q:\n%s", changed, want, msg)
	}
	if strings.Contains(msg, "line 01") {
		t.Errorf("report repeats lines far from the change:\n%s", msg)
	}
}

func expect(t *testing.T, what string, got []string, want string) {
	t.Helper()
	switch {
	case want == "" && len(got) > 0:
		t.Errorf("%s called: %q", what, got)
	case want != "" && (len(got) != 1 || !strings.Contains(got[0], want)):
		t.Errorf("%s calls = %q, want one saying %q", what, got, want)
	}
}
