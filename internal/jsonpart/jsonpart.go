package jsonpart

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
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
	sep := "["
	for i := range items {
		if _, err := io.WriteString(w, sep); err != nil {
			return err
		}
		// A pointer, so that an element is addressable as it is in a
		// slice and a MarshalJSON on its pointer is called as
		// encoding/json calls it there.
		b, err := e.Bytes(&items[i])
		if err != nil {
			return err
		}
		if _, err := w.Write(b); err != nil {
			return err
		}
		sep = ","
	}
	if sep == "[" {
		_, err := io.WriteString(w, "[]")
		return err
	}
	_, err := io.WriteString(w, "]")
	return err
}

// Object writes to w the JSON object whose members are head's, then key
// with the value that value writes, then tail's: the bytes json.Marshal
// gives a struct of those fields in that order (HTML escaping off). head
// and tail are structs (nil for none) and are encoded before anything is
// written, so that a field that cannot be encoded writes nothing; value
// may use e.
func Object(w io.Writer, e *Encoder, head any, key string, value func(io.Writer) error, tail any) error {
	members := func(v any) ([]byte, error) {
		if v == nil {
			return nil, nil
		}
		f, err := e.Fields(v)
		return bytes.Clone(f), err
	}
	h, err := members(head)
	if err != nil {
		return err
	}
	t, err := members(tail)
	if err != nil {
		return err
	}
	k, err := e.Bytes(key)
	if err != nil {
		return err
	}
	open := append(append([]byte{'{'}, h...), sepIf(len(h) > 0)...)
	open = append(append(open, k...), ':')
	if _, err := w.Write(open); err != nil {
		return err
	}
	if err := value(w); err != nil {
		return err
	}
	end := append(append(sepIf(len(t) > 0), t...), '}')
	_, err = w.Write(end)
	return err
}

// sepIf is a comma when more members follow.
func sepIf(more bool) []byte {
	if more {
		return []byte{','}
	}
	return nil
}
