package cli

import (
	"bytes"
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
	rt, err := cadre.New(ctx, opts)
	if err != nil {
		return err
	}
	defer rt.Close()
	for _, w := range rt.Warnings() {
		opts.Logger.Warn(w)
	}
	approvals := cadre.NewApprovals()
	conv, err := rt.Open(ctx, cadre.OpenRequest{
		Resume: f.resume, Continue: f.cont, SessionID: f.sdk.sessionID, Fork: f.sdk.forkSession, NoPersist: f.sdk.noPersist,
		Permission: approvals.Ask,
	})
	if err != nil {
		return err
	}
	if prompt != "" {
		if err := conv.Send(ctx, cadre.Message{Text: prompt}); err != nil {
			conv.Stop()
			return err
		}
	}
	err = tui.Run(ctx, tui.Config{
		Conversation: conv, Approvals: approvals,
		Model: opts.Model, Mode: opts.PermissionMode, Agents: rt.MentionableAgents(),
	}, tui.Options{Events: conv.Events(), Stop: conv.Stop, Input: stdin, Output: stdout})
	if !f.sdk.noPersist {
		fmt.Fprintf(stdout, "Resume this session with: cadre -r %s\n", conv.SessionID())
	}
	return err
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
	w.Write(h.buf.Bytes())
	h.buf.Reset()
}
