package event

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestBusDeliversEverythingInOrderToEachSubscriber(t *testing.T) {
	var b Bus
	all := b.Subscribe(nil)
	odd := b.Subscribe(func(e Event) bool { return e.UUID[len(e.UUID)-1]%2 == 1 })
	const n = 1000
	// Publish from one goroutine while nobody reads: publishing must never
	// block, and nothing may be dropped.
	for i := range n {
		b.Publish(Event{UUID: fmt.Sprint(i)})
	}
	all.Close()
	odd.Close()
	got := 0
	for e := range all.Events(context.Background()) {
		if e.UUID != fmt.Sprint(got) {
			t.Fatalf("event %d is %s", got, e.UUID)
		}
		got++
	}
	if got != n {
		t.Errorf("all got %d events, want %d", got, n)
	}
	odds := 0
	for range odd.Events(context.Background()) {
		odds++
	}
	if odds != n/2 {
		t.Errorf("odd got %d, want %d", odds, n/2)
	}
}

func TestBusConcurrentPublishersAndReader(t *testing.T) {
	var b Bus
	sub := b.Subscribe(nil)
	const pubs, each = 8, 200
	var wg sync.WaitGroup
	for p := range pubs {
		wg.Go(func() {
			for i := range each {
				b.Publish(Event{SessionID: fmt.Sprint(p), UUID: fmt.Sprint(i)})
			}
		})
	}
	done := make(chan map[string]int)
	go func() {
		last := map[string]int{}
		count := map[string]int{}
		for e := range sub.Events(context.Background()) {
			var i int
			fmt.Sscan(e.UUID, &i)
			if prev, ok := last[e.SessionID]; ok && i != prev+1 {
				t.Errorf("publisher %s: %d after %d", e.SessionID, i, prev)
			}
			last[e.SessionID] = i
			count[e.SessionID]++
		}
		done <- count
	}()
	wg.Wait()
	sub.Close()
	select {
	case count := <-done:
		for p := range pubs {
			if count[fmt.Sprint(p)] != each {
				t.Errorf("publisher %d: %d events, want %d", p, count[fmt.Sprint(p)], each)
			}
		}
	case <-time.After(10 * time.Second):
		t.Fatal("reader did not finish")
	}
}

func TestEventsStopsOnContext(t *testing.T) {
	var b Bus
	sub := b.Subscribe(nil)
	defer sub.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for range sub.Events(ctx) {
		t.Fatal("no events were published")
	}
}

func TestClosedSubscriptionGetsNoMore(t *testing.T) {
	var b Bus
	sub := b.Subscribe(nil)
	b.Publish(Event{UUID: "1"})
	sub.Close()
	b.Publish(Event{UUID: "2"})
	var got []string
	for e := range sub.Events(context.Background()) {
		got = append(got, e.UUID)
	}
	if len(got) != 1 || got[0] != "1" {
		t.Errorf("got %v", got)
	}
}

// BenchmarkPublishDrained publishes to one subscriber that a reader drains
// as it goes, as a run's output does: B/op is what the queue allocates
// per event once its batches are reused.
func BenchmarkPublishDrained(b *testing.B) {
	var bus Bus
	sub := bus.Subscribe(nil)
	var wg sync.WaitGroup
	wg.Go(func() {
		for range sub.Events(context.Background()) {
		}
	})
	b.ReportAllocs()
	for b.Loop() {
		bus.Publish(Event{UUID: "u"})
	}
	sub.Close()
	wg.Wait()
}
