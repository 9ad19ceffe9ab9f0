package subagent

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/cadre-dev/cadre/internal/lane"
	"github.com/cadre-dev/cadre/internal/loop"
	"github.com/cadre-dev/cadre/internal/mailbox"
	"github.com/cadre-dev/cadre/internal/runlog"
	"github.com/cadre-dev/cadre/internal/runner"
	"github.com/cadre-dev/cadre/internal/session"
	"github.com/cadre-dev/cadre/internal/shelltask"
	"github.com/cadre-dev/cadre/internal/task"
	"github.com/cadre-dev/cadre/internal/worktree"
	"github.com/cadre-dev/cadre/llm"
)

// liveTask is a child run in this process, and what profiles may read of it.

// Why a run was cancelled decides the status it ends with.
var (
	errStopped        = errors.New("stopped with TaskStop")
	errTimedOut       = errors.New("subagents.runTimeoutSeconds elapsed")
	errSessionStopped = errors.New("the session that started it was stopped")
)

// runTimeoutError ends a run past its time limit; it is an errTimedOut,
// so the run ends with status timeout. byCall says the limit came with the
// call (sessions_spawn's runTimeoutSeconds), not from the settings.
type runTimeoutError struct {
	after  time.Duration
	byCall bool
}

func (e runTimeoutError) Error() string {
	if e.byCall {
		return fmt.Sprintf("runTimeoutSeconds (%s) of sessions_spawn elapsed", e.after)
	}
	return fmt.Sprintf("subagents.runTimeoutSeconds (%s) elapsed", e.after)
}

func (e runTimeoutError) Is(target error) bool { return target == errTimedOut }

// liveTask is a child run in this process, foreground or background.
type liveTask struct {
	id              string // agent id = task id = child session id
	parentAgentID   string // who gets the notification ("" = main agent)
	parentSessionID string
	rootSessionID   string
	toolUseID       string // the call this run answers (Agent, or SendMessage for a resumed agent)
	agentCall       string // the Agent call that first launched the agent
	agentType       string
	kind            task.Kind // local_agent, or remote_agent for a definition with url
	description     string
	prompt          string
	name            string
	outputFile      string
	depth           int
	started         time.Time
	group           *Group
	cleanup         string // the run's own cleanup ("" = the settings')

	cancel context.CancelCauseFunc
	done   chan struct{} // closed once the terminal state is recorded

	// elsewhere marks the stand-in of a run dispatched to another node
	// (dispatch.go); detached marks a dispatched run executing here,
	// whose parent is in another process: its end is recorded, and the
	// stand-in delivers it.
	elsewhere, detached bool

	// laneHeld says the run holds its lane slot: launch took it and
	// recorded the run running in the same write as its start, or the
	// lane handed it one (start); execute gives it back.
	laneHeld bool
	// queued says launch found no free slot: the run waits in the lane.
	// Set before the run is shared, never changed.
	queued bool
	// inbox is the run's side of the Mailbox (nil without one): opened
	// at launch, closed by execute at the run's end.
	inbox *mailbox.Inbox
	// sessionEnd is the child session's end, held back by the session
	// (session.Session.Hold) for finish to write together with the
	// task's (joint.go); nil when the session recorded it itself.
	sessionEnd func(*session.Info) error

	mu sync.Mutex
	// phase is where the run is in its life in this process (runPhase).
	phase       runPhase
	bgRequested chan struct{}  // closed when someone asks a foreground waiter to let go
	final       *runner.Result // the run's result, once it ended
	status      task.Status    // its terminal status, once it ended
	cause       error          // why the run's context ended, if it did (finish)
	endedAt     time.Time      // when final was set
	text        string         // newest assistant text: the partial result
	tokens      int64
	toolUses    int
	lastTool    string
	// waiting says the run waits for a lane slot (queued at launch and
	// not started yet): Run lists it pending, not running.
	waiting bool
	// out is the output file, opened only once the run is (or becomes) a
	// background task: a foreground run's output goes to its caller, so
	// until then its log is kept in early (capped at maxEarlyOutput),
	// which spares every foreground spawn a file creation.
	out *os.File
	// outErr is why the output file stopped taking the log (a full
	// disk): readers are told, and the transcript has it all.
	outErr error
	filed  bool // the output file was opened: the log is there, not in early
	early  strings.Builder
	// announced is the normalised announce text (subagents.announce:
	// summarize); skip is set when the child declined with ANNOUNCE_SKIP.
	announced string
	skip      bool
	// tree is what became of the run's worktree, if it had one.
	tree *worktree.Outcome
	// slot is the lane place of a run moved to the background.
	slot *lane.Slot

	// closing is set, under Service.mu, once the run takes no more
	// messages: SendMessage then resumes the agent instead of queueing.
	closing bool

	// The delivery of the run's end (deliver.go), under Service.delivery:
	// how far it got, the readers watching for it, and the notification
	// handed to them.
	notice     noticeState
	watchers   int
	handedOver *pendingNotice
	// marked is closed when the notification's MarkNotified has answered
	// (noticeMarking).
	marked chan struct{}
}

