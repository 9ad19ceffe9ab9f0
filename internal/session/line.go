package session

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"sync"
)

// A transcript line is Claude Code's: Entry's fields, in Entry's order,
// under camelCase keys (parentUuid, sessionId, messageId, stopReason).
// Entry's own JSON is the API's snake_case (record.TranscriptEntry), so
// the line's type is made from Entry once, by reflection, with each JSON
// name camel-cased: one declaration of the fields, and encoding/json's
// speed on the hot path (every append and every read).
var lineType = sync.OnceValue(func() reflect.Type {
	t := reflect.TypeFor[Entry]()
	fields := make([]reflect.StructField, t.NumField())
	for i := range fields {
		f := t.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if opts != "" {
			opts = "," + opts
		}
		f.Tag = reflect.StructTag(fmt.Sprintf(`json:%q`, camel(name)+opts))
		fields[i] = f
	}
	return reflect.StructOf(fields)
})

// camel turns a snake_case key into camelCase: parent_uuid, parentUuid.
func camel(s string) string {
	parts := strings.Split(s, "_")
	for i := 1; i < len(parts); i++ {
		if p := parts[i]; p != "" {
			parts[i] = strings.ToUpper(p[:1]) + p[1:]
		}
	}
	return strings.Join(parts, "")
}

// EncodeEntry is e as a transcript line: JSON ending in '\n', exactly the
// bytes a transcript file holds for it.
func EncodeEntry(e Entry) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	// Transcripts are read by people too; "<task-notification>" beats
	// "\u003ctask-notification\u003e".
	enc.SetEscapeHTML(false)
	if err := enc.Encode(reflect.ValueOf(e).Convert(lineType()).Interface()); err != nil { // Encode ends the line with '\n'
		return nil, fmt.Errorf("encode %s entry: %w", e.Type, err)
	}
	return buf.Bytes(), nil
}

// DecodeEntry reads one transcript line (Claude Code's format; keys it
// does not know are skipped, as Claude Code's own lines carry more).
func DecodeEntry(line []byte) (Entry, error) {
	p := reflect.New(lineType())
	if err := json.Unmarshal(line, p.Interface()); err != nil {
		return Entry{}, err
	}
	return p.Elem().Convert(reflect.TypeFor[Entry]()).Interface().(Entry), nil
}
