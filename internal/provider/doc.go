// Package provider turns a model name into a ready llm.Model: it parses
// "provider:model" (and OpenCode's "provider/model"), expands aliases,
// infers the provider of a bare id, builds the adapter (Anthropic, OpenAI or
// an OpenAI-compatible server, the scripted model), and wraps it in the retry
// policy. It also holds the pricing table that turns usage into dollars.
package provider
