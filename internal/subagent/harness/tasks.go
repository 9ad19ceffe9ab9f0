package harness

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/cadre-dev/cadre/internal/subagent"
	"github.com/cadre-dev/cadre/internal/subagent/deliver"
	"github.com/cadre-dev/cadre/internal/subagent/prompt"
	"github.com/cadre-dev/cadre/internal/subagent/shell"
	"github.com/cadre-dev/cadre/internal/task"
	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/tool"
)

// The harness profile's task tools: task_output, task_cancel, task_list
// and wait_async_results.

// TaskOutputInput is task_output's input.
type TaskOutputInput struct {
	TaskID  string `json:"task_id" jsonschema:"The task_id (task_<uuid>)"`
	Block   *bool  `json:"block,omitempty" jsonschema:"Wait for the task to finish (default true); false only checks its status"`
	Timeout *int   `json:"timeout,omitempty" jsonschema:"How long to wait, in milliseconds (default 30000, at most 600000)"`
}

// TaskCancelInput is task_cancel's input.
type TaskCancelInput struct {
	TaskID string `json:"task_id" jsonschema:"The task_id of the task to cancel"`
}

// TaskListInput is task_list's input, as Claude Code's TaskList's.
type TaskListInput struct {
	StatusFilter string `json:"status_filter,omitempty" jsonschema:"running, completed, failed, cancelled or all (default all)"`
}

// WaitAsyncResultsInput is wait_async_results' input.
type WaitAsyncResultsInput struct {
	TaskIDs        []string `json:"task_ids" jsonschema:"The task_ids to wait for"`
	WaitAll        *bool    `json:"wait_all,omitempty" jsonschema:"Wait for every task (default true); false returns when the first one finishes"`
	TimeoutSeconds *int     `json:"timeout_seconds,omitempty" jsonschema:"Seconds to wait at most (default 30, at most 600); 0 only reports"`
}

// harnessStatus is a task status in the harness's words: killed is
// cancelled there.
func harnessStatus(st task.Status) string {
	if st == task.StatusKilled {
		return "cancelled"
	}
	return string(st)
}

// taskReport describes a task in the harness form: the agent's three lines,
// task_id, status, then its result, error or output so far — or, for an
// ended task whose result this report must not show (deliver.go), the note
// that says where it went.
func (h *harnessProfile) taskReport(ctx context.Context, rec task.Task, r *deliver.Reading, d deliver.Delivery) string {
	id := rec.ID
	if rec.Kind == task.KindLocalBash {
		return shell.Report(rec, harnessTaskID(rec.ID), harnessStatus(rec.Status))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "agent_key: %s\nagent_id: %s\nsession_id: %s\ntask_id: %s\n", harnessKey(rec.Agent, id), rec.Agent, harnessSessionID(id), harnessTaskID(id))
	if rec.Name != "" {
		fmt.Fprintf(&b, "label: %s\n", rec.Name)
	}
	fmt.Fprintf(&b, "status: %s", harnessStatus(rec.Status))
	result := strings.TrimSpace(rec.Result)
	switch {
	case rec.Status.Terminal() && d != deliver.Show:
		fmt.Fprintf(&b, "\nnote: %s", d.Note())
	case rec.Status == task.StatusCompleted:
		if result == "" {
			result = "(The agent finished without a final message.)"
		}
		fmt.Fprintf(&b, "\nreply: %s", prompt.Escape(result))
	case rec.Status.Terminal():
		errText := prompt.OneLine(rec.Error)
		if errText == "" {
			errText = "the task " + harnessStatus(rec.Status)
		}
		fmt.Fprintf(&b, "\nerror: %s", errText)
		if result != "" {
			fmt.Fprintf(&b, "\nreply: %s", prompt.Escape(result))
		}
	default:
		if out := strings.TrimSpace(r.OutputTail(ctx, 8000)); out != "" {
			fmt.Fprintf(&b, "\noutput so far:\n%s", prompt.Escape(out))
		}
	}
	return b.String()
}

// read is s.read for an id in any harness form, of the caller's tree.
func (h *harnessProfile) read(ctx context.Context, ref string) (*deliver.Reading, error) {
	id, _, _ := harnessRef(ref)
	if err := h.s.svc.InTree(ctx, h.c, id); err != nil {
		return nil, err
	}
	return h.s.svc.Read(ctx, id)
}

func (h *harnessProfile) taskOutput(ctx context.Context, _ tool.Env, in TaskOutputInput) (tool.Result, error) {
	r, err := h.read(ctx, in.TaskID)
	if err != nil {
		return harnessErr("%v", err), nil
	}
	defer r.Close()
	block := in.Block == nil || *in.Block
	wait := subagent.DefaultOutputWait
	if in.Timeout != nil {
		if *in.Timeout < 0 || time.Duration(*in.Timeout)*time.Millisecond > subagent.MaxOutputWait {
			return harnessErr("timeout must be between 0 and %d ms", subagent.MaxOutputWait.Milliseconds()), nil
		}
		wait = time.Duration(*in.Timeout) * time.Millisecond
	}
	if block {
		if err := r.Await(ctx, wait); err != nil {
			if ctx.Err() != nil {
				return tool.Result{}, err
			}
			return harnessErr("%v", err), nil
		}
	}
	d := r.Claim(ctx)
	rec := r.Record()
	return tool.Result{
		Content: []llm.Block{llm.Text(h.taskReport(ctx, rec, r, d))},
		Meta:    map[string]any{"task_id": harnessTaskID(rec.ID), "status": harnessStatus(rec.Status), "retrieval_status": deliver.Retrieval(rec.Status)},
	}, nil
}

