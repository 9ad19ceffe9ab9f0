// Package loop is the agentic loop: ask the model, run the tools it calls,
// hand back their results, and repeat until it stops calling tools or the
// turn limit is reached.
//
// Tool calls of one assistant message that are concurrency-safe run at the
// same time (reads, Agent calls: at most maxParallelCalls at once,
// a call waiting on a subagent or a person giving its place up); the others run alone, in order.
// Results always go back in call order. A tool failure, an input that
// violates the tool's schema, or a permission denial becomes an is_error
// tool_result and the loop carries on, so the model can correct itself.
//
// The loop knows tools only through the tool package: subagents and other
// runtime services plug in as tools and through Config's hooks, and this
// package never imports them.
package loop
