package postgres

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// The channels cadre's triggers and writes notify on (0003_queue_notify.sql).
const (
	// taskChannel carries "<task id> <status>", followed by " stop" while
	// the record asks for a stop, for every change to a watched task's
	// record but a heartbeat alone (WatchTask), and for every change of
	// whether a record asks for a stop.
	taskChannel = "cadre_task"
	// queueChannel carries the agent id of every message pushed to an
	// agent's inbox.
	queueChannel = "cadre_queue"
)

// ListenerName is the application_name of a DB's listening connection, so
// an operator (or a test) can find it in pg_stat_activity.
const ListenerName = "cadre-listener"

// Reconnection backoff of the listener: the first retry comes quickly (a
// server restart or a terminated backend is usually over at once), then
// the wait doubles up to the most.
const (
	firstRetry = 50 * time.Millisecond
	mostRetry  = 5 * time.Second
)

// listener is a DB's one LISTEN connection, fanning notifications out to
// subscribers. It starts with the first subscription, so a command that
// watches nothing (cadre sessions, cadre tasks) opens no extra connection,
// and it lives until the DB closes. Its connection is its own, never a
// pool's: a LISTEN holds for the session that issued it.
type listener struct {
	connect func(ctx context.Context) (*pgx.Conn, error)
	log     *slog.Logger

	mu      sync.Mutex
	subs    map[topic]map[*subscription]struct{}
	started bool
	closed  bool
	cancel  context.CancelFunc
	done    chan struct{}
	// connected counts the connections that began listening, for tests.
	connected int
}

// topic is what a subscriber waits for: one id's notifications on one
// channel.
type topic struct{ channel, id string }

// subscription receives a value, coalesced, for each notification of its
// topic that match accepts (every one when match is nil) and after each
// (re)connection of the listener.
type subscription struct {
	ch    chan struct{}
	match func(payload string) bool
}

func (s *subscription) wake() {
	select {
	case s.ch <- struct{}{}:
	default: // one wake-up pending is enough: the subscriber re-reads state
	}
}

func newListener(connect func(context.Context) (*pgx.Conn, error), log *slog.Logger) *listener {
	return &listener{connect: connect, log: log, subs: map[topic]map[*subscription]struct{}{}}
}

// subscribe returns a channel that receives after each notification for id
// on channel, and after the listener (re)connects, when notifications may
// have been missed: the subscriber then reads the state again. stop ends
// the subscription and is safe to call more than once. On a closed
// listener the channel never receives. ctx ending stops it too.
func (l *listener) subscribe(ctx context.Context, channel, id string) (<-chan struct{}, func()) {
	return l.subscribeWhere(ctx, channel, id, nil)
}

// subscribeWhere is subscribe for the notifications whose payload match
// accepts (and the reconnections).
func (l *listener) subscribeWhere(ctx context.Context, channel, id string, match func(payload string) bool) (<-chan struct{}, func()) {
	sub := &subscription{ch: make(chan struct{}, 1), match: match}
	k := topic{channel, id}
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return sub.ch, func() {}
	}
	if l.subs[k] == nil {
		l.subs[k] = map[*subscription]struct{}{}
	}
	l.subs[k][sub] = struct{}{}
	if !l.started {
		l.started = true
		var runCtx context.Context
		runCtx, l.cancel = context.WithCancel(context.Background())
		l.done = make(chan struct{})
		go l.run(runCtx)
	}
	l.mu.Unlock()
	var once sync.Once
	unsubscribe := func() {
		once.Do(func() {
			l.mu.Lock()
			defer l.mu.Unlock()
			delete(l.subs[k], sub)
			if len(l.subs[k]) == 0 {
				delete(l.subs, k)
			}
		})
	}
	after := context.AfterFunc(ctx, unsubscribe)
	return sub.ch, func() {
		after()
		unsubscribe()
	}
}

// close stops the listener and waits for its goroutine; its subscribers
// hear nothing more. Closing twice is harmless.
func (l *listener) close() {
	l.mu.Lock()
	l.closed = true
	cancel, done := l.cancel, l.done
	l.mu.Unlock()
	if cancel != nil {
		cancel()
		<-done
	}
}

