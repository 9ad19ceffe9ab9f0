package tui

import (
	"bytes"
	"context"
	"io"
	"iter"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/cadre-dev/cadre"
)

// TestRunHeadless runs the whole program on pipes, as a terminal would:
// a typed line reaches the conversation, Ctrl+C twice quits, and Run stops
// the conversation and returns with nothing left running (goleak).
func TestRunHeadless(t *testing.T) {
	conv := &fakeConv{sentCh: make(chan string, 1)}
	events := make(chan cadre.Event)
	stopped := make(chan string, 1)
	var stopOnce sync.Once
	seq := iter.Seq2[cadre.Event, error](func(yield func(cadre.Event, error) bool) {
		for e := range events {
			if !yield(e, nil) {
				return
			}
		}
	})
	inR, inW := io.Pipe()
	var out bytes.Buffer
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, Config{Conversation: conv, Approvals: cadre.NewApprovals(), Model: "m"}, Options{
			Events: seq,
			Stop: func() error {
				stopOnce.Do(func() { close(events); stopped <- "stop" })
				return nil
			},
			Close: func() error {
				stopOnce.Do(func() { close(events); stopped <- "close" })
				return nil
			},
			Input: inR, Output: &out,
			Program: []tea.ProgramOption{tea.WithWindowSize(80, 20), tea.WithEnvironment([]string{"TERM=xterm-256color"})},
		})
	}()
	events <- cadre.Event{Type: cadre.EventSystem, Subtype: cadre.SubtypeInit, Init: &cadre.InitInfo{Model: "scripted"}}
	if _, err := io.WriteString(inW, "hello\r"); err != nil {
		t.Fatal(err)
	}
	// The program reads keys in order: once the conversation got the
	// message, Ctrl+C twice quits.
	select {
	case got := <-conv.sentCh:
		if got != "hello" {
			t.Errorf("sent %q, want hello", got)
		}
	case <-ctx.Done():
		t.Fatal("the typed line never reached the conversation")
	}
	if _, err := io.WriteString(inW, "\x03\x03"); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
	case <-ctx.Done():
		t.Fatal("Run did not return after Ctrl+C twice")
	}
	inW.Close()
	// The conversation stays on the terminal once the alternate screen
	// is gone.
	const leaveAlt = "\x1b[?1049l"
	printed := out.String()
	if i := strings.LastIndex(printed, leaveAlt); i < 0 || !strings.Contains(printed[i:], "› hello") {
		t.Errorf("the conversation is not printed after leaving the alternate screen:\n%q", printed[max(0, len(printed)-300):])
	}
	// The turn had not ended: quitting stops everything.
	if how := <-stopped; how != "stop" {
		t.Errorf("quitting during a turn ended the conversation with %s, want stop", how)
	}
}

// Quitting with nothing running closes the conversation (a finished
// session), not stops it (a killed one).
func TestRunQuitIdleCloses(t *testing.T) {
	events := make(chan cadre.Event)
	ended := make(chan string, 1)
	var once sync.Once
	end := func(how string) func() error {
		return func() error {
			once.Do(func() { close(events); ended <- how })
			return nil
		}
	}
	inR, inW := io.Pipe()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, Config{Conversation: &fakeConv{}, Model: "m"}, Options{
			Events: func(yield func(cadre.Event, error) bool) {
				for e := range events {
					if !yield(e, nil) {
						return
					}
				}
			},
			Stop: end("stop"), Close: end("close"),
			Input: inR, Output: io.Discard,
			Program: []tea.ProgramOption{tea.WithWindowSize(80, 20)},
		})
	}()
	if _, err := io.WriteString(inW, "\x03\x03"); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
	case <-ctx.Done():
		t.Fatal("Run did not return after Ctrl+C twice")
	}
	inW.Close()
	if how := <-ended; how != "close" {
		t.Errorf("quitting idle ended the conversation with %s, want close", how)
	}
}
