// Package openai adapts the OpenAI Chat Completions API, through the official
// Go SDK (github.com/openai/openai-go/v3), to cadre's llm.Model: it maps
// llm.Request onto a streamed chat completion and the streamed chunks back
// onto llm events and a complete llm.Response.
//
// Besides api.openai.com it serves every OpenAI-compatible server (vLLM,
// Ollama, llama.cpp, LM Studio, DeepSeek, Qwen's compatible mode) given a
// base URL: such a server needs no API key, gets max_tokens rather than
// max_completion_tokens, and may stream its reasoning as reasoning_content,
// which becomes a thinking block.
//
// The adapter never retries (the SDK's own retries are off); it reports
// failures as *llm.Error so the caller's retry policy can tell a 429 or a cut
// stream from a bad request.
package openai
