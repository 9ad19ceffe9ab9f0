// Package anthropic adapts the Anthropic Messages API to llm.Model through the
// official Go SDK (github.com/anthropics/anthropic-sdk-go/v2). It streams every
// call, maps cadre's provider-neutral messages to the API's content blocks
// and back (thinking signatures are returned unchanged, as the API demands),
// marks prompt-cache breakpoints so repeated prefixes are served from cache,
// and turns every failure into an *llm.Error whose Kind tells the caller
// whether a retry makes sense.
//
// The adapter never retries by itself: the SDK's retries are switched off,
// because the retry policy (backoff, retry-after, what to tell the user)
// belongs to the caller, which also has to discard the deltas of a failed
// attempt.
package anthropic
