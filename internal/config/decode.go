package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/cadre-dev/cadre/internal/excerpt"
	"github.com/cadre-dev/cadre/internal/permission"
	"github.com/cadre-dev/cadre/internal/suggest"
)

// decoder applies generic JSON (decoded with UseNumber) to Go values by
// their json tags, reporting unknown keys as warnings and wrong types as
// errors, each with its key path.
type decoder struct {
	file string
	// data is the file's text, for values that decode themselves from
	// JSON (json.Unmarshaler): the generic value has lost their key order.
	data     []byte
	warnings []Warning
}

var (
	rawMessageType  = reflect.TypeFor[json.RawMessage]()
	taskRulesType   = reflect.TypeFor[permission.TaskRules]()
	unmarshalerType = reflect.TypeFor[json.Unmarshaler]()
)

// decode sets dst, addressable, from v; path names v for messages, and
// keys are the object keys leading to v from the top (nil below an array
// element). A null leaves dst as it is.
func (d *decoder) decode(path string, keys []string, v any, dst reflect.Value) error {
	if v == nil {
		return nil
	}
	if dst.Type() == rawMessageType {
		raw, err := json.Marshal(v)
		if err != nil {
			return d.errorf(path, "cannot re-encode: %v", err)
		}
		dst.SetBytes(raw)
		return nil
	}
	if dst.CanAddr() && dst.Addr().Type().Implements(unmarshalerType) {
		return d.unmarshal(path, keys, v, dst.Addr().Interface().(json.Unmarshaler))
	}
	switch dst.Kind() {
	case reflect.Struct:
		obj, ok := v.(map[string]any)
		if !ok {
			return d.wrongType(path, "an object", v)
		}
		fields := jsonFields(dst.Type())
		for _, key := range sortedKeys(obj) {
			i, ok := fields[key]
			if !ok {
				d.unknown(join(path, key), key, fields)
				continue
			}
			if err := d.decode(join(path, key), with(keys, key), obj[key], dst.Field(i)); err != nil {
				return err
			}
		}
	case reflect.Map:
		obj, ok := v.(map[string]any)
		if !ok {
			return d.wrongType(path, "an object", v)
		}
		if dst.IsNil() {
			dst.Set(reflect.MakeMapWithSize(dst.Type(), len(obj)))
		}
		for _, key := range sortedKeys(obj) {
			if obj[key] == nil {
				continue
			}
			elem := reflect.New(dst.Type().Elem()).Elem()
			if err := d.decode(join(path, key), with(keys, key), obj[key], elem); err != nil {
				return err
			}
			dst.SetMapIndex(reflect.ValueOf(key), elem)
		}
	case reflect.Slice:
		arr, ok := v.([]any)
		if !ok {
			return d.wrongType(path, "an array", v)
		}
		out := reflect.MakeSlice(dst.Type(), len(arr), len(arr))
		for i, e := range arr {
			if err := d.decode(fmt.Sprintf("%s[%d]", path, i), nil, e, out.Index(i)); err != nil {
				return err
			}
		}
		dst.Set(out)
	case reflect.String:
		s, ok := v.(string)
		if !ok {
			return d.wrongType(path, "a string", v)
		}
		dst.SetString(s)
	case reflect.Bool:
		b, ok := v.(bool)
		if !ok {
			return d.wrongType(path, "true or false", v)
		}
		dst.SetBool(b)
	case reflect.Int, reflect.Int64, reflect.Int32:
		n, ok := v.(json.Number)
		if !ok {
			return d.wrongType(path, "a number", v)
		}
		i, err := strconv.ParseInt(n.String(), 10, 64)
		if err != nil || dst.OverflowInt(i) {
			return d.errorf(path, "want a whole number, got %s", excerpt.Clip(n.String()))
		}
		dst.SetInt(i)
	case reflect.Float64, reflect.Float32:
		n, ok := v.(json.Number)
		if !ok {
			return d.wrongType(path, "a number", v)
		}
		f, err := n.Float64()
		if err != nil || math.IsInf(f, 0) {
			return d.errorf(path, "want a number, got %s", excerpt.Clip(n.String()))
		}
		dst.SetFloat(f)
	default:
		// A field of a kind this walker does not know: a programming error,
		// caught by the tests as soon as such a field is added.
		return d.errorf(path, "cadre cannot read settings of Go type %s", dst.Type())
	}
	return nil
}

// unmarshal lets u decode itself from the value's original text, found
// in the file by its keys; below an array, where keys cannot reach, from
// the generic value re-encoded.
func (d *decoder) unmarshal(path string, keys []string, v any, u json.Unmarshaler) error {
	raw, ok := rawAt(d.data, keys)
	if !ok {
		var err error
		if raw, err = json.Marshal(v); err != nil {
			return d.errorf(path, "cannot re-encode: %v", err)
		}
	}
	if err := u.UnmarshalJSON(raw); err != nil {
		var tre *permission.TaskRuleError
		if errors.As(err, &tre) {
			// Name the entry in the key path: permissions.task.reviewer.
			key := path
			if tre.Pattern != "" {
				key = join(path, tre.Pattern)
			}
			return &Error{File: d.file, Key: key, Msg: tre.Err.Error(), Err: err}
		}
		return &Error{File: d.file, Key: path, Msg: err.Error(), Err: err}
	}
	return nil
}

