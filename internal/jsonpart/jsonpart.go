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
