package runs

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cadre-dev/cadre/internal/loop"
	"github.com/cadre-dev/cadre/internal/runlog"
	"github.com/cadre-dev/cadre/internal/runner"
	"github.com/cadre-dev/cadre/internal/session"
	"github.com/cadre-dev/cadre/internal/shelltask"
	"github.com/cadre-dev/cadre/internal/task"
)

// Info is what a run is, fixed when it is launched: set before the run is
// shared, never changed after. Profiles read a run through it.
type Info struct {
	ID              string // agent id = task id = child session id
	ParentAgentID   string // who gets the notification ("" = main agent)
	ParentSessionID string
	// RootSessionID is the main session of its tree.
	RootSessionID string
	// ToolUseID is the call this run answers (Agent, or SendMessage for a
	// resumed agent); AgentCall the Agent call that first launched the
	// agent.
	ToolUseID, AgentCall string
	AgentType            string
	Kind                 task.Kind // local_agent, remote_agent or local_bash
	Description, Prompt  string
	Name                 string // its SendMessage name, "" if none
	OutputFile           string
	Depth                int    // 1 for a child of the main agent
	Cleanup              string // the run's own cleanup ("" = the settings')
	// Queued says the run waited for a place in the lane when launched.
	Queued bool
}

// TaskKind is the run's task kind: local_agent unless it was set.
func (i Info) TaskKind() task.Kind {
	if i.Kind == "" {
		return task.KindLocalAgent
	}
	return i.Kind
}

// Live is a run in this process, foreground or background: its phase, its
// output so far and its figures, under one lock. What executes the run
// (the core) keeps its own state beside it.
type Live struct {
	Info

	group  *Group
	cancel context.CancelCauseFunc
	done   chan struct{} // closed once the terminal state is recorded (Retire)
	// started is when it started, or was launched while it waits. It is
	// read without the lock: the record of a move to the background,
	// written under it (ToBackground), names it.
	started atomic.Pointer[time.Time]

	mu sync.Mutex
	// phase is where the run is in its life in this process (Phase).
	phase       Phase
	bgRequested chan struct{}  // closed when someone asks a foreground waiter to let go
	final       *runner.Result // the run's result, once it ended
	recorded    *Recorded      // its session record as its end wrote it (SetRecorded)
	status      task.Status    // its terminal status, once it ended
	cause       error          // why the run's context ended, if it did
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
}

// Options are how a run starts its life in this process.
type Options struct {
	// Background starts it in the background phase.
	Background bool
	// Started is when it was launched.
	Started time.Time
	// Group owns it (nil only in tests that never retire it).
	Group *Group
	// Filed says its output file is written by someone else already (a
	// background shell's): the log is never kept in memory.
	Filed bool
}

// New returns the run info describes, not yet in any group.
func New(info Info, o Options) *Live {
	t := &Live{Info: info, group: o.Group, done: make(chan struct{}), bgRequested: make(chan struct{}),
		phase: PhaseOf(o.Background), filed: o.Filed}
	t.started.Store(&o.Started)
	return t
}

// SetCancel gives the run the cancel of its context; it is set before the
// run is shared.
func (t *Live) SetCancel(cancel context.CancelCauseFunc) { t.cancel = cancel }

// Cancel ends the run's context with cause.
func (t *Live) Cancel(cause error) { t.cancel(cause) }

// Done is closed once the run is over: its end recorded and announced,
// and its group no longer counting it.
func (t *Live) Done() <-chan struct{} { return t.done }

// Group is the group that owns the run.
func (t *Live) Group() *Group { return t.group }

// Retire takes the run out of its group and closes Done: the last step of
// its end.
func (t *Live) Retire() {
	t.group.remove(t.ID)
	close(t.done)
}

// Over reports whether the run is over (Done is closed).
func (t *Live) Over() bool {
	select {
	case <-t.done:
		return true
	default:
		return false
	}
}

// MarkQueued says launch found no free lane slot: the run waits in the
// lane. It is called before the run is shared.
func (t *Live) MarkQueued() {
	t.Queued = true
	t.mu.Lock()
	t.waiting = true
	t.mu.Unlock()
}

// Begin records that a run that waited for its lane slot starts now.
func (t *Live) Begin(at time.Time) {
	t.mu.Lock()
	t.started.Store(&at)
	t.waiting = false
	t.mu.Unlock()
	t.group.touched(t) // pending no more: the next result lists it
}

// Started is when the run started (or was launched, while it waits).
func (t *Live) Started() time.Time { return *t.started.Load() }

// IsBackground reports whether the run is (or ended as) a background task.
func (t *Live) IsBackground() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.phase.Background()
}

// Ended reports whether the run's end is decided: its terminal status is
// being recorded or has been.
func (t *Live) Ended() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.phase.Ended()
}

// Phase is where the run is in its life now.
func (t *Live) Phase() Phase {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.phase
}

