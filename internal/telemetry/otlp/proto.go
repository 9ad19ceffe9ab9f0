package otlp

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// The protobuf wire format of the request's messages. Field numbers are
// the .proto files'; proto3 leaves zero scalars out, and this encoder does
// the same. A sub-message is encoded into a scratch buffer first, since its
// length comes before it.

// Wire types.
const (
	wireVarint  = 0
	wireFixed64 = 1
	wireBytes   = 2
	wireFixed32 = 5
)

func appendTag(b []byte, field, wire int) []byte {
	return binary.AppendUvarint(b, uint64(field)<<3|uint64(wire))
}

func appendVarintField(b []byte, field int, v uint64) []byte {
	if v == 0 {
		return b
	}
	return binary.AppendUvarint(appendTag(b, field, wireVarint), v)
}

func appendFixed64Field(b []byte, field int, v uint64) []byte {
	if v == 0 {
		return b
	}
	return binary.LittleEndian.AppendUint64(appendTag(b, field, wireFixed64), v)
}

func appendFixed32Field(b []byte, field int, v uint32) []byte {
	if v == 0 {
		return b
	}
	return binary.LittleEndian.AppendUint32(appendTag(b, field, wireFixed32), v)
}

func appendBytesField(b []byte, field int, v []byte) []byte {
	if len(v) == 0 {
		return b
	}
	b = binary.AppendUvarint(appendTag(b, field, wireBytes), uint64(len(v)))
	return append(b, v...)
}

func appendStringField(b []byte, field int, v string) []byte {
	if v == "" {
		return b
	}
	b = binary.AppendUvarint(appendTag(b, field, wireBytes), uint64(len(v)))
	return append(b, v...)
}

// appendMessage appends field as a message that enc encodes, present even
// when empty.
func appendMessage(b []byte, field int, enc func([]byte) []byte) []byte {
	m := enc(nil)
	b = binary.AppendUvarint(appendTag(b, field, wireBytes), uint64(len(m)))
	return append(b, m...)
}

// marshalProto is req in the protobuf wire format.
func marshalProto(req *exportRequest) []byte {
	var b []byte
	for _, rs := range req.ResourceSpans {
		b = appendMessage(b, 1, rs.appendProto)
	}
	return b
}

func (rs *resourceSpans) appendProto(b []byte) []byte {
	if rs.Resource != nil {
		b = appendMessage(b, 1, func(b []byte) []byte { return appendKeyValues(b, 1, rs.Resource.Attributes) })
	}
	for _, ss := range rs.ScopeSpans {
		b = appendMessage(b, 2, ss.appendProto)
	}
	return appendStringField(b, 3, rs.SchemaURL)
}

func (ss *scopeSpans) appendProto(b []byte) []byte {
	if s := ss.Scope; s != nil {
		b = appendMessage(b, 1, func(b []byte) []byte {
			b = appendStringField(b, 1, s.Name)
			b = appendStringField(b, 2, s.Version)
			return appendKeyValues(b, 3, s.Attributes)
		})
	}
	for _, s := range ss.Spans {
		b = appendMessage(b, 2, s.appendProto)
	}
	return appendStringField(b, 3, ss.SchemaURL)
}

func (s *span) appendProto(b []byte) []byte {
	b = appendBytesField(b, 1, s.TraceID)
	b = appendBytesField(b, 2, s.SpanID)
	b = appendStringField(b, 3, s.TraceState)
	b = appendBytesField(b, 4, s.ParentSpanID)
	b = appendStringField(b, 5, s.Name)
	b = appendVarintField(b, 6, uint64(s.Kind))
	b = appendFixed64Field(b, 7, s.StartTimeUnixNano)
	b = appendFixed64Field(b, 8, s.EndTimeUnixNano)
	b = appendKeyValues(b, 9, s.Attributes)
	b = appendVarintField(b, 10, uint64(s.DroppedAttributesCount))
	for _, e := range s.Events {
		b = appendMessage(b, 11, func(b []byte) []byte {
			b = appendFixed64Field(b, 1, e.TimeUnixNano)
			b = appendStringField(b, 2, e.Name)
			b = appendKeyValues(b, 3, e.Attributes)
			return appendVarintField(b, 4, uint64(e.DroppedAttributesCount))
		})
	}
	b = appendVarintField(b, 12, uint64(s.DroppedEventsCount))
	for _, l := range s.Links {
		b = appendMessage(b, 13, func(b []byte) []byte {
			b = appendBytesField(b, 1, l.TraceID)
			b = appendBytesField(b, 2, l.SpanID)
			b = appendStringField(b, 3, l.TraceState)
			b = appendKeyValues(b, 4, l.Attributes)
			b = appendVarintField(b, 5, uint64(l.DroppedAttributesCount))
			return appendFixed32Field(b, 6, l.Flags)
		})
	}
	b = appendVarintField(b, 14, uint64(s.DroppedLinksCount))
	if st := s.Status; st != nil {
		b = appendMessage(b, 15, func(b []byte) []byte {
			b = appendStringField(b, 2, st.Message)
			return appendVarintField(b, 3, uint64(st.Code))
		})
	}
	return appendFixed32Field(b, 16, s.Flags)
}

