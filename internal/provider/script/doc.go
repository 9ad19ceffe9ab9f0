// Package script is cadre's scripted model: a model that answers from a
// scenario file instead of a language model. It is a demo and test fixture,
// and an honest part of the product: with it, cadre runs offline, and every
// test of the loop, the subagent system and the protocols is deterministic.
// It does not imitate a model's judgement; it says exactly what the file
// says.
//
// Select it with the model name "script:path/to/scenario.yaml" (a relative
// path resolves against the working directory).
//
// # Scenario files
//
// A scenario is a YAML file:
//
//	model: scripted-demo          # optional: the model name in responses (default "scripted")
//	agents:
//	  main:                       # the main session's agent
//	    - text: "Let me look at the code."
//	      tool_use:
//	        - name: Read
//	          input: {file_path: src/app.py}
//	        - name: Grep
//	          input: {pattern: TODO}
//	      usage: {input_tokens: 1200, output_tokens: 40}
//	    - text: "The file says: {{.LastToolResult}}"
//	  reviewer:                   # a subagent, by its agent name
//	    - thinking: "Check style first."
//	      text: "Looks fine."
//	      delay: 50ms
//	    - error: {kind: overloaded, message: "try later", times: 2, retry_after: 1s}
//	      text: "recovered"
//	  "*":                        # optional: any agent not listed above
//	    - text: "Done: {{.Prompt}}"
//
// # Which answer is given
//
// Answers are keyed by agent and turn, not by a global order, because
// subagents run concurrently and the order in which their calls reach the
// model is not fixed. The agent is the request's agent name ("main" for the
// main session), or "*" when that agent is not listed. The turn is the number
// of assistant messages already in the conversation: the first call of a
// conversation gets the agent's first entry, the call after one answer (and
// its tool results) gets the second, and so on. The same rule holds after a
// session is resumed, and for each of several parallel runs of one agent.
//
// (A context summary counts for the replies it stands for, so a compacted
// conversation goes on at the right turn.)
//
// A call beyond the agent's last entry (unless that entry says repeat), or
// for an agent that is not listed when there is no "*", fails with a bad_request error (not retried) that
// names the file, the agent and the turn, for example
//
//	scenario demo.yaml: agent "reviewer" has no turn 3 (it scripts 2)
//
// # Keys of a turn
//
//	text       the answer's text; streamed word by word
//	thinking   a thinking block, streamed before the text
//	tool_use   a list of tool calls, each {name, input}; input is a mapping
//	           (the tool's JSON input). Each call gets a fresh unique id, and
//	           the stop reason is tool_use.
//	usage      token counts to report: input_tokens, output_tokens,
//	           cache_read_input_tokens, cache_creation_input_tokens. Without
//	           it the counts are estimated at about four characters a token
//	           (input from the system prompt and the messages, output from
//	           the answer), and are at least 1.
//	delay      a duration (50ms, 2s) to wait before answering; cancelling the
//	           request ends the wait.
//	error      a failure, see below.
//
// A turn needs at least one of text, thinking, tool_use or error, unless it
// chooses (below).
//
//	choose     a list of alternatives, each an answer (the keys above) with
//	           an optional when; the turn has no answer keys of its own
//	repeat     true on an agent's last turn: every call past it gets it too
//
// # Choosing by the conversation
//
// A turn with choose answers with the first alternative whose when (a
// template, below) renders true; an alternative without when always
// applies. when must render true or false (spaces aside): anything else
// fails the call, as does a turn none of whose alternatives applies, so a
// typo never passes as false. With repeat on the last turn, an agent loops
// on what its tools return — a worker that lists a shared task list,
// claims the first free task, completes it and lists again, until the
// list holds nothing open:
//
//	"*":
//	  - tool_use: [{name: TaskList}]
//	  - repeat: true
//	    choose:
//	      - when: '{{match "It is yours" .LastToolResult}}'
//	        tool_use: [{name: TaskUpdate, input: {taskId: '{{find "^Updated task #(\\d+)" .LastToolResult}}', status: completed}}]
//	      - when: '{{match "(?m)^#\\d+ \\[pending\\] [^()\\[\\]\\n]*$" .LastToolResult}}'
//	        tool_use: [{name: TaskUpdate, input: {taskId: '{{find "(?m)^#(\\d+) \\[pending\\] [^()\\[\\]\\n]*$" .LastToolResult}}', status: in_progress}}]
//	      - when: '{{and (match "^#" .LastToolResult) (not (match "\\[(pending|in_progress)\\]" .LastToolResult))}}'
//	        text: "Nothing left."
//	      - tool_use: [{name: TaskList}]
//
// # Templates
//
// text, thinking and the string values of a tool's input are Go templates
// (text/template's syntax and functions; internal/tmplexec runs them) that see:
//
//	{{.Prompt}}          the text of the first user message
//	{{.LastUserText}}    the text of the newest user message that has text
//	                     (messages holding only tool results are skipped)
//	{{.LastToolResult}}  the text of the newest tool result, "" if none
//	{{.ToolResults}}     the texts of the newest tool results, in call order
//	                     ({{index .ToolResults 1}}, {{range .ToolResults}}…)
//	{{.Agent}}           the agent answering
//	{{.Turn}}            the turn being answered, counting from 1
//
// Besides text/template's builtins (and, not, eq, index, printf, …) a
// template may call
//
//	match PATTERN S      whether the regular expression matches S
//	find PATTERN S       the first match in S, or its first group when the
//	                     pattern has one; "" when none
//
// with Go's (RE2) syntax, linear in S; a pattern written as a literal is
// checked at load.
//
// # Failures
//
//	error: {kind: rate_limit, message: "slow down", times: 2, retry_after: 1s}
//
// kind is one of rate_limit, overloaded, server, stream_cut, auth and
// bad_request; the first four are the transient kinds a caller retries.
// message defaults to "scripted <kind> failure"; retry_after is reported as
// the provider's requested wait.
//
// If the turn also has an answer (text, thinking or tool_use), the first
// times attempts (default 1) at that turn of that conversation fail and the
// next one answers, so a caller's retry succeeds. A conversation is known by
// its agent and its first user message, so runs of one agent with the same
// prompt share their count. A turn with an error and no answer fails every
// time.
//
// A stream_cut failure first streams part of the text, then fails, like a
// connection dropped in the middle of a message.
//
// # Validation
//
// A scenario is checked when it is loaded, and every problem is reported
// with its line: unknown keys (a typo in a fixture must not pass silently),
// a turn with nothing in it, a tool call without a name, an input that is
// not a mapping, a bad duration, an unknown error kind, an agent with no
// turns, a template that does not parse or names a field that does not
// exist. For example
//
//	demo.yaml:12: turn 2 of the agent at line 3: unknown key (did you mean tool_use?)
//
// A problem never repeats what the file holds — a key, a value, an agent
// name — only where it is and what the format wanted: a scenario path can
// name any readable file, and error texts reach logs and model context.
// Only a regular file of at most 4 MiB is read.
package script
