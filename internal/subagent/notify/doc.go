// Package notify announces a run: its task_* system events on the bus — a
// start, progress, a foreground run's end — and a background run's
// notification, the <task-notification> queued for the agent that
// started it with the task_notification line published once it is
// queued (a deliver.Notice: internal/subagent/deliver decides whether it
// goes out).
//
//	events.go        Publisher: the task_* events, typed (event.Task); package
//	                 output shapes their stream-json lines
//	notification.go  Notification, ShellNotification: what a background run's
//	                 end tells the agent that started it
//	prompts/         the notification's model-facing text
package notify
