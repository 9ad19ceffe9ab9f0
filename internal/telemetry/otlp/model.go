package otlp

import (
	"math"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// The OTLP messages of a trace export request
// (opentelemetry/proto/collector/trace/v1/trace_service.proto and the
// trace, resource and common messages it includes), with the fields an
// exporter sets. The JSON tags are OTLP/JSON's names; json.go gives the
// types whose JSON form differs from encoding/json's (ids in hex, 64-bit
// integers as strings, AnyValue's one-of).

type exportRequest struct {
	ResourceSpans []*resourceSpans `json:"resourceSpans,omitempty"`
}

type resourceSpans struct {
	Resource   *resourceMsg  `json:"resource,omitempty"`
	ScopeSpans []*scopeSpans `json:"scopeSpans,omitempty"`
	SchemaURL  string        `json:"schemaUrl,omitempty"`
}

type resourceMsg struct {
	Attributes []keyValue `json:"attributes,omitempty"`
}

type scopeSpans struct {
	Scope     *scopeMsg `json:"scope,omitempty"`
	Spans     []*span   `json:"spans,omitempty"`
	SchemaURL string    `json:"schemaUrl,omitempty"`
}

type scopeMsg struct {
	Name       string     `json:"name,omitempty"`
	Version    string     `json:"version,omitempty"`
	Attributes []keyValue `json:"attributes,omitempty"`
}

type span struct {
	TraceID                hexID      `json:"traceId,omitempty"`
	SpanID                 hexID      `json:"spanId,omitempty"`
	TraceState             string     `json:"traceState,omitempty"`
	ParentSpanID           hexID      `json:"parentSpanId,omitempty"`
	Flags                  uint32     `json:"flags,omitempty"`
	Name                   string     `json:"name,omitempty"`
	Kind                   int32      `json:"kind,omitempty"`
	StartTimeUnixNano      uint64     `json:"startTimeUnixNano,omitempty,string"`
	EndTimeUnixNano        uint64     `json:"endTimeUnixNano,omitempty,string"`
	Attributes             []keyValue `json:"attributes,omitempty"`
	DroppedAttributesCount uint32     `json:"droppedAttributesCount,omitempty"`
	Events                 []event    `json:"events,omitempty"`
	DroppedEventsCount     uint32     `json:"droppedEventsCount,omitempty"`
	Links                  []link     `json:"links,omitempty"`
	DroppedLinksCount      uint32     `json:"droppedLinksCount,omitempty"`
	Status                 *status    `json:"status,omitempty"`
}

type event struct {
	TimeUnixNano           uint64     `json:"timeUnixNano,omitempty,string"`
	Name                   string     `json:"name,omitempty"`
	Attributes             []keyValue `json:"attributes,omitempty"`
	DroppedAttributesCount uint32     `json:"droppedAttributesCount,omitempty"`
}

type link struct {
	TraceID                hexID      `json:"traceId,omitempty"`
	SpanID                 hexID      `json:"spanId,omitempty"`
	TraceState             string     `json:"traceState,omitempty"`
	Attributes             []keyValue `json:"attributes,omitempty"`
	DroppedAttributesCount uint32     `json:"droppedAttributesCount,omitempty"`
	Flags                  uint32     `json:"flags,omitempty"`
}

type status struct {
	Message string `json:"message,omitempty"`
	Code    int32  `json:"code,omitempty"`
}

type keyValue struct {
	Key   string   `json:"key"`
	Value anyValue `json:"value"`
}

// anyValue is one of AnyValue's cases, by its OTLP field number (0: the
// empty value).
type anyValue struct {
	field int
	s     string
	b     bool
	i     int64
	d     float64
	bytes []byte
	list  []anyValue // field 5, an ArrayValue's values
	kvs   []keyValue // field 6, a KeyValueList's values
}

// The AnyValue field numbers.
const (
	fieldString = 1
	fieldBool   = 2
	fieldInt    = 3
	fieldDouble = 4
	fieldArray  = 5
	fieldKVList = 6
	fieldBytes  = 7
)

// The span flags' bits past the W3C trace flags: the exporter always knows
// whether a span's parent is remote.
const (
	flagHasIsRemote = 0x100
	flagIsRemote    = 0x200
)

// newRequest groups spans by resource, then by instrumentation scope, in
// the order they first appear.
func newRequest(spans []sdktrace.ReadOnlySpan) *exportRequest {
	type scopeKey struct {
		r  attribute.Distinct
		is instrumentation.Scope
	}
	req := &exportRequest{}
	byResource := map[attribute.Distinct]*resourceSpans{}
	byScope := map[scopeKey]*scopeSpans{}
	for _, sd := range spans {
		if sd == nil {
			continue
		}
		res := sd.Resource()
		rk := res.Equivalent()
		rs := byResource[rk]
		if rs == nil {
			rs = &resourceSpans{SchemaURL: res.SchemaURL()}
			if res != nil {
				rs.Resource = &resourceMsg{Attributes: iterValues(res.Iter())}
			}
			byResource[rk] = rs
			req.ResourceSpans = append(req.ResourceSpans, rs)
		}
		is := sd.InstrumentationScope()
		sk := scopeKey{rk, is}
		ss := byScope[sk]
		if ss == nil {
			ss = &scopeSpans{SchemaURL: is.SchemaURL}
			if is != (instrumentation.Scope{}) {
				ss.Scope = &scopeMsg{Name: is.Name, Version: is.Version, Attributes: iterValues(is.Attributes.Iter())}
			}
			byScope[sk] = ss
			rs.ScopeSpans = append(rs.ScopeSpans, ss)
		}
		ss.Spans = append(ss.Spans, newSpan(sd))
	}
	return req
}

func newSpan(sd sdktrace.ReadOnlySpan) *span {
	sc := sd.SpanContext()
	tid, sid := sc.TraceID(), sc.SpanID()
	st := sd.Status()
	s := &span{
		TraceID:                tid[:],
		SpanID:                 sid[:],
		TraceState:             sc.TraceState().String(),
		Flags:                  spanFlags(sc.TraceFlags(), sd.Parent()),
		Name:                   sd.Name(),
		Kind:                   spanKind(sd.SpanKind()),
		StartTimeUnixNano:      unixNano(sd.StartTime().UnixNano()),
		EndTimeUnixNano:        unixNano(sd.EndTime().UnixNano()),
		Attributes:             keyValues(sd.Attributes()),
		DroppedAttributesCount: clamp32(sd.DroppedAttributes()),
		DroppedEventsCount:     clamp32(sd.DroppedEvents()),
		DroppedLinksCount:      clamp32(sd.DroppedLinks()),
		Status:                 &status{Message: st.Description, Code: statusCode(st.Code)},
	}
	if psid := sd.Parent().SpanID(); psid.IsValid() {
		s.ParentSpanID = psid[:]
	}
	for _, e := range sd.Events() {
		s.Events = append(s.Events, event{
			TimeUnixNano:           unixNano(e.Time.UnixNano()),
			Name:                   e.Name,
			Attributes:             keyValues(e.Attributes),
			DroppedAttributesCount: clamp32(e.DroppedAttributeCount),
		})
	}
	for _, l := range sd.Links() {
		ltid, lsid := l.SpanContext.TraceID(), l.SpanContext.SpanID()
		s.Links = append(s.Links, link{
			TraceID:                ltid[:],
			SpanID:                 lsid[:],
			TraceState:             l.SpanContext.TraceState().String(),
			Attributes:             keyValues(l.Attributes),
			DroppedAttributesCount: clamp32(l.DroppedAttributeCount),
			Flags:                  spanFlags(l.SpanContext.TraceFlags(), l.SpanContext),
		})
	}
	return s
}

// spanFlags are the W3C trace flags with the bits that say whether the
// parent (for a link: the linked span) is remote.
func spanFlags(tf trace.TraceFlags, parent trace.SpanContext) uint32 {
	f := uint32(tf) | flagHasIsRemote
	if parent.IsRemote() {
		f |= flagIsRemote
	}
	return f
}

// spanKind is OTLP's SpanKind; its numbers are OpenTelemetry's.
func spanKind(k trace.SpanKind) int32 {
	switch k {
	case trace.SpanKindInternal, trace.SpanKindServer, trace.SpanKindClient, trace.SpanKindProducer, trace.SpanKindConsumer:
		return int32(k)
	}
	return 0 // SPAN_KIND_UNSPECIFIED
}

// statusCode is OTLP's StatusCode: 0 unset, 1 ok, 2 error.
func statusCode(c codes.Code) int32 {
	switch c {
	case codes.Ok:
		return 1
	case codes.Error:
		return 2
	}
	return 0
}

func unixNano(ns int64) uint64 { return uint64(max(0, ns)) }

func clamp32(n int) uint32 {
	switch {
	case n < 0:
		return 0
	case int64(n) > math.MaxUint32:
		return math.MaxUint32
	}
	return uint32(n)
}

func iterValues(it attribute.Iterator) []keyValue {
	if it.Len() == 0 {
		return nil
	}
	out := make([]keyValue, 0, it.Len())
	for it.Next() {
		kv := it.Attribute()
		out = append(out, keyValue{Key: string(kv.Key), Value: value(kv.Value)})
	}
	return out
}

func keyValues(attrs []attribute.KeyValue) []keyValue {
	if len(attrs) == 0 {
		return nil
	}
	out := make([]keyValue, len(attrs))
	for i, kv := range attrs {
		out[i] = keyValue{Key: string(kv.Key), Value: value(kv.Value)}
	}
	return out
}

// value is v as an AnyValue; a slice is an ArrayValue, a map a
// KeyValueList, and a type this package does not know is the string
// "INVALID", as the official exporter sends it.
func value(v attribute.Value) anyValue {
	switch v.Type() {
	case attribute.EMPTY:
		return anyValue{}
	case attribute.BOOL:
		return anyValue{field: fieldBool, b: v.AsBool()}
	case attribute.INT64:
		return anyValue{field: fieldInt, i: v.AsInt64()}
	case attribute.FLOAT64:
		return anyValue{field: fieldDouble, d: v.AsFloat64()}
	case attribute.STRING:
		return anyValue{field: fieldString, s: v.AsString()}
	case attribute.BYTESLICE:
		return anyValue{field: fieldBytes, bytes: v.AsByteSlice()}
	case attribute.BOOLSLICE:
		return array(v.AsBoolSlice(), func(b bool) anyValue { return anyValue{field: fieldBool, b: b} })
	case attribute.INT64SLICE:
		return array(v.AsInt64Slice(), func(i int64) anyValue { return anyValue{field: fieldInt, i: i} })
	case attribute.FLOAT64SLICE:
		return array(v.AsFloat64Slice(), func(d float64) anyValue { return anyValue{field: fieldDouble, d: d} })
	case attribute.STRINGSLICE:
		return array(v.AsStringSlice(), func(s string) anyValue { return anyValue{field: fieldString, s: s} })
	case attribute.SLICE:
		return array(v.AsSlice(), value)
	case attribute.MAP:
		return anyValue{field: fieldKVList, kvs: keyValues(v.AsMap())}
	}
	return anyValue{field: fieldString, s: "INVALID"}
}

func array[T any](vs []T, conv func(T) anyValue) anyValue {
	out := make([]anyValue, len(vs))
	for i, v := range vs {
		out[i] = conv(v)
	}
	return anyValue{field: fieldArray, list: out}
}
