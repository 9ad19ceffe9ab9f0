package server

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

// streamEvents writes the run's events as Server-Sent Events: each event
// of the conversation as its stream-json line ("event: assistant",
// "data: {…}"), subagents' tagged with parent_tool_use_id as in
// stream-json; "event: approvals" with the pending requests each time they
// change; "event: end" once the run has ended, and the stream closes. The
// id of each is its index in the run's log, so a client that reconnects
// with Last-Event-ID (or ?after=) gets the events after it and nothing
// twice.
func (s *Server) streamEvents(w http.ResponseWriter, r *http.Request, rn *run) {
	next := 0
	last := r.Header.Get("Last-Event-ID")
	if last == "" {
		last = r.URL.Query().Get("after")
	}
	if last != "" {
		n, err := strconv.Atoi(strings.TrimSpace(last))
		if err != nil || n < 0 {
			fail(w, bad("Last-Event-ID %q: want the id of an event of this stream", last))
			return
		}
		next = n + 1
	}
	flusher, ok := w.(http.Flusher)
	if !ok {
		writeError(w, http.StatusInternalServerError, fmt.Errorf("this connection cannot stream"))
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	// The stream's retry delay for EventSource, and a first write so the
	// client knows it is connected.
	fmt.Fprint(w, "retry: 2000\n\n")
	flusher.Flush()
	for {
		recs, ended, changed := rn.since(next)
		for _, rec := range recs {
			if _, err := fmt.Fprintf(w, "id: %d\nevent: %s\ndata: %s\n\n", next, rec.name, rec.data); err != nil {
				return
			}
			next++
		}
		if ended {
			fmt.Fprintf(w, "event: end\ndata: %s\n\n", mustJSON(rn.info()))
			flusher.Flush()
			return
		}
		flusher.Flush()
		// Not the server's context: at shutdown the stream goes on until
		// the stopped run's last event and its end are written.
		select {
		case <-changed:
		case <-r.Context().Done():
			return
		}
	}
}