func (h *harnessProfile) taskCancel(ctx context.Context, _ tool.Env, in TaskCancelInput) (tool.Result, error) {
	id, _, _ := harnessRef(in.TaskID)
	if err := h.s.svc.InTree(ctx, h.c, id); err != nil {
		return tool.Errorf("Error: %v", err), nil
	}
	local := h.s.svc.Running(id) != nil
	msg, err := h.s.svc.Stop(ctx, id)
	if err != nil {
		if ctx.Err() != nil {
			return tool.Result{}, err
		}
		return harnessErr("%v", err), nil
	}
	status := "cancelled"
	if !local {
		// It runs in another process, which stops it when it sees the request.
		status = "cancel_requested"
	}
	return tool.Text(fmt.Sprintf("task_id: %s\nstatus: %s\nnote: %s", harnessTaskID(id), status, msg)), nil
}

func (h *harnessProfile) taskList(ctx context.Context, filter string) (tool.Result, error) {
	statuses, err := subagent.StatusFilter(filter)
	if err != nil {
		return harnessErr("%v", err), nil
	}
	recs, err := h.s.svc.List(ctx, h.c, statuses)
	if err != nil {
		return tool.Result{}, err
	}
	if len(recs) == 0 {
		return tool.Text("No tasks."), nil
	}
	var b strings.Builder
	now := h.s.svc.Config().Now()
	for _, t := range recs {
		fmt.Fprintf(&b, "%s  %s  agent_id: %s", harnessTaskID(t.ID), harnessStatus(t.Status), t.Agent)
		if t.Name != "" {
			fmt.Fprintf(&b, "  label: %s", t.Name)
		}
		fmt.Fprintf(&b, "  %q  started %s ago", t.Description, now.Sub(t.Created).Round(time.Second))
		if t.Usage.Total() > 0 {
			fmt.Fprintf(&b, "  %d tokens", t.Usage.Total())
		}
		b.WriteString("\n")
	}
	return tool.Text(strings.TrimSpace(b.String())), nil
}

// waitAsync waits for several tasks: all of them, or the first to end, up
// to a timeout; then reports each one (S-T2's semantics, per task).
func (h *harnessProfile) waitAsync(ctx context.Context, _ tool.Env, in WaitAsyncResultsInput) (tool.Result, error) {
	var reads []*deliver.Reading
	defer func() {
		for _, r := range reads {
			r.Close()
		}
	}()
	seen := map[string]bool{}
	for _, ref := range in.TaskIDs {
		// Each run is watched until reported: the runs hand their ends
		// to this call.
		r, err := h.read(ctx, ref)
		if err != nil {
			return harnessErr("%v", err), nil
		}
		if seen[r.ID()] {
			r.Close()
			continue
		}
		seen[r.ID()] = true
		reads = append(reads, r)
	}
	switch {
	case len(reads) == 0:
		return harnessErr("task_ids is empty: list the task_ids to wait for"), nil
	case len(reads) > harnessMaxWaitIDs:
		return harnessErr("too many task_ids (%d): at most %d at once", len(reads), harnessMaxWaitIDs), nil
	}
	waitAll := in.WaitAll == nil || *in.WaitAll
	timeout, err := harnessTimeout(in.TimeoutSeconds)
	if err != nil {
		return harnessErr("%v", err), nil
	}
	need := len(reads)
	if !waitAll {
		need = 1
	}
	finished := 0
	for _, r := range reads {
		if r.Ended() {
			finished++
		}
	}
	if finished < need && timeout > 0 {
		d := time.Duration(timeout) * time.Second
		wctx, cancel := context.WithCancel(ctx)
		ended := make(chan bool, len(reads)) // one per waiter: did its task end?
		var wg sync.WaitGroup
		waiting := 0
		for _, r := range reads {
			if r.Ended() {
				continue
			}
			waiting++
			wg.Go(func() {
				err := r.Await(wctx, d)
				ended <- err == nil && r.Ended()
			})
		}
		timer := time.NewTimer(d)
	wait:
		for finished < need && waiting > 0 {
			select {
			case ok := <-ended:
				waiting--
				if ok {
					finished++
				}
			case <-timer.C:
				break wait
			case <-ctx.Done():
				break wait
			}
		}
		timer.Stop()
		cancel()
		wg.Wait()
		if ctx.Err() != nil {
			return tool.Result{}, context.Cause(ctx)
		}
	}
	// Report everything as it stands now, fresh.
	finished = 0
	reports := make([]string, len(reads))
	statuses := map[string]string{}
	for i, r := range reads {
		_ = r.Refresh(ctx) // on an error, the last reading stands
		d := r.Claim(ctx)
		rec := r.Record()
		if r.Ended() {
			finished++
		}
		reports[i] = h.taskReport(ctx, rec, r, d)
		statuses[harnessTaskID(rec.ID)] = harnessStatus(rec.Status)
	}
	mode := "all"
	if !waitAll {
		mode = "first"
	}
	head := fmt.Sprintf("wait: %s\nfinished: %d of %d\ntimed_out: %t", mode, finished, len(reads), finished < need)
	return tool.Result{
		Content: []llm.Block{llm.Text(head + "\n\n" + strings.Join(reports, "\n---\n"))},
		Meta:    map[string]any{"finished": finished, "total": len(reads), "timed_out": finished < need, "statuses": statuses},
	}, nil
}
