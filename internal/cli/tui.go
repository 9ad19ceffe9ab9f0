package cli

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"io"
	"sync"

	"github.com/cadre-dev/cadre"
	"github.com/cadre-dev/cadre/internal/tui"
)

// runTUI opens the conversation of f and runs the TUI over it, with
// prompt, if any, as its first message. Permission requests go to the
// TUI's approval prompt, from the main agent and every subagent.
func runTUI(ctx context.Context, f runFlags, opts cadre.Options, prompt string, stdin io.Reader, stdout io.Writer) error {
	// The answer streams into the transcript as it is written.
	opts.IncludePartialMessages = true
	// An untrusted project is asked about once, before the screen is
	// taken, with the list cadre trust shows.
	if w, err := cadre.AssessWorkspace(opts); err == nil && !w.Trusted {
		showTrust(stdout, w)
		ok, err := confirm(stdin, stdout, "Trust this project and enable all of the above? [y/N] (no: its files may only narrow) ")
		if err != nil {
			return err
		}
		if ok {
			if err := cadre.TrustWorkspace(opts, w); err != nil {
				return err
			}
		}
	}
	rt, err := cadre.New(ctx, opts)
	if err != nil {
		return err
	}
	defer rt.Close()
	for _, w := range rt.Warnings() {
		opts.Logger.Warn(w)
	}
	approvals := cadre.NewApprovals()
	req := cadre.OpenRequest{
		Resume: f.resume, Continue: f.cont, SessionID: f.sdk.sessionID, Fork: f.sdk.forkSession, NoPersist: f.sdk.noPersist,
	}
	// /clear and /resume end the program with the next conversation to
	// open; the loop opens it and runs the TUI again.
	for {
		req.Permission = approvals.Ask
		next, err := runConversation(ctx, rt, req, approvals, prompt, opts, stdin, stdout)
		if err != nil || next == nil {
			return err
		}
		req, prompt = *next, ""
	}
}

// runConversation opens the conversation req asks for and runs the TUI
// over it until it quits; it returns the conversation to open next, if
// the user asked for one.
func runConversation(ctx context.Context, rt *cadre.Runtime, req cadre.OpenRequest, approvals *cadre.Approvals, prompt string, opts cadre.Options, stdin io.Reader, stdout io.Writer) (*cadre.OpenRequest, error) {
	conv, err := rt.Open(ctx, req)
	if err != nil {
		return nil, err
	}
	var history []cadre.TranscriptEntry
	if req.Resume != "" || req.Continue {
		id := req.Resume
		if id == "" || !req.Fork {
			id = conv.SessionID()
		}
		if _, entries, err := rt.Session(ctx, id); err == nil {
			history = entries
		} else {
			opts.Logger.Warn("show the resumed session's transcript", "session", id, "err", err)
		}
	}
	if prompt != "" {
		if err := conv.Send(ctx, cadre.Message{Text: prompt}); err != nil {
			conv.Stop()
			return nil, err
		}
	}
	var (
		mu   sync.Mutex
		next *cadre.OpenRequest
	)
	err = tui.Run(ctx, tui.Config{
		Conversation: conv, Approvals: approvals, History: history, Sent: prompt, Runtime: rt,
		Model: cmp.Or(opts.Model, conv.Model()), Mode: opts.PermissionMode, Agents: rt.MentionableAgents(), Cwd: rt.Cwd(),
		Reopen: func(r cadre.OpenRequest) {
			mu.Lock()
			defer mu.Unlock()
			next = &r
		},
	}, tui.Options{Events: conv.Events(), Stop: conv.Stop, Close: conv.Close, Input: stdin, Output: stdout})
	mu.Lock()
	defer mu.Unlock()
	if next == nil && !req.NoPersist {
		fmt.Fprintf(stdout, "Resume this session with: cadre -r %s\n", conv.SessionID())
	}
	return next, err
}

// heldLog keeps log lines written while the TUI owns the screen.
type heldLog struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (h *heldLog) Write(p []byte) (int, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.buf.Write(p)
}

// flush writes what was held to w.
func (h *heldLog) flush(w io.Writer) {
	h.mu.Lock()
	defer h.mu.Unlock()
	_, _ = w.Write(h.buf.Bytes()) // standard error, after the TUI: nowhere else to say it
	h.buf.Reset()
}
