package otlp

import (
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"math"
	"strconv"
)

// OTLP/JSON is protobuf's JSON mapping with OTLP's exceptions: trace and
// span ids are hex strings, not base64, and enums are numbers.

// hexID is a trace or span id.
type hexID []byte

func (id hexID) MarshalJSON() ([]byte, error) {
	out := make([]byte, 0, 2*len(id)+2)
	out = append(out, '"')
	out = hex.AppendEncode(out, id)
	return append(out, '"'), nil
}

// MarshalJSON writes the one-of's case as its field, as protobuf's JSON
// mapping does: 64-bit integers as strings, bytes in base64, non-finite
// doubles by name.
func (v anyValue) MarshalJSON() ([]byte, error) {
	var b []byte
	switch v.field {
	case fieldString:
		s, _ := json.Marshal(v.s)
		b = append([]byte(`{"stringValue":`), s...)
	case fieldBool:
		b = strconv.AppendBool([]byte(`{"boolValue":`), v.b)
	case fieldInt:
		b = strconv.AppendInt([]byte(`{"intValue":"`), v.i, 10)
		b = append(b, '"')
	case fieldDouble:
		b = append([]byte(`{"doubleValue":`), jsonDouble(v.d)...)
	case fieldBytes:
		b = append([]byte(`{"bytesValue":"`), base64.StdEncoding.EncodeToString(v.bytes)...)
		b = append(b, '"')
	case fieldArray:
		vals, err := json.Marshal(values{v.list})
		if err != nil {
			return nil, err
		}
		b = append([]byte(`{"arrayValue":`), vals...)
	case fieldKVList:
		kvs, err := json.Marshal(kvList{v.kvs})
		if err != nil {
			return nil, err
		}
		b = append([]byte(`{"kvlistValue":`), kvs...)
	default:
		return []byte(`{}`), nil
	}
	return append(b, '}'), nil
}

type values struct {
	Values []anyValue `json:"values,omitempty"`
}

type kvList struct {
	Values []keyValue `json:"values,omitempty"`
}

func jsonDouble(d float64) string {
	switch {
	case math.IsNaN(d):
		return `"NaN"`
	case math.IsInf(d, 1):
		return `"Infinity"`
	case math.IsInf(d, -1):
		return `"-Infinity"`
	}
	return strconv.FormatFloat(d, 'g', -1, 64)
}

// marshalJSON is req in OTLP/JSON.
func marshalJSON(req *exportRequest) ([]byte, error) { return json.Marshal(req) }

// unmarshalJSONResponse reads an OTLP/JSON ExportTraceServiceResponse.
func unmarshalJSONResponse(b []byte) (partialSuccess, error) {
	var resp struct {
		PartialSuccess *struct {
			// rejectedSpans is an int64: a string in protobuf's
			// mapping, though a number is accepted too.
			RejectedSpans json.Number `json:"rejectedSpans"`
			ErrorMessage  string      `json:"errorMessage"`
		} `json:"partialSuccess"`
	}
	if err := json.Unmarshal(b, &resp); err != nil {
		return partialSuccess{}, err
	}
	if resp.PartialSuccess == nil {
		return partialSuccess{}, nil
	}
	p := partialSuccess{ErrorMessage: resp.PartialSuccess.ErrorMessage}
	if s := string(resp.PartialSuccess.RejectedSpans); s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return partialSuccess{}, err
		}
		p.RejectedSpans = n
	}
	return p, nil
}
