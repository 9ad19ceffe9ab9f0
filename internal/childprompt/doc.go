// Package childprompt holds the prompt text around subagents: a child's
// system prompt (its definition's prompt, the environment, a note on its
// role), the context block it opens with (S-E4), and the block the main
// agent sees each turn naming the agents it may delegate to and the
// session's background tasks (S-A5).
//
// The text lives in the embedded .md templates beside this file.
package childprompt