func appendKeyValues(b []byte, field int, kvs []keyValue) []byte {
	for _, kv := range kvs {
		b = appendMessage(b, field, kv.appendProto)
	}
	return b
}

func (kv keyValue) appendProto(b []byte) []byte {
	b = appendStringField(b, 1, kv.Key)
	return appendMessage(b, 2, kv.Value.appendProto)
}

// appendProto encodes the one-of's case even when its value is zero: a
// present false or 0 is not an empty AnyValue.
func (v anyValue) appendProto(b []byte) []byte {
	switch v.field {
	case fieldString:
		b = binary.AppendUvarint(appendTag(b, fieldString, wireBytes), uint64(len(v.s)))
		return append(b, v.s...)
	case fieldBool:
		n := uint64(0)
		if v.b {
			n = 1
		}
		return binary.AppendUvarint(appendTag(b, fieldBool, wireVarint), n)
	case fieldInt:
		return binary.AppendUvarint(appendTag(b, fieldInt, wireVarint), uint64(v.i))
	case fieldDouble:
		return binary.LittleEndian.AppendUint64(appendTag(b, fieldDouble, wireFixed64), math.Float64bits(v.d))
	case fieldBytes:
		b = binary.AppendUvarint(appendTag(b, fieldBytes, wireBytes), uint64(len(v.bytes)))
		return append(b, v.bytes...)
	case fieldArray:
		return appendMessage(b, fieldArray, func(b []byte) []byte {
			for _, e := range v.list {
				b = appendMessage(b, 1, e.appendProto)
			}
			return b
		})
	case fieldKVList:
		return appendMessage(b, fieldKVList, func(b []byte) []byte { return appendKeyValues(b, 1, v.kvs) })
	}
	return b
}

// partialSuccess is an ExportTraceServiceResponse's partial_success: what
// the collector rejected of a request it otherwise accepted.
type partialSuccess struct {
	RejectedSpans int64
	ErrorMessage  string
}

// err is nil when nothing was rejected.
func (p partialSuccess) err() error {
	if p.RejectedSpans == 0 && p.ErrorMessage == "" {
		return nil
	}
	msg := p.ErrorMessage
	if msg == "" {
		msg = "no reason given"
	}
	return fmt.Errorf("the collector rejected %d spans: %s", p.RejectedSpans, msg)
}

var errTruncated = errors.New("truncated protobuf message")

// unmarshalResponse reads an ExportTraceServiceResponse's partial_success
// (field 1: rejected_spans 1, error_message 2) and skips everything else.
func unmarshalResponse(b []byte) (partialSuccess, error) {
	var p partialSuccess
	err := eachField(b, func(field, wire int, v uint64, data []byte) error {
		if field != 1 || wire != wireBytes {
			return nil
		}
		return eachField(data, func(field, wire int, v uint64, data []byte) error {
			switch {
			case field == 1 && wire == wireVarint:
				p.RejectedSpans = int64(v)
			case field == 2 && wire == wireBytes:
				p.ErrorMessage = string(data)
			}
			return nil
		})
	})
	return p, err
}

// eachField calls fn with each field of a message: its number, its wire
// type and its value (v for numbers, data for length-delimited fields).
func eachField(b []byte, fn func(field, wire int, v uint64, data []byte) error) error {
	for len(b) > 0 {
		tag, n := binary.Uvarint(b)
		if n <= 0 {
			return errTruncated
		}
		b = b[n:]
		field, wire := int(tag>>3), int(tag&7)
		var v uint64
		var data []byte
		switch wire {
		case wireVarint:
			v, n = binary.Uvarint(b)
			if n <= 0 {
				return errTruncated
			}
			b = b[n:]
		case wireFixed64:
			if len(b) < 8 {
				return errTruncated
			}
			v, b = binary.LittleEndian.Uint64(b), b[8:]
		case wireFixed32:
			if len(b) < 4 {
				return errTruncated
			}
			v, b = uint64(binary.LittleEndian.Uint32(b)), b[4:]
		case wireBytes:
			l, n := binary.Uvarint(b)
			if n <= 0 || l > uint64(len(b)-n) {
				return errTruncated
			}
			data, b = b[n:n+int(l)], b[n+int(l):]
		default:
			return fmt.Errorf("protobuf wire type %d is not one a response uses", wire)
		}
		if err := fn(field, wire, v, data); err != nil {
			return err
		}
	}
	return nil
}
