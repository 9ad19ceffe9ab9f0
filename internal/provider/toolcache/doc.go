// Package toolcache keeps a provider adapter's encoding of tool sets. A
// conversation sends the same tool definitions on every request, and the
// SDKs encode parameters by reflection: an adapter encodes each set once,
// through a Cache, and hands the SDK the bytes.
package toolcache
