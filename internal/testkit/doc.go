// Package testkit holds test doubles that speak real wire protocols: fake
// Anthropic Messages and OpenAI Chat Completions servers on net/http/httptest
// that stream their scripted replies as the real services do (SSE), record
// every request, and inject faults (HTTP errors, retry-after, cut streams).
//
// Both servers take the same Reply script, so one test can run against
// either provider.
package testkit
