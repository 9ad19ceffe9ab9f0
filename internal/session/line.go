package session

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"sync"

	"github.com/cadre-dev/cadre/internal/jsonpart"
	"github.com/cadre-dev/cadre/llm"
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
	if e.Message != nil {
		return encodeWithMessage(e)
	}
	return encodeWhole(e)
}

// encodeWhole is EncodeEntry by one call of encoding/json.
func encodeWhole(e Entry) ([]byte, error) {
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

// lineParts splits the line's fields around the message: the fields
// before it and after it, each a struct type of its own, and the
// message's key.
var lineParts = sync.OnceValue(func() (p struct {
	head, tail reflect.Type
	at         int
	key        string
}) {
	t := lineType()
	f, _ := t.FieldByName("Message")
	p.at = f.Index[0]
	p.key = strings.Split(f.Tag.Get("json"), ",")[0]
	fields := reflect.VisibleFields(t)
	p.head = reflect.StructOf(fields[:p.at])
	p.tail = reflect.StructOf(fields[p.at+1:])
	return p
})

// encodeWithMessage is EncodeEntry of an entry with a message: the fields
// around it as encoding/json writes them, the message a block at a time
// into a buffer sized for it (llm.Message.WriteJSON), so that a message of
// thousands of tool results is held once, in the line.
func encodeWithMessage(e Entry) ([]byte, error) {
	p := lineParts()
	ev := reflect.ValueOf(e)
	head, tail := reflect.New(p.head).Elem(), reflect.New(p.tail).Elem()
	for i := range head.NumField() {
		head.Field(i).Set(ev.Field(i))
	}
	for i := range tail.NumField() {
		tail.Field(i).Set(ev.Field(p.at + 1 + i))
	}
	var buf bytes.Buffer
	buf.Grow(512 + approxSize(e.Message.Content))
	if err := jsonpart.Object(&buf, jsonpart.New(), jsonpart.Fields(head.Interface()), jsonpart.Field(p.key, e.Message.WriteJSON), jsonpart.Fields(tail.Interface())); err != nil {
		return nil, fmt.Errorf("encode %s entry: %w", e.Type, err)
	}
	buf.WriteByte('\n')
	return buf.Bytes(), nil
}

// approxSize is about how many bytes blocks take as JSON: their text and
// inputs, and a little for each block's keys.
func approxSize(blocks []llm.Block) int {
	n := 0
	for _, b := range blocks {
		n += 64 + len(b.Text) + len(b.Thinking) + len(b.Signature) + len(b.Data) + len(b.ID) + len(b.Name) + len(b.Input) + len(b.ToolUseID) + approxSize(b.Content)
		if b.Source != nil {
			n += 64 + len(b.Source.Data)
		}
	}
	return n
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
