package jsonpart_test

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/cadre-dev/cadre/internal/jsonpart"
)

// ptrMarshaler has MarshalJSON on its pointer only: encoding/json calls it
// for an element of a slice (addressable) and not for a lone value.
type ptrMarshaler struct{ N int }

func (p *ptrMarshaler) MarshalJSON() ([]byte, error) { return []byte(` { "n" : "custom" } `), nil }

// whole is what encoding/json writes for v in one call, HTML unescaped.
func whole(t *testing.T, v any) string {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// partsCase is a value written in parts, and the bytes it must make.
type partsCase struct {
	parts func(*bytes.Buffer, *jsonpart.Encoder) error
	want  string
}

func checkParts(t *testing.T, cases map[string]partsCase) {
	t.Helper()
	for name, tc := range cases {
		var b bytes.Buffer
		if err := tc.parts(&b, jsonpart.New()); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if b.String() != tc.want {
			t.Errorf("%s: got %s, want %s", name, b.String(), tc.want)
		}
	}
}

func TestArrayIsTheWholeSlice(t *testing.T) {
	checkParts(t, map[string]partsCase{
		"strings": {
			func(b *bytes.Buffer, e *jsonpart.Encoder) error {
				return jsonpart.Array(b, e, []string{"<a> & b", "\u2028", ""})
			},
			whole(t, []string{"<a> & b", "\u2028", ""}),
		},
		"pointer marshalers": {
			func(b *bytes.Buffer, e *jsonpart.Encoder) error {
				return jsonpart.Array(b, e, []ptrMarshaler{{1}, {2}})
			},
			whole(t, []ptrMarshaler{{1}, {2}}),
		},
		"raw messages, compacted": {
			func(b *bytes.Buffer, e *jsonpart.Encoder) error {
				return jsonpart.Array(b, e, []json.RawMessage{json.RawMessage("{ \"a\" :\n 1 }"), json.RawMessage(" [ ] ")})
			},
			`[{"a":1},[]]`,
		},
		"interfaces": {
			func(b *bytes.Buffer, e *jsonpart.Encoder) error {
				return jsonpart.Array(b, e, []any{1, "x", nil, map[string]int{"b": 2, "a": 1}})
			},
			`[1,"x",null,{"a":1,"b":2}]`,
		},
		"empty":            {func(b *bytes.Buffer, e *jsonpart.Encoder) error { return jsonpart.Array(b, e, []int{}) }, `[]`},
		"nil is empty too": {func(b *bytes.Buffer, e *jsonpart.Encoder) error { return jsonpart.Array[int](b, e, nil) }, `[]`},
	})
}

func TestFields(t *testing.T) {
	e := jsonpart.New()
	got, err := e.Fields(struct {
		A string `json:"a"`
		B int    `json:"b,omitempty"`
	}{A: "<x>"})
	if err != nil || string(got) != `"a":"<x>"` {
		t.Errorf("Fields = %q, %v; want \"a\":\"<x>\"", got, err)
	}
	if got, err := e.Fields(struct{}{}); err != nil || len(got) != 0 {
		t.Errorf("Fields of {} = %q, %v; want nothing", got, err)
	}
	if _, err := e.Fields([]int{1}); err == nil {
		t.Error("Fields of an array: no error")
	}
	if _, err := e.Bytes(func() {}); err == nil {
		t.Error("Bytes of a func: no error")
	}
}

// TestObject: the object spliced around one member written by its own
// function is what json.Marshal writes for the struct of those fields, with
// or without members before and after; a member that cannot be encoded
// writes nothing at all.
func TestObject(t *testing.T) {
	type head struct {
		A string `json:"a"`
	}
	type tail struct {
		Z []int `json:"z"`
		O int   `json:"o,omitempty"`
	}
	value := func(w io.Writer) error { _, err := io.WriteString(w, `[1,"<v>"]`); return err }
	for name, tc := range map[string]struct {
		head, tail any
		want       string
	}{
		"both":       {head{"<h>"}, tail{Z: []int{1}}, `{"a":"<h>","v":[1,"<v>"],"z":[1]}`},
		"no head":    {nil, tail{}, `{"v":[1,"<v>"],"z":null}`},
		"no tail":    {head{}, nil, `{"a":"","v":[1,"<v>"]}`},
		"empty both": {struct{}{}, tail{O: 0, Z: nil}, `{"v":[1,"<v>"],"z":null}`},
		"neither":    {nil, nil, `{"v":[1,"<v>"]}`},
	} {
		var b bytes.Buffer
		if err := jsonpart.Object(&b, jsonpart.New(), jsonpart.Fields(tc.head), jsonpart.Field("v", value), jsonpart.Fields(tc.tail)); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if b.String() != tc.want {
			t.Errorf("%s: got %s, want %s", name, b.String(), tc.want)
		}
	}
	var b bytes.Buffer
	bad := struct {
		F func() `json:"f"`
	}{}
	if err := jsonpart.Object(&b, jsonpart.New(), jsonpart.Fields(head{}), jsonpart.Field("v", value), jsonpart.Fields(bad)); err == nil || b.Len() != 0 {
		t.Errorf("a tail that cannot be encoded: %v, wrote %q; want an error and nothing written", err, b.String())
	}

	// Members in any order and number, as a struct of them encodes.
	b.Reset()
	err := jsonpart.Object(&b, jsonpart.New(), jsonpart.Field("v", value), jsonpart.Fields(tail{O: 2}), jsonpart.Field("w", value), jsonpart.Fields(struct{}{}))
	if want := `{"v":[1,"<v>"],"z":null,"o":2,"w":[1,"<v>"]}`; err != nil || b.String() != want {
		t.Errorf("fields between two values: got %s, %v; want %s", b.String(), err, want)
	}
	b.Reset()
	if err := jsonpart.Object(&b, jsonpart.New()); err != nil || b.String() != `{}` {
		t.Errorf("no members: got %s, %v; want {}", b.String(), err)
	}
}

// Map writes what encoding/json writes for the map: its keys sorted, each
// value as encoding/json encodes a map's value.
func TestMapIsTheWholeMap(t *testing.T) {
	checkParts(t, map[string]partsCase{
		"interfaces, keys sorted": {
			func(b *bytes.Buffer, e *jsonpart.Encoder) error {
				return jsonpart.Map(b, e, map[string]any{"toolu_2": map[string]any{"z": 1, "a": "<b>"}, "toolu_10": nil, "": []int{1}})
			},
			whole(t, map[string]any{"toolu_2": map[string]any{"z": 1, "a": "<b>"}, "toolu_10": nil, "": []int{1}}),
		},
		"keys escaped": {
			func(b *bytes.Buffer, e *jsonpart.Encoder) error {
				return jsonpart.Map(b, e, map[string]int{"a\"b": 1, "<&>": 2, "\u2028": 3})
			},
			whole(t, map[string]int{"a\"b": 1, "<&>": 2, "\u2028": 3}),
		},
		"pointer marshalers are not called on values": {
			func(b *bytes.Buffer, e *jsonpart.Encoder) error {
				return jsonpart.Map(b, e, map[string]ptrMarshaler{"x": {1}})
			},
			whole(t, map[string]ptrMarshaler{"x": {1}}),
		},
		"empty":            {func(b *bytes.Buffer, e *jsonpart.Encoder) error { return jsonpart.Map(b, e, map[string]int{}) }, `{}`},
		"nil is empty too": {func(b *bytes.Buffer, e *jsonpart.Encoder) error { return jsonpart.Map[int](b, e, nil) }, `{}`},
	})
}
