package subagent

import (
	"context"
	"os"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/cadre-dev/cadre/internal/config"
	"github.com/cadre-dev/cadre/internal/task"
	"github.com/cadre-dev/cadre/llm"
)

// launchAndWait starts a background child and waits for its notification.
func launchAndWait(t *testing.T, h *harness, c Caller, prompt string) (id, notification string) {
	t.Helper()
	res := h.mustCall(c, "toolu_bg", AgentInput{Description: "bg", Prompt: prompt, RunInBackground: true})
	meta, _ := res.Meta.(map[string]any)
	id, _ = meta["agentId"].(string)
	if id == "" {
		t.Fatalf("no agentId in %v", res.Meta)
	}
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	for {
		entries, err := h.svc.cfg.Queue.Wait(ctx, "", nil)
		if err != nil {
			t.Fatalf("no notification: %v", err)
		}
		for _, e := range entries {
			if e.TaskID == id {
				return id, e.Message.Text()
			}
		}
	}
}

func TestSweepArchivesAfterTheDelay(t *testing.T) {
	h := newHarness(t, setup{subagents: config.Subagents{ArchiveAfterMinutes: 30}})
	id, _ := launchAndWait(t, h, h.mainCaller(), "work")
	h.group.Wait() // the run is over, not only notified: Sweep skips live runs
	info, err := h.mem.GetSession(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	transcript := info.TranscriptPath
	rec, _ := h.svc.cfg.Tasks.GetTask(context.Background(), id)
	// 29 minutes after it finished: too early.
	if n, err := h.svc.Sweep(context.Background(), rec.Finished.Add(29*time.Minute)); err != nil || n != 0 {
		t.Fatalf("early sweep archived %d (%v)", n, err)
	}
	if _, err := os.Stat(transcript); err != nil {
		t.Fatalf("transcript gone early: %v", err)
	}
	n, err := h.svc.Sweep(context.Background(), rec.Finished.Add(31*time.Minute))
	if err != nil || n != 1 {
		t.Fatalf("sweep archived %d (%v), want 1", n, err)
	}
	info, _ = h.mem.GetSession(context.Background(), id)
	if !strings.Contains(info.TranscriptPath, ".deleted.") {
		t.Errorf("index points at %s", info.TranscriptPath)
	}
	if _, err := os.Stat(info.TranscriptPath); err != nil {
		t.Errorf("archived transcript not kept on disk: %v", err)
	}
	if _, err := os.Stat(transcript); !os.IsNotExist(err) {
		t.Errorf("old transcript still there: %v", err)
	}
	// A second sweep leaves it alone.
	if n, _ := h.svc.Sweep(context.Background(), rec.Finished.Add(time.Hour)); n != 0 {
		t.Errorf("archived again: %d", n)
	}
}

func TestCleanupDeleteArchivesAtOnce(t *testing.T) {
	h := newHarness(t, setup{subagents: config.Subagents{Cleanup: "delete"}})
	id, _ := launchAndWait(t, h, h.mainCaller(), "work")
	// Archiving is the last thing the run's goroutine does, after the
	// notification: once the group's goroutines are done, it has happened.
	h.group.Wait()
	info, _ := h.mem.GetSession(context.Background(), id)
	if !strings.Contains(info.TranscriptPath, ".deleted.") {
		t.Fatalf("not archived: %s", info.TranscriptPath)
	}
}

func TestAnnounceSummarize(t *testing.T) {
	for _, tc := range []struct {
		name, reply string
		want        []string
		skip        bool
	}{
		{"report", "REPORT: all good", []string{"Status: success", "Result: REPORT: all good", "Notes: none", "session key agent:general-purpose:subagent:"}, false},
		{"skip", "ANNOUNCE_SKIP", nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, setup{
				subagents: config.Subagents{Announce: "summarize"},
				script: func(_ context.Context, _ string, req *llm.Request) (*llm.Response, error) {
					if strings.Contains(req.Messages[len(req.Messages)-1].Text(), "ANNOUNCE_SKIP") {
						return reply(tc.reply), nil
					}
					return reply("raw work output"), nil
				},
			})
			c := h.mainCaller()
			res := h.mustCall(c, "toolu_bg", AgentInput{Description: "bg", Prompt: "work", RunInBackground: true})
			id := res.Meta.(map[string]any)["agentId"].(string)
			lt := h.svc.live(id)
			if lt != nil {
				select {
				case <-lt.Done():
				case <-time.After(waitFor):
					t.Fatal("run did not end")
				}
			}
			entries := h.svc.cfg.Queue.Take("")
			if tc.skip {
				if len(entries) != 0 {
					t.Fatalf("ANNOUNCE_SKIP still posted %d entries", len(entries))
				}
				rec, _ := h.svc.cfg.Tasks.GetTask(context.Background(), id)
				if rec.Status != task.StatusCompleted || !rec.Notified {
					t.Errorf("record %+v", rec)
				}
				return
			}
			if len(entries) != 1 {
				t.Fatalf("%d notifications", len(entries))
			}
			text := entries[0].Message.Text()
			for _, w := range tc.want {
				if !strings.Contains(text, w) {
					t.Errorf("notification lacks %q:\n%s", w, text)
				}
			}
			if strings.Contains(text, "raw work output") {
				t.Errorf("raw output posted instead of the announcement:\n%s", text)
			}
		})
	}
}

// TestSweepArchivesForegroundChildren (S-S3): a child that ran in the
// foreground has no task record, yet its session is archived like a
// background child's, archiveAfterMinutes after it ended; a running one,
// and the main session, are left alone.
func TestSweepArchivesForegroundChildren(t *testing.T) {
	synctest.Test(t, testSweepArchivesForegroundChildren)
}

func testSweepArchivesForegroundChildren(t *testing.T) {
	h := newHarness(t, setup{subagents: config.Subagents{ArchiveAfterMinutes: 30}})
	c := h.mainCaller()
	res := h.mustCall(c, "toolu_fg", AgentInput{Description: "fg", Prompt: "work"})
	if res.IsError {
		t.Fatalf("spawn failed: %s", resultText(res))
	}
	id := childID(t, res)
	ctx := context.Background()
	info, err := h.mem.GetSession(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	transcript := info.TranscriptPath
	if n, err := h.svc.Sweep(ctx, info.Updated.Add(29*time.Minute)); err != nil || n != 0 {
		t.Fatalf("early sweep archived %d (%v)", n, err)
	}
	n, err := h.svc.Sweep(ctx, info.Updated.Add(31*time.Minute))
	if err != nil || n != 1 {
		t.Fatalf("sweep archived %d (%v), want the foreground child", n, err)
	}
	info, _ = h.mem.GetSession(ctx, id)
	if !strings.Contains(info.TranscriptPath, ".deleted.") {
		t.Errorf("index points at %s, want the archived transcript", info.TranscriptPath)
	}
	if _, err := os.Stat(info.TranscriptPath); err != nil {
		t.Errorf("archived transcript not kept on disk: %v", err)
	}
	if _, err := os.Stat(transcript); !os.IsNotExist(err) {
		t.Errorf("old transcript still there: %v", err)
	}
	if n, _ := h.svc.Sweep(ctx, info.Updated.Add(time.Hour)); n != 0 {
		t.Errorf("archived again: %d", n)
	}
	if main, _ := h.mem.GetSession(ctx, h.mainID); strings.Contains(main.TranscriptPath, ".deleted.") {
		t.Errorf("the main session was archived: %s", main.TranscriptPath)
	}
}
