// Package frame keeps a child's text data when it reaches its parent
// (DESIGN §17). Text a child produces — its result, its output so far, its
// progress, an announce — is model output, and reaches its parent inside
// the runtime's own tags (<task-notification>, <result>, <task_metadata>,
// <output>, <task_result>). Two things keep it data: every such text goes
// through Escape, so it can neither close the runtime's tags nor open tags
// of its own, and the parent is told, by Untrusted, that it carries no user
// authority.
package frame