// run keeps a connection listening until ctx ends: when the connection
// drops it connects again, waiting longer after each failure in a row.
func (l *listener) run(ctx context.Context) {
	defer close(l.done)
	wait := time.Duration(0)
	for {
		conn, err := l.listen(ctx)
		if err == nil {
			// Anything notified while no connection listened is lost:
			// every subscriber reads its state again.
			l.wakeAll()
			began := time.Now()
			err = l.receive(ctx, conn)
			closeCtx, cancel := context.WithTimeout(context.Background(), time.Second)
			conn.Close(closeCtx)
			cancel()
			if time.Since(began) > mostRetry {
				wait = 0 // it was up for a while: this is a new outage
			}
		}
		if ctx.Err() != nil {
			return
		}
		wait = min(max(2*wait, firstRetry), mostRetry)
		l.log.Warn("PostgreSQL change listener lost its connection; reconnecting", "retry_in", wait, "err", err)
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
}

// listen connects and LISTENs on cadre's channels.
func (l *listener) listen(ctx context.Context) (*pgx.Conn, error) {
	conn, err := l.connect(ctx)
	if err != nil {
		return nil, oneLine{err}
	}
	for _, ch := range []string{taskChannel, queueChannel} {
		if _, err := conn.Exec(ctx, "LISTEN "+ch); err != nil {
			conn.Close(context.Background())
			return nil, fmt.Errorf("LISTEN %s: %w", ch, err)
		}
	}
	l.mu.Lock()
	l.connected++
	l.mu.Unlock()
	return conn, nil
}

// receive hands each notification to its topic's subscribers until the
// connection fails or ctx ends.
func (l *listener) receive(ctx context.Context, conn *pgx.Conn) error {
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return err
		}
		l.dispatch(n)
	}
}

func (l *listener) dispatch(n *pgconn.Notification) {
	id := n.Payload
	if n.Channel == taskChannel {
		id, _, _ = strings.Cut(n.Payload, " ")
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for sub := range l.subs[topic{n.Channel, id}] {
		if sub.match == nil || sub.match(n.Payload) {
			sub.wake()
		}
	}
}

// wake wakes the subscribers of id on channel, as a notification would.
func (l *listener) wake(channel, id string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for sub := range l.subs[topic{channel, id}] {
		sub.wake()
	}
}

// isClosed tells whether the listener was closed with its DB.
func (l *listener) isClosed() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.closed
}

func (l *listener) wakeAll() {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, subs := range l.subs {
		for sub := range subs {
			sub.wake()
		}
	}
}

// connections is how many times the listener has begun listening.
func (l *listener) connections() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.connected
}

// WatchTask returns a channel that receives soon after task taskID's
// record changes — through any writer, on any node — and also after the
// DB's listening connection was re-established, when a change may have
// been missed; the watcher then reads the record again. Heartbeats alone
// are not reported. stop ends the watch (so does ctx ending); it is safe
// to call more than once. Values are coalesced: one pending value may
// stand for several changes.
//
// The server announces only the changes of a watched record (and stop
// requests, migration 0012), so WatchTask marks the record watched before
// it returns: call it after the record is written and before reading it,
// and every change committed after that read is heard. Should the mark
// fail (the server gone past the retries), the watch wakes at once and
// the caller's poll, which every watcher keeps as its fallback, hears the
// rest.
func (db *DB) WatchTask(ctx context.Context, taskID string) (changed <-chan struct{}, stop func()) {
	// The mark comes first, so that the subscription is made as quickly
	// as WatchStop's: a change between the two is in the record the
	// watcher reads next.
	var failed error
	if !db.listen.isClosed() {
		failed = db.markWatched(ctx, taskID)
	}
	ch, stop := db.listen.subscribe(ctx, taskChannel, taskID)
	if failed != nil {
		db.log.WarnContext(ctx, "mark a task's record watched; its changes are heard by polling", "task_id", taskID, "err", failed)
		db.listen.wake(taskChannel, taskID)
	}
	return ch, stop
}

// markWatched makes the server announce every change of task id's record
// from now on. A record marked already is not written again.
func (db *DB) markWatched(ctx context.Context, id string) error {
	tag, err := db.exec(ctx, true, `UPDATE tasks SET watched = true WHERE id = $1 AND NOT watched`, id)
	if err == nil && tag.RowsAffected() > 0 {
		db.tasks.forget(id) // its version moved: the next write reads it first
	}
	return err
}

// WatchStop is WatchTask for the changes after which task taskID's record
// asks for a stop (and the reconnections): a run's heartbeat wakes for
// those, not for the changes of its own run.
func (db *DB) WatchStop(ctx context.Context, taskID string) (asked <-chan struct{}, stop func()) {
	return db.listen.subscribeWhere(ctx, taskChannel, taskID, func(payload string) bool {
		return strings.HasSuffix(payload, " stop")
	})
}
