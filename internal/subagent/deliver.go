package subagent

import (
	"context"

	"github.com/cadre-dev/cadre/internal/queue"
)

// A background run's result reaches the model exactly once (S-N1). Two
// kinds of party can deliver it: the run's notification, queued for the
// agent that started it, and a tool that shows the model the run's end —
// TaskOutput (claude profile), task_output, agent_send's wait and
// wait_async_results (harness profile). The gateway's sessions_spawn is
// only ever notified, and OpenCode's task always waits in the foreground,
// so those profiles deliver through the notification alone. Every party
// goes through this file: the notification through post, a tool through
// claim. The task record's notified flag picks the first; delivery (a
// lock) makes "mark notified, then queue" one step for a tool, so a tool
// that lost the flag either finds the notification still queued and
// withdraws it, or knows the model has read it.

// claim is called by a tool about to show the model how a task ended. It
// reports whether the tool should include the result: yes when the tool
// is first (no notification will be sent) or when the notification still
// waits in the queue (it is withdrawn); no when the notification has
// already been taken by the agent.
func (s *Service) claim(ctx context.Context, id string) bool {
	s.delivery.Lock()
	defer s.delivery.Unlock()
	won, err := s.cfg.Tasks.MarkNotified(context.WithoutCancel(ctx), id)
	if err != nil || won {
		// No record to mark (a run that ended in the foreground), or the
		// first to deliver: the tool shows the result. Shown twice is
		// better than never, should the store fail.
		return true
	}
	return s.cfg.Queue.Withdraw(id)
}

// post queues a task's notification unless a tool claimed the result
// first; silent (ANNOUNCE_SKIP) takes the flag but queues nothing. It
// reports whether the notification went out.
func (s *Service) post(id string, e queue.Entry, silent bool) bool {
	s.delivery.Lock()
	defer s.delivery.Unlock()
	first, err := s.cfg.Tasks.MarkNotified(context.Background(), id)
	if err != nil || !first || silent {
		return false
	}
	s.cfg.Queue.Push(e)
	return true
}

// alreadyDelivered is what a tool says instead of a result the model has
// already been given by the task's notification.
const alreadyDelivered = "the result was already delivered to you in a <task-notification> message; it is not repeated here"