// runPhase is where a run is in its life in this process. It only moves
// forward: a foreground run ends, or moves to the background (toBackground)
// and ends there; a background run ends. Whether it ended in the
// foreground or the background decides who delivers its result
// (deliver.go). What its task record says — pending, running, the terminal
// status — follows the task lifecycle (task.Lifecycle); the phase is what
// only this process knows.
type runPhase int

const (
	phaseForeground      runPhase = iota // its caller waits for it
	phaseBackground                      // a background task: recorded, notified at its end
	phaseEndedForeground                 // its end is decided; the caller's reply has the result
	phaseEndedBackground                 // its end is decided and recorded (or being recorded)
)

// phaseOf is the phase a run starts in.
func phaseOf(background bool) runPhase {
	if background {
		return phaseBackground
	}
	return phaseForeground
}

func (p runPhase) background() bool { return p == phaseBackground || p == phaseEndedBackground }
func (p runPhase) ended() bool      { return p >= phaseEndedForeground }

// end is the phase of the run once it ended, from p.
func (p runPhase) end() runPhase {
	if p.background() {
		return phaseEndedBackground
	}
	return phaseEndedForeground
}

func (t *liveTask) isBackground() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.phase.background()
}

// ended reports whether the run's end is decided: its terminal status is
// being recorded or has been.
func (t *liveTask) ended() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.phase.ended()
}

// requestBackground asks the foreground waiter to let the run go on in the
// background (S-L2). It reports whether there was a foreground waiter to
// ask.
func (t *liveTask) requestBackground() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.phase != phaseForeground {
		return false
	}
	select {
	case <-t.bgRequested:
		return false
	default:
		close(t.bgRequested)
		return true
	}
}

