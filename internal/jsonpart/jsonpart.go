package jsonpart

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"maps"
	"slices"
)

// An Encoder encodes values as a json.Encoder with HTML escaping off does,
// one at a time, into a buffer it reuses. Its zero value is not ready;
// use New. An Encoder is not safe for concurrent use.
type Encoder struct {
	buf bytes.Buffer
	enc *json.Encoder
}

// New returns an Encoder.
func New() *Encoder {
	e := &Encoder{}
	e.enc = json.NewEncoder(&e.buf)
	e.enc.SetEscapeHTML(false)
	return e
}

// Bytes returns v's JSON, without the newline json.Encoder ends it with.
// The bytes are valid until the Encoder's next call.
func (e *Encoder) Bytes(v any) ([]byte, error) {
	e.buf.Reset()
	if err := e.enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(e.buf.Bytes(), []byte("\n")), nil
}

// Fields returns the members of the object v encodes to, the text between
// its braces: empty for {}. They are valid until the Encoder's next call.
func (e *Encoder) Fields(v any) ([]byte, error) {
	b, err := e.Bytes(v)
	if err != nil {
		return nil, err
	}
	if len(b) < 2 || b[0] != '{' || b[len(b)-1] != '}' {
		return nil, errors.New("jsonpart: the value is not a JSON object")
	}
	return b[1 : len(b)-1], nil
}

// Array writes the JSON array of items to w, one element at a time: the
// bytes json.Marshal would give the slice (HTML escaping off), except
// that a nil slice is [] as an empty one is.
func Array[T any](w io.Writer, e *Encoder, items []T) error {
	return list(w, "[", "]", len(items), func(i int) error {
		// A pointer, so that an element is addressable as it is in a
		// slice and a MarshalJSON on its pointer is called as
		// encoding/json calls it there.
		b, err := e.Bytes(&items[i])
		if err != nil {
			return err
		}
		_, err = w.Write(b)
		return err
	})
}

// A Member is a part of an object Object writes: the fields of a struct
// (Fields) or one key with the value a function writes (Field).
type Member struct {
	fields any
	key    string
	value  func(io.Writer) error
}

// Fields is the members of the object the struct v encodes to, in its
// order (none for nil, or for a struct whose fields are all omitted).
func Fields(v any) Member { return Member{fields: v} }

// Field is the member key whose value write writes; write may use the
// Object's Encoder.
func Field(key string, write func(io.Writer) error) Member {
	return Member{key: key, value: write}
}

// Object writes to w the JSON object of members, in order: the bytes
// json.Marshal gives a struct of those fields in that order (HTML escaping
// off). Every Fields member is encoded before anything is written, so
// that a field that cannot be encoded writes nothing; a Field's value is
// written as it comes.
func Object(w io.Writer, e *Encoder, members ...Member) error {
	parts := make([][]byte, len(members))
	for i, m := range members {
		var err error
		if m.value != nil {
			parts[i], err = e.Bytes(m.key)
			parts[i] = append(bytes.Clone(parts[i]), ':')
		} else if m.fields != nil {
			parts[i], err = e.Fields(m.fields)
			parts[i] = bytes.Clone(parts[i])
		}
		if err != nil {
			return err
		}
	}
	sep := []byte{'{'}
	for i, m := range members {
		if len(parts[i]) == 0 {
			continue
		}
		if _, err := w.Write(append(sep, parts[i]...)); err != nil {
			return err
		}
		sep = []byte{','}
		if m.value != nil {
			if err := m.value(w); err != nil {
				return err
			}
		}
	}
	if sep[0] == '{' {
		_, err := io.WriteString(w, "{}")
		return err
	}
	_, err := io.WriteString(w, "}")
	return err
}

// Map writes the JSON object of m to w a member at a time, its keys in
// order: the bytes json.Marshal would give m (HTML escaping off), except
// that a nil map is {} as an empty one is.
func Map[V any](w io.Writer, e *Encoder, m map[string]V) error {
	keys := slices.Sorted(maps.Keys(m))
	return list(w, "{", "}", len(keys), func(i int) error {
		k, err := e.Bytes(keys[i])
		if err != nil {
			return err
		}
		if _, err := w.Write(append(k, ':')); err != nil {
			return err
		}
		// The value itself, not a pointer: a map's values are not
		// addressable, and encoding/json calls no MarshalJSON on their
		// pointers.
		v, err := e.Bytes(m[keys[i]])
		if err != nil {
			return err
		}
		_, err = w.Write(v)
		return err
	})
}

// list writes n elements between open and close, separated by commas,
// element i written by elem.
func list(w io.Writer, open, close string, n int, elem func(i int) error) error {
	if _, err := io.WriteString(w, open); err != nil {
		return err
	}
	for i := range n {
		if i > 0 {
			if _, err := io.WriteString(w, ","); err != nil {
				return err
			}
		}
		if err := elem(i); err != nil {
			return err
		}
	}
	_, err := io.WriteString(w, close)
	return err
}
