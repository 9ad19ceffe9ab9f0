package queue

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/cadre-dev/cadre/llm"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func texts(es []Entry) []string {
	var out []string
	for _, e := range es {
		out = append(out, e.Message.Text())
	}
	return out
}

func TestTakeOrdersByPriorityThenArrival(t *testing.T) {
	var q Queue
	push := func(p Priority, target, text string) {
		q.Push(Entry{Priority: p, Target: target, Message: llm.UserText(text)})
	}
	push(Later, "", "note 1")
	push(Next, "", "user 1")
	push(Later, "", "note 2")
	push(Now, "", "urgent")
	push(Next, "a1", "for the child")
	push(Next, "", "user 2")
	got := fmt.Sprint(texts(q.Take("")))
	if want := "[urgent user 1 user 2 note 1 note 2]"; got != want {
		t.Errorf("main took %s, want %s", got, want)
	}
	if q.Len("") != 0 || q.Len("a1") != 1 {
		t.Errorf("left: main %d, a1 %d", q.Len(""), q.Len("a1"))
	}
	if got := texts(q.Take("a1")); len(got) != 1 || got[0] != "for the child" {
		t.Errorf("a1 took %v", got)
	}
}

func TestWaitWakesOnItsOwnTargetOnly(t *testing.T) {
	var q Queue
	got := make(chan []Entry)
	go func() {
		es, _ := q.Wait(context.Background(), "a1", nil)
		got <- es
	}()
	q.Push(Entry{Target: "", Message: llm.UserText("main's")})
	q.Push(Entry{Target: "a1", Message: llm.UserText("mine")})
	select {
	case es := <-got:
		if len(es) != 1 || es[0].Message.Text() != "mine" {
			t.Errorf("got %v", texts(es))
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Wait did not wake")
	}
	if q.Len("") != 1 {
		t.Error("the other target's entry was taken")
	}
}

func TestWaitEndsOnContextOrStop(t *testing.T) {
	var q Queue
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if es, err := q.Wait(ctx, "", nil); !errors.Is(err, context.Canceled) || es != nil {
		t.Errorf("Wait = %v, %v", es, err)
	}
	stop := make(chan struct{})
	close(stop)
	if es, err := q.Wait(context.Background(), "", stop); err != nil || es != nil {
		t.Errorf("Wait = %v, %v", es, err)
	}
}

func TestConcurrentPushersLoseNothing(t *testing.T) {
	var q Queue
	var wg sync.WaitGroup
	for p := range 8 {
		wg.Go(func() {
			for i := range 100 {
				q.Push(Entry{Priority: Later, Message: llm.UserText(fmt.Sprint(p, i))})
			}
		})
	}
	total := 0
	done := make(chan struct{})
	go func() {
		defer close(done)
		for total < 800 {
			es, err := q.Wait(context.Background(), "", nil)
			if err != nil {
				t.Error(err)
				return
			}
			total += len(es)
		}
	}()
	wg.Wait()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatalf("took %d of 800", total)
	}
}

func TestWithdrawRemovesOnlyThatTasksNotifications(t *testing.T) {
	var q Queue
	q.Push(Entry{Mode: ModeNotification, TaskID: "t1", Message: llm.UserText("n1")})
	q.Push(Entry{Mode: ModeMessage, TaskID: "t1", Message: llm.UserText("m1")})
	q.Push(Entry{Mode: ModeNotification, TaskID: "t2", Message: llm.UserText("n2")})
	if !q.Withdraw("t1") {
		t.Fatal("nothing withdrawn")
	}
	if q.Withdraw("t1") {
		t.Error("withdrawn twice")
	}
	if got := fmt.Sprint(texts(q.Take(""))); got != "[m1 n2]" {
		t.Errorf("left %s", got)
	}
}

// A live conversation takes one prompt per turn, ahead of notifications,
// which are answered together; a turn in progress takes notifications at
// its loop boundaries but never a prompt.
func TestTakeTurnAndTakeInput(t *testing.T) {
	var q Queue
	push := func(p Priority, mode Mode, target, text string) {
		q.Push(Entry{Priority: p, Mode: mode, Target: target, Message: llm.UserText(text)})
	}
	push(Later, ModeNotification, "s1", "note 1")
	push(Next, ModePrompt, "s1", "user 1")
	push(Next, ModePrompt, "s2", "other conversation")
	push(Next, ModePrompt, "s1", "user 2")
	push(Later, ModeNotification, "s1", "note 2")

	if got := fmt.Sprint(texts(q.TakeInput("s1"))); got != "[note 1 note 2]" {
		t.Errorf("TakeInput took %s", got)
	}
	push(Later, ModeNotification, "s1", "note 3")
	for _, want := range []string{"[user 1]", "[user 2]", "[note 3]", "[]"} {
		if got := fmt.Sprint(texts(q.TakeTurn("s1"))); got != want {
			t.Errorf("TakeTurn took %s, want %s", got, want)
		}
	}
	if q.Len("s2") != 1 {
		t.Error("another target's prompt was taken")
	}
}

func TestChangedIsClosedByThePushAfterIt(t *testing.T) {
	var q Queue
	ch := q.Changed()
	select {
	case <-ch:
		t.Fatal("closed before any push")
	default:
	}
	q.Push(Entry{Target: "s1", Message: llm.UserText("x")})
	select {
	case <-ch:
	default:
		t.Fatal("still open after a push")
	}
}
