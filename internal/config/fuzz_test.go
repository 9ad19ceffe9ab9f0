package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/cadre-dev/cadre/internal/testkit/fuzzcheck"
)

// FuzzSettings feeds a project's settings file, which a cloned repository
// chooses, to Load. Beyond not panicking: loading is quick, an error is
// an *Error naming the file (and, for JSON syntax, a line and column
// inside it), no error or warning repeats more than an excerpt of the
// file, and accepted settings re-encode to a file that loads to the same
// settings.
func FuzzSettings(f *testing.F) {
	for _, s := range fuzzcheck.Literals(f, func(s string) bool { return strings.HasPrefix(strings.TrimSpace(s), "{") }) {
		f.Add([]byte(s))
	}
	f.Add([]byte("\xef\xbb\xbf{\"model\": \"x\"}"))

	// One project for every input: each overwrites the last one's file.
	root := f.TempDir()
	e := &env{home: filepath.Join(root, "home"), proj: filepath.Join(root, "proj"), vars: map[string]string{}}
	f.Fuzz(func(t *testing.T, data []byte) {
		file := e.write(t, ScopeProject, string(data))

		var got *Loaded
		var err error
		fuzzcheck.Timed(t, len(data), func() { got, err = e.load(Overrides{}) })
		if err != nil {
			checkSettingsError(t, file, data, err)
			return
		}
		for _, w := range got.Warnings {
			if w.File != file {
				t.Errorf("warning %v does not name the file %s", w, file)
			}
			fuzzcheck.NoEcho(t, "warning", string(data), w.String())
		}

		// What was accepted, written back, loads to the same settings:
		// the values validation settles on (a rule spelled canonically, a
		// mode, a surface) are themselves accepted.
		var buf bytes.Buffer
		if err := writeSet(&buf, reflect.ValueOf(got.Settings)); err != nil {
			t.Fatalf("accepted settings do not encode: %v", err)
		}
		again := buf.Bytes()
		e.write(t, ScopeProject, string(again))
		back, err := e.load(Overrides{})
		if err != nil {
			t.Fatalf("accepted settings, re-encoded as\n%s\ndo not load: %v", again, err)
		}
		if !reflect.DeepEqual(got.Settings, back.Settings) {
			t.Errorf("settings re-encoded as\n%s\nload differently:\n%+v\n%+v", again, got.Settings, back.Settings)
		}
	})
}

// writeSet writes v as a settings file would hold it: struct fields by
// their json names, only those that are set, since an explicit empty value
// (a "defaultMode": "") is an error where an absent one is not. Types that
// encode themselves (task rules, the raw agents object) do.
func writeSet(b *bytes.Buffer, v reflect.Value) error {
	if v.Type().Implements(reflect.TypeFor[json.Marshaler]()) {
		raw, err := json.Marshal(v.Interface())
		b.Write(raw)
		return err
	}
	switch v.Kind() {
	case reflect.Struct:
		b.WriteByte('{')
		first := true
		for name, i := range jsonFields(v.Type()) {
			f := v.Field(i)
			if f.IsZero() {
				continue
			}
			if !first {
				b.WriteByte(',')
			}
			first = false
			key, _ := json.Marshal(name)
			b.Write(key)
			b.WriteByte(':')
			if err := writeSet(b, f); err != nil {
				return err
			}
		}
		b.WriteByte('}')
	case reflect.Map:
		b.WriteByte('{')
		keys := v.MapKeys()
		slices.SortFunc(keys, func(x, y reflect.Value) int { return strings.Compare(x.String(), y.String()) })
		for i, k := range keys {
			if i > 0 {
				b.WriteByte(',')
			}
			key, _ := json.Marshal(k.String())
			b.Write(key)
			b.WriteByte(':')
			if err := writeSet(b, v.MapIndex(k)); err != nil {
				return err
			}
		}
		b.WriteByte('}')
	case reflect.Slice:
		b.WriteByte('[')
		for i := range v.Len() {
			if i > 0 {
				b.WriteByte(',')
			}
			if err := writeSet(b, v.Index(i)); err != nil {
				return err
			}
		}
		b.WriteByte(']')
	default:
		raw, err := json.Marshal(v.Interface())
		b.Write(raw)
		return err
	}
	return nil
}

func checkSettingsError(t *testing.T, file string, data []byte, err error) {
	t.Helper()
	var ce *Error
	if !errors.As(err, &ce) {
		t.Fatalf("error %v (%T) is not an *Error", err, err)
	}
	if ce.File != file {
		t.Errorf("error %v names %q, want %q", err, ce.File, file)
	}
	if ce.Line != 0 && (ce.Line < 1 || ce.Line > fuzzcheck.Lines(data) || ce.Col < 1) {
		t.Errorf("error %v is at %d:%d of a file of %d lines", err, ce.Line, ce.Col, fuzzcheck.Lines(data))
	}
	fuzzcheck.NoEcho(t, "error", string(data), err.Error())
}