// BackgroundRequested is closed when someone asks the foreground waiter
// to let the run go on in the background (RequestBackground).
func (t *Live) BackgroundRequested() <-chan struct{} { return t.bgRequested }

// RequestBackground asks the foreground waiter to let the run go on in the
// background (S-L2). It reports whether there was a foreground waiter to
// ask.
func (t *Live) RequestBackground() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.phase != PhaseForeground {
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

// ToBackground moves a foreground run to the background phase, unless it
// has ended (false) or is there already (true). Under the run's lock, so
// that it cannot end between the decision and the record, it opens the
// output file and calls commit, which records the move; either's error
// leaves the run in the foreground. commit must not call the run's
// methods that take its lock (Info and Started are free).
func (t *Live) ToBackground(commit func() error) (bool, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	switch t.phase {
	case PhaseEndedForeground, PhaseEndedBackground:
		return false, nil
	case PhaseBackground:
		return true, nil
	}
	// The task's output file exists before its record names it.
	if err := t.startOutput(); err != nil {
		return false, fmt.Errorf("its output file cannot be created: %w", err)
	}
	if err := commit(); err != nil {
		return false, fmt.Errorf("its task record cannot be written: %w", err)
	}
	t.phase = PhaseBackground
	if t.group != nil {
		t.group.launches.Add(1) // its task record is new
	}
	return true, nil
}

// Observe follows the child's messages: the partial result, progress
// figures and the readable output file.
func (t *Live) Observe(s loop.Step) {
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
	case !t.phase.Ended():
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

// OpenOutput opens the output file and writes the log kept so far.
func (t *Live) OpenOutput() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.startOutput()
}

// startOutput is OpenOutput; the caller holds t.mu.
func (t *Live) startOutput() error {
	if t.filed || t.OutputFile == "" {
		return nil // filed already, or its transcript in a store is its output
	}
	f, err := runlog.OpenFile(t.OutputFile)
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

// CloseOutput closes the output file if it is open (a launch that failed).
func (t *Live) CloseOutput() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.out != nil {
		t.out.Close()
		t.out = nil
	}
}

// OutputTail is the last n bytes of the run's log so far: the output
// file's, or, while the run is in the foreground, the one kept in memory.
func (t *Live) OutputTail(n int) string {
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
	tail := runlog.Tail(t.OutputFile, n)
	if t.Kind == task.KindLocalBash {
		tail = shelltask.RawTail(t.OutputFile, n)
	}
	if failed != nil {
		tail += fmt.Sprintf("\n… (the output file stopped taking the log: %v; the session's transcript has all of it)\n", failed)
	}
	return tail
}

// Snapshot returns the progress figures.
func (t *Live) Snapshot() (text string, tokens int64, toolUses int, lastTool string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.text, t.tokens, t.toolUses, t.lastTool
}

// SetFigures takes the run's text and tool uses from elsewhere (the
// record of a run on another node, a command's output) and reports
// whether the tool uses moved.
func (t *Live) SetFigures(text string, toolUses int) (moved bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	moved = toolUses != t.toolUses
	t.text, t.toolUses = text, toolUses
	return moved
}

// Finish decides the run's end: its result, status and the cause of its
// context's end, at at. An output file still open gets the closing line,
// status and report, and is closed; a log kept in memory goes (a
// foreground run's: its caller has the result). It reports whether the
// run ended in the background.
func (t *Live) Finish(res *runner.Result, status task.Status, cause error, at time.Time, report string) (background bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.final, t.status, t.cause, t.endedAt = res, status, cause, at
	background = t.phase.Background()
	t.phase = t.phase.End()
	if t.out != nil {
		fmt.Fprintf(t.out, "\n[%s]\n%s\n", status, report)
		t.out.Close()
		t.out = nil
	}
	t.early = strings.Builder{}
	return background
}

// SetRecorded keeps what the run's session record says now that this
// process has written its end there, so that those who want the figures
// (the subagent costs every result lists) need not read the record.
func (t *Live) SetRecorded(info session.Info) {
	r := recordedOf(info)
	t.mu.Lock()
	defer t.mu.Unlock()
	t.recorded = r
}

// Outcome reports how the run ended, once its end is decided (ok): its
// result and status.
func (t *Live) Outcome() (res *runner.Result, status task.Status, ok bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.final, t.status, t.phase.Ended()
}

// TimedOut reports why the run ended past its time limit, if it did: the
// limit that elapsed, which its result's error ("context deadline
// exceeded") does not name.
func (t *Live) TimedOut() (error, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.cause, t.status == task.StatusTimeout && t.cause != nil
}

// AsTask describes the run as a task record, for a run that has none (it
// ran in the foreground).
func (t *Live) AsTask() task.Task {
	t.mu.Lock()
	defer t.mu.Unlock()
	rec := task.Task{ID: t.ID, Kind: t.TaskKind(), Agent: t.AgentType, Name: t.Name, Description: t.Description, Status: t.status, OutputFile: t.OutputFile, Result: t.text}
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