// observe follows the child's messages: the partial result, progress
// figures and the readable output file.
func (t *liveTask) observe(s loop.Step) {
	if s.Compaction {
		return // a summary of what the log already holds
	}
	if s.Response != nil {
		// It spent: the next result lists it. Deferred first, so it runs
		// once t.mu is let go (the group takes t.mu under its own lock).
		defer t.group.touched(t)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	var b strings.Builder
	runlog.Message(&b, s.Message, s.Response != nil)
	if s.Response != nil {
		t.tokens += s.Response.Usage.Total()
		if text := strings.TrimSpace(s.Message.Text()); text != "" {
			t.text = text
		}
		for _, u := range s.Message.ToolUses() {
			t.toolUses++
			t.lastTool = u.Name
		}
	}
	switch {
	case b.Len() == 0:
	case t.out != nil:
		if _, err := t.out.WriteString(b.String()); err != nil {
			t.out.Close()
			t.out, t.outErr = nil, err
		}
	case t.outErr != nil:
		// The output file failed; the transcript keeps the run.
	case !t.phase.ended():
		if t.early.Len()+b.Len() > maxEarlyOutput {
			kept := t.early.String()
			kept = kept[min(len(kept), len(kept)+b.Len()-maxEarlyOutput/2):]
			t.early.Reset()
			t.early.WriteString("…\n" + kept)
		}
		t.early.WriteString(b.String())
	}
}

// maxEarlyOutput caps the log a run keeps in memory (a foreground run's, or
// a background run's whose transcript is its output file); beyond it the
// oldest half goes.
const maxEarlyOutput = 1 << 20

// startOutput opens the output file and writes the log kept so far; the
// caller holds t.mu.
func (t *liveTask) startOutput() error {
	if t.filed || t.outputFile == "" {
		return nil // filed already, or its transcript in a store is its output
	}
	f, err := runlog.OpenFile(t.outputFile)
	if err != nil {
		return err
	}
	if t.early.Len() > 0 {
		if _, err := f.WriteString(t.early.String()); err != nil {
			f.Close()
			return fmt.Errorf("task output file: %w", err)
		}
		t.early = strings.Builder{}
	}
	t.out, t.filed = f, true
	return nil
}

// outputTail is the last n bytes of the run's log so far: the output
// file's, or, while the run is in the foreground, the one kept in memory.
func (t *liveTask) outputTail(n int) string {
	t.mu.Lock()
	if !t.filed {
		s := t.early.String()
		t.mu.Unlock()
		if len(s) > n {
			s = "…" + s[len(s)-n:]
		}
		return s
	}
	failed := t.outErr
	t.mu.Unlock()
	tail := runlog.Tail(t.outputFile, n)
	if t.kind == task.KindLocalBash {
		tail = shelltask.RawTail(t.outputFile, n)
	}
	if failed != nil {
		tail += fmt.Sprintf("\n… (the output file stopped taking the log: %v; the session's transcript has all of it)\n", failed)
	}
	return tail
}

// snapshot returns the progress figures.
func (t *liveTask) snapshot() (text string, tokens int64, toolUses int, lastTool string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.text, t.tokens, t.toolUses, t.lastTool
}

// statusOf maps how a run ended to a task status.
func statusOf(res *runner.Result, cause error) task.Status {
	switch {
	case res.Err == nil:
		return task.StatusCompleted
	case errors.Is(cause, errTimedOut):
		return task.StatusTimeout
	case errors.Is(res.Err, context.Canceled) || errors.Is(res.Err, context.DeadlineExceeded):
		return task.StatusKilled
	}
	return task.StatusFailed
}

// worktree returns what became of the run's worktree (nil without one).
func (t *liveTask) worktree() *worktree.Outcome {
	if t == nil {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.tree
}

// RunInfo is what a run is, fixed when it is launched. Profiles read a run
// through about and end, never through its fields.
type RunInfo struct {
	ID, AgentType, Name, Description, Prompt, OutputFile string
	// Queued says the run waited for a place in the lane when launched.
	Queued bool
	// RootSessionID is the main session of its tree; ToolUseID the call
	// that launched it.
	RootSessionID, ToolUseID string
}

func (t *liveTask) about() RunInfo {
	return RunInfo{ID: t.id, AgentType: t.agentType, Name: t.name, Description: t.description, Prompt: t.prompt, OutputFile: t.outputFile, Queued: t.queued,
		RootSessionID: t.rootSessionID, ToolUseID: t.toolUseID}
}

// end reports how the run ended, once its end is decided (ok): its result
// and status.
func (t *liveTask) end() (res *runner.Result, status task.Status, ok bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.final, t.status, t.phase.ended()
}

// timedOut reports why the run ended past its time limit, if it did: the
// limit that elapsed, which its result's error ("context deadline
// exceeded") does not name.
func (t *liveTask) timedOut() (error, bool) {
	if t == nil {
		return nil, false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.cause, t.status == task.StatusTimeout && t.cause != nil
}

// over reports whether the run is over: its end recorded and announced,
// and the service no longer tracking it.
func (t *liveTask) over() bool {
	select {
	case <-t.done:
		return true
	default:
		return false
	}
}

// taskKind is the run's task kind: local_agent unless it was set.
func (t *liveTask) taskKind() task.Kind {
	if t.kind == "" {
		return task.KindLocalAgent
	}
	return t.kind
}

// asTask describes the run as a task record, for a run that has none (it
// ran in the foreground).
func (t *liveTask) asTask() task.Task {
	t.mu.Lock()
	defer t.mu.Unlock()
	rec := task.Task{ID: t.id, Kind: t.taskKind(), Agent: t.agentType, Name: t.name, Description: t.description, Status: t.status, OutputFile: t.outputFile, Result: t.text}
	if t.final != nil {
		if r := strings.TrimSpace(t.final.Result); r != "" {
			rec.Result = r
		}
		if t.final.Err != nil {
			rec.Error = t.final.Err.Error()
		}
	}
	return rec
}

// endSession finishes a child session whose run ended before it could
// finish it itself (a failed start, a run stopped in the lane). A failure is
// logged, not returned: the caller already holds the error that matters.
func (s *Service) endSession(ctx context.Context, sess *session.Session, status session.Status) {
	if err := sess.Finish(context.WithoutCancel(ctx), status, llm.Usage{}, llm.Cost{}, 0); err != nil {
		s.log.WarnContext(ctx, "record the end of a child session", "session_id", sess.Info.ID, "status", status, "err", err)
	}
}