// rawAt returns the text of the value reached from the top-level object
// of data by the object keys, the last of duplicated keys winning as when
// decoding; false when keys is nil or the value is not there.
func rawAt(data []byte, keys []string) (json.RawMessage, bool) {
	if keys == nil {
		return nil, false
	}
	raw := json.RawMessage(data)
	for _, key := range keys {
		dec := json.NewDecoder(bytes.NewReader(raw))
		if t, err := dec.Token(); err != nil || t != json.Delim('{') {
			return nil, false
		}
		var found json.RawMessage
		for dec.More() {
			k, err := dec.Token()
			if err != nil {
				return nil, false
			}
			var v json.RawMessage
			if err := dec.Decode(&v); err != nil {
				return nil, false
			}
			if k == key {
				found = v
			}
		}
		if found == nil {
			return nil, false
		}
		raw = found
	}
	return raw, true
}

// with returns keys and key, never sharing keys' backing array; nil keys
// stay nil (an array element is not reachable by keys).
func with(keys []string, key string) []string {
	if keys == nil {
		return nil
	}
	return append(keys[:len(keys):len(keys)], key)
}

func (d *decoder) wrongType(path, want string, v any) error {
	return d.errorf(path, "want %s, got %s", want, jsonType(v))
}

func (d *decoder) errorf(path, format string, args ...any) error {
	return &Error{File: d.file, Key: path, Msg: fmt.Sprintf(format, args...)}
}

func (d *decoder) unknown(path, key string, fields map[string]int) {
	msg := "unknown key, ignored"
	if near, ok := suggest.Closest(key, slices.Sorted(maps.Keys(fields))); ok {
		msg += fmt.Sprintf(" (did you mean %q?)", near)
	}
	d.warnings = append(d.warnings, Warning{File: d.file, Key: path, Message: msg})
}

// jsonFields maps the json names of t's fields to their indexes.
func jsonFields(t reflect.Type) map[string]int {
	out := make(map[string]int, t.NumField())
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch name {
		case "-":
			continue
		case "":
			name = f.Name
		}
		out[name] = i
	}
	return out
}

func jsonType(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "string"
	case json.Number, float64:
		return "number"
	case bool:
		return "boolean"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}

// join appends key to the key path of a message: a key is the file's
// text, so the path holds an excerpt of it.
func join(path, key string) string {
	if path == "" {
		return excerpt.Clip(key)
	}
	return path + "." + excerpt.Clip(key)
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// merge applies the layer src, decoded from the generic object v, onto
// dst: fields v sets replace scalars, maps merge by key, slices append
// what dst does not hold yet. Both are struct values; dst is addressable.
func merge(dst, src reflect.Value, v map[string]any) {
	fields := jsonFields(dst.Type())
	for key, val := range v {
		i, ok := fields[key]
		if !ok || val == nil {
			continue
		}
		df, sf := dst.Field(i), src.Field(i)
		switch {
		case df.Type() == rawMessageType:
			df.SetBytes(mergeRaw(df.Bytes(), sf.Bytes()))
		case df.Type() == taskRulesType:
			// Order is meaning (the last matching rule wins), and a rule
			// repeated later must still come later: concatenate as is.
			df.Set(reflect.AppendSlice(df, sf))
		case df.Kind() == reflect.Struct:
			if obj, ok := val.(map[string]any); ok {
				merge(df, sf, obj)
			}
		case df.Kind() == reflect.Map:
			if df.IsNil() {
				df.Set(reflect.MakeMapWithSize(df.Type(), sf.Len()))
			}
			iter := sf.MapRange()
			for iter.Next() {
				df.SetMapIndex(iter.Key(), iter.Value())
			}
		case df.Kind() == reflect.Slice:
			df.Set(appendNew(df, sf))
		default:
			df.Set(sf)
		}
	}
}

// mergeRaw merges two raw values: objects by key, a later entry replacing
// an earlier one whole (a null entry leaves it); anything else is
// replaced.
func mergeRaw(dst, src json.RawMessage) json.RawMessage {
	var d, s map[string]json.RawMessage
	if json.Unmarshal(dst, &d) != nil || d == nil || json.Unmarshal(src, &s) != nil || s == nil {
		return src
	}
	for k, v := range s {
		if string(v) != "null" {
			d[k] = v
		}
	}
	out, err := json.Marshal(d)
	if err != nil {
		// Cannot happen: every value was valid JSON a moment ago.
		return src
	}
	return out
}

// appendNew appends the elements of src that dst lacks, in order.
func appendNew(dst, src reflect.Value) reflect.Value {
	for i := range src.Len() {
		e := src.Index(i)
		dup := false
		for j := range dst.Len() {
			if dst.Index(j).Equal(e) {
				dup = true
				break
			}
		}
		if !dup {
			dst = reflect.Append(dst, e)
		}
	}
	return dst
}
