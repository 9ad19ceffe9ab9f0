package tui

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"os"
	"sync"

	tea "charm.land/bubbletea/v2"
	"github.com/cadre-dev/cadre"
)

// Options are what Run needs beyond the model's Config.
type Options struct {
	// Events are the conversation's events (cadre.Conversation.Events).
	Events iter.Seq2[cadre.Event, error]
	// Stop ends the conversation when the TUI quits while something runs
	// (a turn, a subagent): everything stops. Close, if set, ends it when
	// the TUI quits with nothing running, as a finished session rather
	// than a killed one. Events must end after either.
	Stop, Close func() error
	// Input and Output are the terminal; nil means the process's.
	Input  io.Reader
	Output io.Writer
	// Program options added last (tests: tea.WithWindowSize…).
	Program []tea.ProgramOption
}

// Run runs the TUI until the user quits or the conversation ends; it
// stops the conversation and returns once everything it started has
// ended.
func Run(ctx context.Context, cfg Config, opts Options) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	m := New(ctx, cfg)
	// Bubble Tea's renderer wakes at its frame rate (60 a second) whether
	// or not the screen changed: ~1% of a core while idle. 30 a second
	// cut that by a third but delayed the first screen by two frames
	// (~17 ms), so the default stays (docs/performance.md).
	popts := []tea.ProgramOption{tea.WithContext(ctx)}
	if opts.Input != nil {
		popts = append(popts, tea.WithInput(opts.Input))
	}
	if opts.Output != nil {
		popts = append(popts, tea.WithOutput(opts.Output))
	}
	p := tea.NewProgram(m, append(popts, opts.Program...)...)
	var wg sync.WaitGroup
	wg.Go(func() {
		var err error
		for ev, e := range opts.Events {
			if e != nil {
				err = e
				break
			}
			p.Send(EventMsg{ev})
		}
		p.Send(EndedMsg{err})
	})
	if cfg.Approvals != nil {
		wg.Go(func() {
			for {
				changed := cfg.Approvals.Changed()
				p.Send(ApprovalsMsg{cfg.Approvals.Pending()})
				select {
				case <-changed:
				case <-ctx.Done():
					return
				}
			}
		})
	}
	_, err := p.Run()
	if err == nil {
		err = m.endErr
	}
	// The conversation drawn on the alternate screen would vanish with
	// it: it goes to the terminal's own screen and scrollback, as an
	// inline program leaves it.
	out := opts.Output
	if out == nil {
		out = os.Stdout
	}
	if t := m.Transcript(); t != "" {
		if _, werr := fmt.Fprintln(out, t); werr != nil && err == nil {
			err = fmt.Errorf("print the conversation: %w", werr)
		}
	}
	cancel()
	m.closeScreens()
	end := opts.Stop
	if opts.Close != nil && m.idle() {
		end = opts.Close
	}
	stopErr := end()
	wg.Wait()
	if errors.Is(err, tea.ErrProgramKilled) && ctx.Err() != nil {
		err = nil // ended by ctx (a signal): not a failure of the TUI
	}
	return errors.Join(err, stopErr)
}
